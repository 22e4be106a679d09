"""Time on a trace's timelines: the union of intervals (busy time), and which CPU ops
launched each device event; pure, no torch."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from typing import Any

from .trace import CPU_OP, DEVICE_CATEGORIES, LAUNCH_CATEGORIES, Event, Trace

# -- intervals ---------------------------------------------------------------------------


def union_length(intervals: Iterable[tuple[float, float]]) -> float:
    """Length of the union of half-open intervals ``[start, end)``; empty ones count 0."""
    total = 0.0
    cur_start = cur_end = None
    for start, end in sorted(iv for iv in intervals if iv[1] > iv[0]):
        if cur_end is None or start > cur_end:
            if cur_end is not None:
                total += cur_end - cur_start
            cur_start, cur_end = start, end
        elif end > cur_end:
            cur_end = end
    if cur_end is not None:
        total += cur_end - cur_start
    return total


def merged(intervals: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """The union of half-open intervals as disjoint sorted intervals (empty ones dropped)."""
    out: list[list[float]] = []
    for a, b in sorted(iv for iv in intervals if iv[1] > iv[0]):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


class Covered:
    """The union of intervals, asked how much of ``[a, b)`` it covers in O(log n): its
    disjoint sorted spans and the length before each."""

    def __init__(self, intervals: Iterable[tuple[float, float]]):
        spans = merged(intervals)
        self.starts = [a for a, _ in spans]
        self.ends = [b for _, b in spans]
        self.before = [0.0]
        for a, b in spans:
            self.before.append(self.before[-1] + (b - a))

    def within(self, a: float, b: float) -> float:
        """The length of the union inside ``[a, b)``."""
        if b <= a:
            return 0.0
        i = bisect_right(self.ends, a)  # the first span ending after a
        j = bisect_left(self.starts, b)  # the spans from i up to j start before b
        if i >= j:
            return 0.0
        total = self.before[j] - self.before[i]
        return total - max(0.0, a - self.starts[i]) - max(0.0, self.ends[j - 1] - b)


def complement(spans: list[tuple[float, float]], start: float, end: float) -> list[tuple[float, float]]:
    """``[start, end)`` less the disjoint sorted ``spans``."""
    out, cur = [], start
    for a, b in spans:
        if a > cur:
            out.append((cur, min(a, end)))
        cur = max(cur, b)
    if end > cur:
        out.append((cur, end))
    return [(a, b) for a, b in out if b > a]


def subtracted(xs: list[tuple[float, float]], ys: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """``xs`` less ``ys`` (both disjoint and sorted), as disjoint sorted intervals."""
    out: list[tuple[float, float]] = []
    for a, b in xs:
        for c, d in ys:
            if d <= a or c >= b:
                continue
            if c > a:
                out.append((a, c))
            a = max(a, d)
        if b > a:
            out.append((a, b))
    return out


def intersection_length(xs: list[tuple[float, float]], ys: list[tuple[float, float]]) -> float:
    """Length of the intersection of two disjoint sorted interval lists."""
    total, i, j = 0.0, 0, 0
    while i < len(xs) and j < len(ys):
        lo, hi = max(xs[i][0], ys[j][0]), min(xs[i][1], ys[j][1])
        total += max(hi - lo, 0.0)
        if xs[i][1] < ys[j][1]:
            i += 1
        else:
            j += 1
    return total


# -- device event -> launching CPU op ----------------------------------------------------


def launch_stacks(trace: Trace) -> dict[int, tuple[str, ...]]:
    """For each device event (kernel, gpu_memcpy, gpu_memset), keyed by its index in
    ``trace.events``: the names of the ``cpu_op`` events enclosing its launch on the
    launching thread, innermost first.

    The launch is the ``cuda_runtime``/``cuda_driver`` event with the same
    ``args.correlation``. Where no launch is found, the ``cpu_op`` with the same
    ``args["External id"]`` is used as a one-op stack. Device events linked to neither
    are absent from the result.
    """
    stacks_by_corr = _stacks_by_correlation(trace.events)
    by_external: dict[Any, str] | None = None
    out: dict[int, tuple[str, ...]] = {}
    for i, ev in enumerate(trace.events):
        if ev.cat not in DEVICE_CATEGORIES:
            continue
        ops = stacks_by_corr.get(ev.args.get("correlation"))
        stack = None if ops is None else tuple(op.name for op in ops)
        if stack is None:
            if by_external is None:
                by_external = _ops_by_external_id(trace.events)
            op = by_external.get(ev.args.get("External id"))
            stack = (op,) if op is not None else None
        if stack:
            out[i] = stack
    return out


def launch_times(trace: Trace) -> dict[Any, float]:
    """``args.correlation`` -> start of the runtime or driver call that launched the device
    events carrying it (kernels replayed from a CUDA graph share their ``cudaGraphLaunch``'s)."""
    return {ev.args["correlation"]: ev.ts for ev in trace.events
            if ev.cat in LAUNCH_CATEGORIES and "correlation" in ev.args}


def launch_op_events(trace: Trace) -> dict[int, tuple[Event, ...]]:
    """``launch_stacks`` as the ``cpu_op`` events themselves, innermost first: which call of an
    op (not only which op) launched each device event; only those found through their launch."""
    by_corr = _stacks_by_correlation(trace.events)
    return {i: ops for i, ev in enumerate(trace.events)
            if ev.cat in DEVICE_CATEGORIES and (ops := by_corr.get(ev.args.get("correlation")))}


def launching_ops(trace: Trace) -> dict[int, str]:
    """For each device event (by index in ``trace.events``): the innermost ``cpu_op``
    around its launch (e.g. ``aten::mm`` for a cuBLAS kernel). See ``launch_stacks``."""
    return {i: stack[0] for i, stack in launch_stacks(trace).items()}


def _ops_by_external_id(events: list[Event]) -> dict[Any, str]:
    return {
        ev.args["External id"]: ev.name
        for ev in events
        if ev.cat == CPU_OP and "External id" in ev.args
    }


def _stacks_by_correlation(events: list[Event]) -> dict[Any, tuple[Event, ...]]:
    threads: dict[tuple[Any, Any], tuple[list[Event], list[Event]]] = {}
    for ev in events:
        if ev.cat == CPU_OP:
            threads.setdefault((ev.pid, ev.tid), ([], []))[0].append(ev)
        elif ev.cat in LAUNCH_CATEGORIES and "correlation" in ev.args:
            threads.setdefault((ev.pid, ev.tid), ([], []))[1].append(ev)
    out: dict[Any, tuple[str, ...]] = {}
    for ops, launches in threads.values():
        if launches:
            _enclosing_ops(ops, launches, out)
    return out


def _enclosing_ops(
    ops: list[Event], launches: list[Event], out: dict[Any, tuple[Event, ...]]
) -> None:
    """Sweep one thread: ops nest properly, so a stack of open ops gives each launch's
    enclosing ops. ``out[correlation]`` = those ops, innermost first."""
    ops = sorted(ops, key=lambda e: (e.ts, -e.dur))
    starts = [e.ts for e in ops]
    stack: list[Event] = []
    next_op = 0
    for launch in sorted(launches, key=lambda e: e.ts):
        upto = bisect_left(starts, launch.ts, lo=next_op)
        # ops that start exactly at the launch's ts enclose it too
        while upto < len(ops) and ops[upto].ts == launch.ts:
            upto += 1
        for op in ops[next_op:upto]:
            _pop_finished(stack, op.ts)
            stack.append(op)
        next_op = upto
        _pop_finished(stack, launch.ts)
        out[launch.args["correlation"]] = tuple(reversed(stack))


def _pop_finished(stack: list[Event], t: float) -> None:
    """Close the ops that ended at or before ``t`` (a sibling may start where one ends)."""
    while stack and stack[-1].end <= t:
        stack.pop()
