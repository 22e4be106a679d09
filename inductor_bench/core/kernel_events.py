"""Which trace events are each iteration's kernels: its markers, host ops and device events."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from .columns import ITERATION_MARKER
from .errors import TraceError
from .left_out import refuse_undurated
from .modparse import ModuleInfo
from .timeline import launch_times
from .trace import CPU_OP, DEVICE_CATEGORIES, MODULE_CALL, USER_ANNOTATION, Event, Trace


def find_markers(trace: Trace) -> list[Event]:
    """The iteration markers on the CPU timeline (not their GPU-timeline copies), by time."""
    markers = [e for e in trace.events if e.name == ITERATION_MARKER and e.cat == USER_ANNOTATION]
    if not markers:
        raise TraceError(
            f"{trace.path or 'trace'}: no {ITERATION_MARKER} markers: the trace was not recorded by "
            "the inductor-bench profiling worker (or the markers were filtered out)"
        )
    return sorted(markers, key=lambda e: e.ts)


def cpu_kernel_events(trace: Trace, markers: list[Event]) -> list[list[tuple[int, Event]]]:
    """Per marker: (index, event) of the top-level ``cpu_op`` events inside it on its thread."""
    threads: dict[tuple[object, object], list[tuple[int, Event]]] = {}
    for i, ev in enumerate(trace.events):
        # torch >= 2.9 wraps each call in "## Call CompiledFxGraph <key> ##": seen through
        if ev.cat == CPU_OP and not MODULE_CALL.match(ev.name):
            threads.setdefault((ev.pid, ev.tid), []).append((i, ev))
    for evs in threads.values():
        evs.sort(key=lambda ie: (ie[1].ts, -ie[1].dur))
    starts = {key: [ev.ts for _, ev in evs] for key, evs in threads.items()}
    out = []
    for m in markers:
        evs = threads.get((m.pid, m.tid), [])
        inside = _starting_in(evs, starts.get((m.pid, m.tid), []), m)
        out.append(_top_level(inside))
    return out


def device_kernel_events(trace: Trace, markers: list[Event]) -> list[list[tuple[int, Event]]]:
    """Per marker: (index, event) of the device events it launched.

    A device event belongs to the marker whose span holds its launch (the ``cuda_runtime`` /
    ``cuda_driver`` call with the same ``args.correlation``), as in the pipelined analysis,
    rather than the one its own start falls in: the two agree where the device clock,
    converted to the host's by the profiler, is right (on an H200 with torch 2.11 each kernel
    started 5.6-404 µs after its launch), and the launch alone does not depend on that
    conversion. Only events with no launch in the trace fall back to their start.
    """
    starts = [m.ts for m in markers]
    launch_ts = launch_times(trace)
    out: list[list[tuple[int, Event]]] = [[] for _ in markers]
    unlaunched = []
    for i, ev in enumerate(trace.events):
        if ev.cat not in DEVICE_CATEGORIES:
            continue
        ts = launch_ts.get(ev.args.get("correlation"))
        if ts is None:
            unlaunched.append((i, ev))
            continue
        j = bisect_right(starts, ts) - 1
        if j >= 0 and ts <= markers[j].end:
            out[j].append((i, ev))
    unlaunched.sort(key=lambda ie: ie[1].ts)
    by_start = [ev.ts for _, ev in unlaunched]
    for j, m in enumerate(markers):
        out[j].extend(_starting_in(unlaunched, by_start, m))
        out[j].sort(key=lambda ie: ie[1].ts)
    return out


def _starting_in(
    evs: list[tuple[int, Event]], starts: list[float], m: Event
) -> list[tuple[int, Event]]:
    lo = bisect_left(starts, m.ts)
    hi = bisect_left(starts, m.end, lo=lo)
    return evs[lo:hi]


def _top_level(evs: list[tuple[int, Event]]) -> list[tuple[int, Event]]:
    """Events (sorted by start, longest first) not starting inside an earlier one."""
    out = []
    cur_end = float("-inf")
    for i, ev in evs:
        if ev.ts >= cur_end:
            out.append((i, ev))
            cur_end = ev.end
    return out


def require_device_activity(trace: Trace, module: ModuleInfo | None) -> None:
    if module is not None and not (module.kernels or module.externs):
        return
    device = [ev for ev in trace.events if ev.cat in DEVICE_CATEGORIES]
    if not device:
        raise TraceError(
            f"{trace.path or 'trace'}: no GPU activity (kernel / gpu_memcpy / gpu_memset "
            "events): was it profiled with ProfilerActivity.CUDA?"
        )
    if all(ev.ts == 0 and ev.dur == 0 for ev in device):
        raise TraceError(
            f"{trace.path or 'trace'}: its {len(device)} GPU events carry no times (ts 0, dur 0): "
            "a profiler session exported after another session had started loses them"
        )
    refuse_undurated(trace.path, device)  # as analyze's columns count them (core/left_out.py)
