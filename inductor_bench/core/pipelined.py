"""The pipelined step: iterations launched back to back, each device event given to the
iteration that launched it; pure, no torch.

The profiling worker's main sessions end every iteration with a synchronize, so each
iteration's kernels lie inside its marker and its wall time includes the launch latency of
its first kernel and the return of the sync. That is the right frame for per-kernel times,
and the wrong one for "is the GPU kept busy": a model's real step launches the next kernels
while the previous ones run. So on an accelerator the worker also runs one session of
iterations launched back to back (a ``PIPELINED_ITERATION`` marker around each iteration's
launches, one ``PIPELINED_RUN`` marker around all of them and the one synchronize at the
end). A device event belongs to the iteration whose marker holds its *launch* (the runtime
or driver call with the same ``args.correlation``), not to the one it happens to run in:
with a queue ahead of it, a kernel launched in iteration 3 may start during iteration 5's
launches. Kernels replayed from a CUDA graph share the correlation of their
``cudaGraphLaunch``, which still names the iteration.

From that: the device's busy time per iteration (the union of its events over the run,
divided by the iterations), the wall time per iteration of the pipelined run, and the CPU
time spent launching one iteration. When the device is idle for more than
``LAUNCH_BOUND_IDLE`` of a pipelined run, the GPU waits on the CPU: the step is
launch-bound, and CUDA graphs (mode ``reduce-overhead``) or larger fusions are the fix.

The profiler makes launching dearer: it adds its CUPTI callbacks to every launch, and torch
(2.11 at least) wraps every Triton launch in a ``_RecordFunctionFast`` of its own under it. A
profiled run therefore idles the device longer than the model would, and read alone the
verdict leans to launch-bound. So the worker also launches the same iterations back to back
without the profiler and times them on the host clock (``time_back_to_back``: the wall from
the first launch to the end of the sync, and each iteration's launches), and the verdict
compares the device's busy time (kernel durations, which the profiler does not lengthen)
with that plain wall. The profiled launch time less the plain one is the profiler's own cost
per iteration, reported beside it.
"""

from __future__ import annotations

import statistics
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass

from .errors import TraceError
from .left_out import refuse_undurated
from .steady import steady_mean
from .timeline import launch_times, union_length
from .trace import DEVICE_CATEGORIES, USER_ANNOTATION, Event, Trace

PIPELINED_ITERATION = "inductor_bench::pipelined_iteration"
PIPELINED_RUN = "inductor_bench::pipelined_run"
US_PER_MS = 1000.0
# Idle share of a pipelined run above which the step is called launch-bound.
LAUNCH_BOUND_IDLE = 0.20


@dataclass
class Attribution:
    """Device events of a trace given to the iteration (marker) that launched them."""

    per_iteration: list[list[Event]]  # device events launched inside marker i
    unattributed: int  # device events whose launch lies in no marker (or has no launch)


def attribute_by_launch(trace: Trace, markers: list[Event]) -> Attribution:
    """Give every device event to the marker whose span holds its launch call.

    ``markers`` must not overlap (iteration markers never do). The launch is the
    ``cuda_runtime``/``cuda_driver`` event with the device event's ``args.correlation``.
    """
    markers = sorted(markers, key=lambda m: m.ts)
    starts = [m.ts for m in markers]
    launch_ts = launch_times(trace)
    per_iteration: list[list[Event]] = [[] for _ in markers]
    unattributed = 0
    for ev in trace.events:
        if ev.cat not in DEVICE_CATEGORIES:
            continue
        ts = launch_ts.get(ev.args.get("correlation"))
        i = bisect_right(starts, ts) - 1 if ts is not None else -1
        if i >= 0 and ts <= markers[i].end:
            per_iteration[i].append(ev)
        else:
            unattributed += 1
    return Attribution(per_iteration, unattributed)


@dataclass
class PipelinedRun:
    """What one pipelined session measured, per iteration (milliseconds)."""

    iterations: int
    wall_ms: float  # the run's span (first launch to the end of the final sync) / iterations
    busy_ms: float  # union of the busiest device's events over the run / iterations
    launch_ms: float  # CPU time to launch one iteration (its marker's duration; the steady mean)
    events_per_iteration: list[int]  # device events launched by each iteration
    unattributed: int  # device events launched outside every iteration marker
    # the same iterations launched back to back without the profiler (host clock), per iteration
    plain_wall_ms: float | None = None
    plain_launch_ms: float | None = None

    @property
    def busy_pct(self) -> float:
        """Busy % of the profiled run: busy and wall from the same trace."""
        return 100.0 * self.busy_ms / self.wall_ms if self.wall_ms > 0 else 0.0

    @property
    def verdict_wall_ms(self) -> float:
        """The wall the verdict reads: the unprofiled run's where it was timed."""
        return self.plain_wall_ms if self.plain_wall_ms else self.wall_ms

    @property
    def idle_share(self) -> float:
        """The share of the run in which the device waited, by the verdict's wall; the device's
        busy time is the profiled run's (kernel durations), never above the wall it ran in, so a
        plain wall shorter than it (spread between the two runs) reads as no idle time."""
        wall = self.verdict_wall_ms
        return max(0.0, 1.0 - self.busy_ms / wall) if wall > 0 else 0.0

    @property
    def launch_bound(self) -> bool:
        return self.verdict_wall_ms > 0 and self.idle_share > LAUNCH_BOUND_IDLE

    @property
    def profiler_launch_ms(self) -> float | None:
        """What the profiler added to launching one iteration (profiled less plain launch time)."""
        return self.launch_ms - self.plain_launch_ms if self.plain_launch_ms is not None else None


# Rounds of the unprofiled timing: the median round's figures are kept.
PLAIN_ROUNDS = 3


def time_back_to_back(
    launch: Callable[[], object],
    sync: Callable[[], object],
    iterations: int,
    clock: Callable[[], float],
    rounds: int = PLAIN_ROUNDS,
) -> dict[str, float]:
    """Launch ``iterations`` iterations back to back with one ``sync`` at the end, ``rounds``
    times, without any profiler, on ``clock`` (seconds; the worker passes ``time.perf_counter``):
    per iteration, the wall from the first launch to the sync's return, and the host time spent
    in ``launch`` (each round's steady mean, ``core/steady.py``). Returns the round of the
    median wall, in milliseconds: ``{"wall_ms", "launch_ms"}``. Pure: the callables bring the
    device."""
    found = []
    for _ in range(max(1, rounds)):
        spans = []
        start = clock()
        for _ in range(iterations):
            t0 = clock()
            launch()
            spans.append(clock() - t0)
        sync()
        wall = clock() - start
        found.append((wall / iterations * 1e3, steady_mean(spans) * 1e3))
    wall_ms, launch_ms = next(x for x in found if x[0] == statistics.median_low([w for w, _ in found]))
    return {"wall_ms": wall_ms, "launch_ms": launch_ms}


def analyze_pipelined(trace: Trace, plain: dict[str, float] | None = None) -> PipelinedRun:
    """Read a pipelined session's trace (see the module docstring); ``plain``: the same
    iterations timed without the profiler (``time_back_to_back``), where the worker ran them."""
    runs = _annotations(trace, lambda n: n == PIPELINED_RUN)
    markers = _annotations(trace, lambda n: n == PIPELINED_ITERATION)
    if len(runs) != 1 or not markers:
        raise TraceError(
            f"{trace.path or 'trace'}: not a pipelined session (expected one {PIPELINED_RUN} "
            f"marker and {PIPELINED_ITERATION} markers; found {len(runs)} and {len(markers)})"
        )
    run = runs[0]
    refuse_undurated(trace.path, [e for e in trace.events if e.cat in DEVICE_CATEGORIES])
    att = attribute_by_launch(trace, markers)
    n = len(markers)
    return PipelinedRun(
        iterations=n,
        wall_ms=run.dur / n / US_PER_MS,
        busy_ms=busy_in_window(att.per_iteration, run.ts, run.end) / n / US_PER_MS,
        launch_ms=steady_mean([m.dur for m in markers]) / US_PER_MS,
        events_per_iteration=[len(evs) for evs in att.per_iteration],
        unattributed=att.unattributed,
        plain_wall_ms=_number(plain, "wall_ms"),
        plain_launch_ms=_number(plain, "launch_ms"),
    )


def _number(d: dict[str, float] | None, key: str) -> float | None:
    v = (d or {}).get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 else None


def busy_in_window(per_iteration: list[list[Event]], start: float, end: float) -> float:
    """Microseconds in which the busiest device ran any of these events, within [start, end)."""
    by_device: dict[object, list[tuple[float, float]]] = {}
    for evs in per_iteration:
        for ev in evs:
            s = ev.ts - start  # relative: absolute µs timestamps (~1e15) leave few digits
            by_device.setdefault(ev.pid, []).append((max(s, 0.0), min(s + ev.dur, end - start)))
    return max((union_length(iv) for iv in by_device.values()), default=0.0)


def _annotations(trace: Trace, keep: Callable[[str], bool]) -> list[Event]:
    return sorted(
        (e for e in trace.events if e.cat == USER_ANNOTATION and keep(e.name)), key=lambda e: e.ts
    )
