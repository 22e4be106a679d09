"""Which device kernels did each extern call's work, on a device timeline (pure; no torch).

An extern op's calls need not run one kernel: cuBLAS picks a kernel per shape (a model's
backward ``aten::mm`` calls ran four different GEMM kernels on an H200), and one call may
launch several (a split-K GEMM and the reduction after it; an attention backward's kernel and
the small sums and copies beside it). Each call of the compiled module is found in the trace as
the ``cpu_op`` event that launched its kernels, the n-th call of an op in an iteration being the
op's n-th extern call in ``call()``; its work then goes to the kernel that took the most of that
call's time (its main kernel), and the other kernels it launched are its kernels too: the
roofline holds the call's work against the time of all of them (``call_launches``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import TraceError
from .kernel_events import device_kernel_events, find_markers
from .timeline import launch_op_events
from .trace import DEVICE_CATEGORIES, Event, Trace


@dataclass
class CallLaunches:
    """The device kernels one extern call launched, by name: per iteration of the trace, the
    sum of their durations (µs), and their launches over all iterations."""

    us: dict[str, list[float]] = field(default_factory=dict)
    launches: dict[str, int] = field(default_factory=dict)

    @property
    def main(self) -> str:
        """The kernel that took the most of the call's time (the first name of a tie)."""
        took = {name: sum(us) for name, us in self.us.items()}
        return max(sorted(took), key=lambda n: took[n])


def call_kernels(trace: Trace, ops: list[str], one_call: bool = False) -> dict[int, str]:
    """Extern call index -> the name of the device kernel that took most of its time, for the
    calls ``ops`` (each extern call's profiler op, in ``call()`` order) whose op could be
    followed call by call: in every iteration as many distinct launching events of the op as
    the module has calls of it, at distinct times. An op that cannot be followed (kernels
    replayed from a CUDA graph share one launch; a trace whose times were zeroed) is absent,
    and so is every op of a trace that cannot be read so (no iteration markers). ``one_call``:
    the trace is one call of the module without markers, the run launched kernel by kernel
    beside a graph's CUDA-graph replays (whose kernels it launched are the ones replayed)."""
    return {i: c.main for i, c in call_launches(trace, ops, one_call).items()}


def call_launches(trace: Trace, ops: list[str], one_call: bool = False) -> dict[int, CallLaunches]:
    """Extern call index -> every device kernel it launched (``CallLaunches``), for the calls
    ``call_kernels`` follows; each device event is one call's at most (its innermost op that
    is one of ``ops``)."""
    try:
        return _call_launches(trace, ops, one_call)
    except TraceError:
        return {}


def _call_launches(trace: Trace, ops: list[str], one_call: bool) -> dict[int, CallLaunches]:
    launched = launch_op_events(trace)
    if one_call:
        per_iter = [[(i, ev) for i, ev in enumerate(trace.events) if ev.cat in DEVICE_CATEGORIES]]
    else:
        per_iter = device_kernel_events(trace, find_markers(trace))
    at: dict[str, list[int]] = {}
    for i, op in enumerate(ops):
        at.setdefault(op, []).append(i)
    out = {i: CallLaunches() for i in range(len(ops))}
    lost: set[str] = set()
    for it, evs in enumerate(per_iter):
        by_call: dict[str, dict[int, tuple[Event, list[Event]]]] = {}
        for i, ev in evs:
            op = next((o for o in launched.get(i, ()) if o.name in at), None)
            if op is not None:
                by_call.setdefault(op.name, {}).setdefault(id(op), (op, []))[1].append(ev)
        for name in at:
            calls = sorted(by_call.get(name, {}).values(), key=lambda c: c[0].ts)
            if len(calls) != len(at[name]) or len({c[0].ts for c in calls}) != len(calls):
                lost.add(name)
                continue
            for index, (_, kernels) in zip(at[name], calls, strict=True):
                mine = out[index]
                for ev in kernels:
                    mine.us.setdefault(ev.name, [0.0] * len(per_iter))[it] += ev.dur
                    mine.launches[ev.name] = mine.launches.get(ev.name, 0) + 1
    return {i: c for i, c in out.items() if c.us and ops[i] not in lost}
