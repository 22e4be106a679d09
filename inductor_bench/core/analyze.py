"""Any kineto trace -> an Inductor-aware breakdown per profiler step; pure, no torch.

``torch.profiler`` traces of a user's own training loop (pipelined steps, CUDA graphs, data
loading, optimizer steps) are read as they are:

- **Steps** are the ``ProfilerStep#N`` ranges on the CPU; without them the whole trace (the
  span of its CPU ops, runtime calls and device events) is one window. A device event
  belongs to the step during which the CPU *launched* it (its ``cuda_runtime`` /
  ``cuda_driver`` call with the same correlation; its own start when no launch is
  recorded), so work that runs late still counts for the step that issued it.
- A step's **window** runs from the step's start to whichever ends later, the step on the
  CPU or the last device event it launched; its **wall** is that length.
- **Busy**, per device: the union of its events' intervals in the window (never above the
  wall). **Kernel time** sums durations (concurrent streams can exceed busy).
- **Idle** = wall − busy, split by what the device was waiting for at each gap: the next
  event's launch had not been issued yet (**waiting on the CPU**), it had been issued but
  had not started (**queued**: launch latency, a stream or event dependency, a CUDA-graph
  replay's earlier nodes), or the step launched nothing more (**nothing launched**).
- **Categories** come from ``classify``: a library kernel by the op that launched it, then
  by its name; Triton kernels by Inductor's name prefixes.
- **CPU-only traces** (no device events): each CPU thread is a row ("CPU thread 1234"), its
  events the top-level ``cpu_op`` events that start in the step (as ``breakdown`` measures
  the host); busy = their union; idle is the gaps between them (waiting on CPU: Python,
  the framework, data loading) and after the last one (nothing launched); queued is 0.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from . import categories
from .classify import classify
from .errors import TraceError
from .steady import mean, steady
from .timeline import launch_stacks, union_length
from .trace import CPU_OP, DEVICE_CATEGORIES, LAUNCH_CATEGORIES, USER_ANNOTATION, Event, Trace

SCHEMA = "inductor-bench/analyze"
SCHEMA_VERSION = 1
STEP_NAME = re.compile(r"^ProfilerStep#(\d+)$")
WHOLE_TRACE = "whole trace"
HOST_THREAD = "CPU thread "  # a CPU-only trace's rows: one per thread, "CPU thread 1234"
# Record functions that only wrap a module call ("## Call CompiledFxGraph <key> ##").
_WRAPPER = re.compile(r"^## .* ##$")
US_PER_MS = 1000.0


@dataclass
class DeviceStep:
    """One device during one step. Times in ms."""

    device: str
    busy_ms: float
    kernel_ms: float
    waiting_on_cpu_ms: float
    queued_ms: float
    nothing_launched_ms: float
    events: int
    categories: dict[str, float] = field(default_factory=dict)  # category -> ms (summed durations)


@dataclass
class StepResult:
    name: str  # "ProfilerStep#12", or "whole trace"
    wall_ms: float
    devices: list[DeviceStep]

    def device(self, name: str) -> DeviceStep | None:
        return next((d for d in self.devices if d.device == name), None)


@dataclass
class TraceKernel:
    """One kernel name on one device, over every step."""

    device: str
    name: str
    category: str
    calls: int  # launches in all steps
    total_ms: float
    per_step_ms: list[float]  # its time in each step (0 where it did not run)
    launched_by: str | None = None  # innermost op(s) of its launch stack


@dataclass
class AnalyzeResult:
    trace: str
    steps: list[StepResult]
    kernels: list[TraceKernel]  # by total time, descending
    device_names: dict[str, str] = field(default_factory=dict)  # device id -> GPU name
    outside_steps: int = 0  # device events launched outside every step (left out)
    schema: str = SCHEMA
    schema_version: int = SCHEMA_VERSION

    @property
    def devices(self) -> list[str]:
        return sorted({d.device for s in self.steps for d in s.devices}, key=_device_order)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)


def steady_steps(result: AnalyzeResult) -> list[StepResult]:
    """The steps the statistics policy keeps by their wall time (``core/steady.py``): a step
    far slower than the median is left out of the typical step, as an iteration is."""
    kept = steady([s.wall_ms for s in result.steps])
    return [result.steps[i] for i in kept.kept]


def steady_wall(result: AnalyzeResult) -> float:
    return mean([s.wall_ms for s in steady_steps(result)])


def steady_step(result: AnalyzeResult, device: str) -> DeviceStep | None:
    """The typical step of one device: every field the mean over the same steady steps, so
    that its categories add up to its kernel time and its idle parts to wall less busy."""
    rows = [d for s in steady_steps(result) if (d := s.device(device))]
    if not rows:
        return None
    cats = {c for r in rows for c in r.categories}
    return DeviceStep(
        device=device,
        busy_ms=mean([r.busy_ms for r in rows]),
        kernel_ms=mean([r.kernel_ms for r in rows]),
        waiting_on_cpu_ms=mean([r.waiting_on_cpu_ms for r in rows]),
        queued_ms=mean([r.queued_ms for r in rows]),
        nothing_launched_ms=mean([r.nothing_launched_ms for r in rows]),
        events=round(mean([r.events for r in rows])),
        categories={
            c: mean([r.categories.get(c, 0.0) for r in rows]) for c in sorted(cats, key=categories.order)
        },
    )


def _device_order(d: str) -> tuple[int, str]:
    return (int(d), d) if d.isdigit() else (1 << 30, d)


# ---- analysis -----------------------------------------------------------------------------


def analyze_trace(trace: Trace) -> AnalyzeResult:
    """The breakdown of ``trace`` (as ``load_for_analysis`` reads it): per device, or per
    CPU thread for a trace with no device activity. TraceError when it holds neither."""
    split = split_steps(trace)
    steps = [step_result(split, k) for k in range(len(split.windows))]
    return AnalyzeResult(
        trace=trace.path,
        steps=steps,
        kernels=_kernels(split),
        device_names=_device_names(trace),
        outside_steps=split.outside,
    )


@dataclass
class StepEvents:
    """A trace's events split by step: ``per_step[k]`` holds (index, event) of the device
    events (or, on a CPU-only trace, the top-level host ops) of ``windows[k]``."""

    windows: list[tuple[str, float, float]]  # (name, start, end on the CPU)
    per_step: list[list[tuple[int, Event]]]
    outside: int  # device events launched outside every step
    launched: dict[Any, float]  # correlation -> launch time
    stacks: dict[int, tuple[str, ...]]
    category: Callable[[int], str]  # event index -> category
    device: Callable[[Event], str]  # event -> device (or host thread) name


def split_steps(trace: Trace) -> StepEvents:
    """Every device event by the step that launched it; on a CPU-only trace, the top-level
    ``cpu_op`` events of every thread by the step they start in."""
    device_events = [(i, ev) for i, ev in enumerate(trace.events) if ev.cat in DEVICE_CATEGORIES]
    if not device_events:
        return _host_steps(trace)
    windows = _step_windows(trace)
    stacks = launch_stacks(trace)
    launched = _launch_times(trace.events)
    per_step, outside = _by_step(
        windows, device_events, lambda ev: launched.get(ev.args.get("correlation"), ev.ts)
    )
    return StepEvents(
        windows, per_step, outside, launched, stacks, _categorizer(trace.events, stacks), _device_id
    )


def step_result(split: StepEvents, k: int) -> StepResult:
    name, start, end = split.windows[k]
    return _step(name, start, end, split.per_step[k], split)


def is_host(device: str) -> bool:
    return device.startswith(HOST_THREAD)


def _device_id(ev: Event) -> str:
    return str(ev.pid)


def _host_thread(ev: Event) -> str:
    return f"{HOST_THREAD}{ev.tid}"


def _host_steps(trace: Trace) -> StepEvents:
    ops = [
        (i, ev)
        for i, ev in enumerate(trace.events)
        if ev.cat == CPU_OP and not STEP_NAME.match(ev.name) and not _WRAPPER.match(ev.name)
    ]
    if not ops:
        raise TraceError(
            f"{trace.path or 'trace'}: no GPU activity (kernel / gpu_memcpy / gpu_memset events) "
            "and no CPU ops (cpu_op events): nothing to analyse"
        )
    windows = _step_windows(trace)
    per_step, _ = _by_step(windows, ops, lambda ev: ev.ts)
    per_step = [_top_level_per_thread(evs) for evs in per_step]
    return StepEvents(windows, per_step, 0, {}, {}, _categorizer(trace.events, {}), _host_thread)


def _by_step(windows, events, when) -> tuple[list[list[tuple[int, Event]]], int]:
    """``events`` by the last window starting at or before ``when(event)``, and how many
    fell outside every window."""
    per_step: list[list[tuple[int, Event]]] = [[] for _ in windows]
    outside = 0
    starts = [w[1] for w in windows]
    for i, ev in events:
        t = when(ev)
        k = bisect_right(starts, t) - 1
        if k >= 0 and t <= windows[k][2]:
            per_step[k].append((i, ev))
        else:
            outside += 1
    return per_step, outside


def _top_level_per_thread(evs: list[tuple[int, Event]]) -> list[tuple[int, Event]]:
    """Per thread, the ops (by start, longest first) that do not start inside an earlier one."""
    threads: dict[Any, list[tuple[int, Event]]] = {}
    for i, ev in evs:
        threads.setdefault((ev.pid, ev.tid), []).append((i, ev))
    out = []
    for ops in threads.values():
        cur_end = float("-inf")
        for i, ev in sorted(ops, key=lambda ie: (ie[1].ts, -ie[1].dur)):
            if ev.ts >= cur_end:
                out.append((i, ev))
                cur_end = ev.end
    return out


def _launch_times(events: list[Event]) -> dict[Any, float]:
    """correlation -> when the CPU issued the launch (cudaLaunchKernel, cuLaunchKernel,
    cudaMemcpyAsync, cudaGraphLaunch ...)."""
    return {
        ev.args["correlation"]: ev.ts
        for ev in events
        if ev.cat in LAUNCH_CATEGORIES and "correlation" in ev.args
    }


def _step_windows(trace: Trace) -> list[tuple[str, float, float]]:
    """(name, start, end) of each ProfilerStep on the CPU, by start; the whole trace when
    there are none."""
    steps = sorted(
        (ev for ev in trace.events if ev.cat in (USER_ANNOTATION, CPU_OP) and STEP_NAME.match(ev.name)),
        key=lambda ev: ev.ts,
    )
    if steps:
        return [(ev.name, ev.ts, ev.end) for ev in steps]
    return [(WHOLE_TRACE, min(ev.ts for ev in trace.events), max(ev.end for ev in trace.events))]


def _categorizer(events: list[Event], stacks: dict[int, tuple[str, ...]]):
    cache: dict[tuple[str, tuple[str, ...]], str] = {}

    def cat_of(i: int) -> str:
        key = (events[i].name, stacks.get(i, ()))
        if key not in cache:
            cache[key] = classify(key[0], None, ops=key[1])
        return cache[key]

    return cat_of


def _step(name, start, step_end, evs, split: StepEvents) -> StepResult:
    end = max([step_end, *(ev.end for _, ev in evs)])
    by_device: dict[str, list[tuple[int, Event]]] = {}
    for i, ev in evs:
        by_device.setdefault(split.device(ev), []).append((i, ev))
    devices = [
        _device_step(d, start, end, by_device[d], split.launched, split.category)
        for d in sorted(by_device, key=_device_order)
    ]
    return StepResult(name=name, wall_ms=(end - start) / US_PER_MS, devices=devices)


def _device_step(device, start, end, evs, launched, cat_of) -> DeviceStep:
    cats: dict[str, float] = {}
    for i, ev in evs:
        c = cat_of(i)
        cats[c] = cats.get(c, 0.0) + ev.dur / US_PER_MS
    busy = union_length((max(ev.ts, start), min(ev.end, end)) for _, ev in evs)
    cpu, queued, none = _idle(sorted((ev for _, ev in evs), key=lambda e: e.ts), start, end, launched)
    return DeviceStep(
        device=device,
        busy_ms=busy / US_PER_MS,
        kernel_ms=sum(cats.values()),
        waiting_on_cpu_ms=cpu / US_PER_MS,
        queued_ms=queued / US_PER_MS,
        nothing_launched_ms=none / US_PER_MS,
        events=len(evs),
        categories={c: cats[c] for c in sorted(cats, key=categories.order)},
    )


def _idle(
    evs: list[Event], start: float, end: float, launched: dict[Any, float]
) -> tuple[float, float, float]:
    """(waiting on the CPU, queued, nothing launched) in µs: each gap before an event is
    waiting on the CPU until that event's launch was issued, queued after; the gap after the
    last event is nothing launched."""
    cpu = queued = 0.0
    covered = start
    for ev in evs:
        if ev.ts > covered:
            issued = launched.get(ev.args.get("correlation"), ev.ts)
            split = min(max(issued, covered), ev.ts)
            cpu += split - covered
            queued += ev.ts - split
        covered = max(covered, ev.end)
    return cpu, queued, max(end - covered, 0.0)


def _kernels(split: StepEvents) -> list[TraceKernel]:
    per_step, stacks, cat_of = split.per_step, split.stacks, split.category
    found: dict[tuple[str, str], TraceKernel] = {}
    for k, evs in enumerate(per_step):
        for i, ev in evs:
            key = (split.device(ev), ev.name)
            kern = found.get(key)
            if kern is None:
                kern = found[key] = TraceKernel(
                    device=key[0],
                    name=ev.name,
                    category=cat_of(i),
                    calls=0,
                    total_ms=0.0,
                    per_step_ms=[0.0] * len(per_step),
                    launched_by=_launcher(ev.name, stacks.get(i, ())),
                )
            kern.calls += 1
            kern.total_ms += ev.dur / US_PER_MS
            kern.per_step_ms[k] += ev.dur / US_PER_MS
    return sorted(found.values(), key=lambda x: (-x.total_ms, x.device, x.name))


def _launcher(name: str, stack: tuple[str, ...]) -> str | None:
    """The innermost op around the launch (a Triton kernel's own record function aside)."""
    return next((op for op in stack if op != name), None)


def _device_names(trace: Trace) -> dict[str, str]:
    out = {}
    for p in trace.device_properties:
        if "id" in p and p.get("name"):
            out[str(p["id"])] = str(p["name"])
    return out
