"""A trace's own named ranges (``record_function``: a loop's "forward", "backward", "data";
torch's "Optimizer.step#SGD.step", "DistributedDataParallel.forward", "nccl:all_reduce") per
profiler step; pure, no torch.

Per step and name, over the ranges of that name that start in the step:

- **calls**: how many there are;
- **wall**: the length of their union on the CPU (a range inside another of its name counts
  once);
- **work**: what they launched, the step's own timed events (``StepEvents.timed``) whose
  launch was issued while one of them was open (a range open past its step's end counts no
  later step's events: those are that step's), on any thread of the trace: device kernels, memcpys
  and memsets, each its duration; on a CPU-only trace the top-level ops starting in them,
  each the time the step gives it. Any thread, because autograd runs a backward's kernels on
  its own thread while the loop's thread waits in its "backward" range.

A range is the same name's wherever it is nested: "forward" and the "DistributedDataParallel
.forward" inside it each count the work inside both.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from itertools import accumulate

from .columns import ITERATION_MARKER, TraceColumns
from .steady import mean
from .steps import ITERATION_STEP, US_PER_MS, StepEvents
from .timeline import merged


@dataclass
class Region:
    """One range name, per step (0 where it did not run). Times in ms."""

    name: str
    calls: list[int]
    wall_ms: list[float]
    work_ms: list[float]  # device work launched in it; a CPU-only trace's ops in it


@dataclass
class TypicalRegion:
    """One range name in the typical step (the mean over the steady steps)."""

    name: str
    calls: float
    wall_ms: float
    work_ms: float


def typical(regions: list[Region], kept: list[int]) -> list[TypicalRegion]:
    """Each range name in the typical step: its figures the mean over the steps ``kept``
    (the steady ones; 0 where it did not run), those that ran, by wall, longest first."""
    rows = [TypicalRegion(r.name, *(mean([v[i] for i in kept]) for v in (r.calls, r.wall_ms, r.work_ms)))
            for r in regions]
    return sorted((r for r in rows if r.calls), key=lambda r: (-r.wall_ms, r.name))


def regions(c: TraceColumns, split: StepEvents) -> list[Region]:
    """Every range name that starts in a step, by name; not the iteration marker whose ranges
    are the steps (a run directory's graph trace), as no ProfilerStep is."""
    if not c.regions:
        return []
    n = len(split.windows)
    starts = [w[1] for w in split.windows]
    ends = [w[2] for w in split.windows]
    steps = c.names.get(ITERATION_MARKER) if split.windows[0][0].startswith(f"{ITERATION_STEP} ") else None
    spans: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for name, t, end, _ in c.regions:
        if name == steps and steps is not None:
            continue
        k = bisect_right(starts, t) - 1
        if k >= 0 and t <= ends[k]:
            spans.setdefault((name, k), []).append((t, end))
    timelines = [_timeline(split, k) for k in range(n)]
    found: dict[int, Region] = {}
    for (name, k), ranges in spans.items():
        region = found.get(name)
        if region is None:
            region = found[name] = Region(c.names.values[name], [0] * n, [0.0] * n, [0.0] * n)
        region.calls[k] = len(ranges)
        when, prefix = timelines[k]
        for t, end in merged(ranges):
            region.wall_ms[k] += (end - t) / US_PER_MS
            lo, hi = bisect_left(when, t), bisect_right(when, end)
            region.work_ms[k] += (prefix[hi] - prefix[lo]) / US_PER_MS
    return sorted(found.values(), key=lambda r: r.name)


def _timeline(split: StepEvents, k: int) -> tuple[array, list[float]]:
    """When each timed event of step ``k`` was issued, in order, and the prefix sums of their
    µs: a range open past its step's end (an "epoch" around several steps, a prefetch open
    across ``prof.step()``) counts its own step's work alone, as each later step counts its own."""
    issued, when, took = split.issued, array("d"), array("d")  # columns: a trace has millions
    if split.shares is None:  # each device event its own duration: C-level maps, no frame each
        js = split.per_step[k]
        when.extend(map(issued.__getitem__, js))
        took.extend(map(split.events.dur.__getitem__, js))
    else:
        for j, us in split.shares[k]:
            when.append(issued[j])
            took.append(us)
    order = sorted(range(len(when)), key=when.__getitem__)
    return array("d", map(when.__getitem__, order)), [0.0, *accumulate(map(took.__getitem__, order))]
