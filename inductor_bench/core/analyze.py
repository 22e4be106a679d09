"""Any kineto trace -> an Inductor-aware breakdown per profiler step; pure, no torch.

``torch.profiler`` traces of a user's own training loop (pipelined steps, CUDA graphs, data
loading, optimizer steps) are read as they are:

- **Steps** are the ``ProfilerStep#N`` ranges on the CPU; without them the iterations a
  breakdown's profile marked (``inductor_bench::iteration``); without either the whole trace
  (the span of its CPU ops, ``record_function`` ranges, runtime calls and device events) is
  one window. A device event belongs to the step during which the CPU *launched* it (its ``cuda_runtime`` /
  ``cuda_driver`` call with the same correlation; its own start when no launch is
  recorded), so work that runs late still counts for the step that issued it.
- A step's **window** runs from the step's start to whichever ends later, the step on the
  CPU or the last device event it launched; its **wall** is that length.
- **Busy**, per device: the union of its events' intervals in the window (never above the
  wall). **Kernel time** sums durations (concurrent streams can exceed busy).
- **Idle** = wall − busy. Where the device ran work other steps launched (a pipelined loop's
  previous step still running) it is **other steps' work**; elsewhere it is split by what
  the device was waiting for at each gap: the next event's launch had not been issued yet
  (**waiting on the CPU**), it had been issued but had not started (**queued**: launch
  latency, a stream or event dependency, a CUDA-graph replay's earlier nodes), or the step
  launched nothing more (**nothing launched**).
- **Categories** come from ``classify``: a library kernel by the op that launched it, then
  by its name; Triton kernels by Inductor's name prefixes.
- **CPU-only traces** (no device events): each CPU thread is a row ("CPU thread 1234"), its
  events the top-level ``cpu_op`` events that start in the step (as ``breakdown`` measures
  the host); busy = their union; idle is the gaps between them (waiting on CPU: Python,
  the framework, data loading) and after the last one (nothing launched); queued is 0.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import categories, host_python
from .columns import STEP_NAME, TraceColumns, columns_of_events, load_columns
from .errors import TimesLost
from .graph_replays import GraphReplays, graph_replays
from .host_python import PythonFrame, PythonLayer
from .memory import DeviceMemory, step_memory
from .recording import latest_end
from .regions import Region, TypicalRegion, regions, typical
from .shaped_ops import (
    ShapedOp,
    TypicalShapedOp,
    shaped_ops,
    shaped_ops_left_out,
    typical_shaped_ops,
    unrecorded_calls,
)
from .steady import mean, steady_held
from .steps import (
    HOST_THREAD,
    US_PER_MS,
    WHOLE_TRACE,
    StepEvents,
    device_order,
    recorded_step_end,
    split_steps,
    step_devices,
)
from .top_kernels import TypicalKernel, kernels_left_out, typical_kernels
from .trace import Trace

SCHEMA = "inductor-bench/analyze"
SCHEMA_VERSION = 1
__all__ = ["STEP_NAME", "WHOLE_TRACE", "HOST_THREAD", "analyze_file", "analyze_trace", "split_steps"]


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
    # idle of the step's own work while the device ran work other steps launched (a pipelined
    # loop: the previous step's kernels still running); the other idle parts exclude it
    other_work_ms: float = 0.0


@dataclass
class StepResult:
    name: str  # "ProfilerStep#12", or "whole trace"
    wall_ms: float
    devices: list[DeviceStep]
    past_recording_ms: float = 0.0  # how far the step ran past the profiler's recording (not in wall)

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
    per_step_calls: list[int] = field(default_factory=list)  # its calls in each step
    launched_by: str | None = None  # ``launchers`` joined by ", "; on the host, what a compiled
    # graph's call record ran as (core/compiled_calls.py)
    # each launch's innermost op, the most time first; where no op encloses a launch, the
    # range it was made in ("no op, in Optimizer.step#FusedAdam.step")
    launchers: list[str] = field(default_factory=list)


@dataclass
class AnalyzeResult:
    trace: str
    steps: list[StepResult]
    kernels: list[TraceKernel]  # by total time, descending
    device_names: dict[str, str] = field(default_factory=dict)  # device id -> GPU name
    outside_steps: int = 0  # device events launched outside every step (left out)
    regions: list[Region] = field(default_factory=list)  # record_function ranges (core/regions.py)
    memory: list[DeviceMemory] = field(default_factory=list)  # profile_memory's, per step (core/memory.py)
    # record_shapes' GEMM, convolution and attention calls by shape (core/shaped_ops.py)
    shaped_ops: list[ShapedOp] = field(default_factory=list)
    # op -> calls of those ops in a trace that recorded no shapes (no record_shapes): {} where it did
    shapes_not_recorded: dict[str, int] = field(default_factory=dict)
    # with_stack's Python calls: per step, the time in no op by whose Python (core/host_python.py)
    host_python: list[list[PythonFrame]] = field(default_factory=list)
    host_python_thread: str = ""  # the thread whose Python it is
    # ranges (steps included) the trace wrote at their end, their start restored (core/range_starts.py)
    restarted_ranges: list[str] = field(default_factory=list)
    # name -> its events left out for a negative duration (unfinished when the profiler stopped)
    unfinished: dict[str, int] = field(default_factory=dict)
    # name -> its device events and launches left out for carrying no time (core/left_out.py)
    untimed: dict[str, int] = field(default_factory=dict)
    # name -> its device events left out of every time figure for writing no dur (core/left_out.py)
    no_dur: dict[str, int] = field(default_factory=dict)
    launches: int = 0  # the launch records (cuda_runtime, cuda_driver events) read
    # CUDA-graph replays per device, per step (core/graph_replays.py)
    graph_replays: list[GraphReplays] = field(default_factory=list)
    not_traces: list[str] = field(default_factory=list)  # a directory's JSON files that are no trace
    schema: str = SCHEMA
    schema_version: int = SCHEMA_VERSION

    @property
    def devices(self) -> list[str]:
        return sorted({d.device for s in self.steps for d in s.devices}, key=device_order)

    def to_dict(self) -> dict[str, Any]:
        """Every field, and the steps the typical step is the mean of (``steady_indices``); each
        shaped op's time a call in those steps (``ms_per_call``: null without a call in them) and
        the device kernels a call launched (``kernels_a_call``: null on the host)."""
        out = asdict(self) | {"steady_steps": [self.steps[i].name for i in steady_indices(self)]}
        typical = {id(t.row): t for t in steady_shaped_ops(self)}
        for row, shown in zip(self.shaped_ops, out["shaped_ops"], strict=True):
            t = typical.get(id(row))
            shown["ms_per_call"] = t.ms_per_call if t else None
            shown["kernels_a_call"] = t.kernels_a_call if t else None
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)


def steady_steps(result: AnalyzeResult) -> list[StepResult]:
    """The steps the statistics policy keeps by their wall time (``core/steady.py``): a step
    far slower than the median is left out of the typical step, as an iteration is."""
    return [result.steps[i] for i in steady_indices(result)]


def steady_indices(result: AnalyzeResult) -> list[int]:
    """The steps the typical step is the mean of: of those that hold anything (a step the
    profiler stopped in as it opened holds nothing, and is no step of the loop's), the steady."""
    return steady_held([s.wall_ms for s in result.steps], [not empty(s) for s in result.steps])


def empty(step: StepResult) -> bool:
    """A step in which no device (or host thread) had an event of its own."""
    return not any(d.events for d in step.devices)


def empty_steps(result: AnalyzeResult) -> list[str]:
    """The steps left out of the typical step for holding nothing, when others hold something."""
    names = [s.name for s in result.steps if empty(s)]
    return names if len(names) < len(result.steps) else []


def steady_regions(result: AnalyzeResult) -> list[TypicalRegion]:
    """Each range name in the typical step, the mean over the steady steps (``regions.typical``)."""
    return typical(result.regions, steady_indices(result))


def regions_left_out(result: AnalyzeResult) -> list[tuple[str, list[str]]]:
    """The range names that ran only in steps left out of the typical step (a periodic eval
    or checkpoint, slower than the steps around it), with the steps they ran in."""
    kept = set(steady_indices(result))
    return [(g.name, [result.steps[i].name for i, n in enumerate(g.calls) if n])
            for g in result.regions if any(g.calls) and not any(g.calls[i] for i in kept)]


def steady_kernels(result: AnalyzeResult) -> list[TypicalKernel]:
    """The kernels in the typical step, the most time first: the mean over the steady steps, so
    that a device's rows of a category add up to the category table's figure."""
    return typical_kernels(result.kernels, steady_indices(result))


def steady_kernels_left_out(result: AnalyzeResult) -> list[tuple[str, list[str]]]:
    """The kernels that ran only in steps left out of the typical step, with those steps."""
    return kernels_left_out(result.kernels, steady_indices(result), [s.name for s in result.steps])


def steady_shaped_ops(result: AnalyzeResult) -> list[TypicalShapedOp]:
    """The GEMMs, convolutions and attention by shape in the typical step, by time
    (``shaped_ops.typical_shaped_ops``)."""
    return typical_shaped_ops(result.shaped_ops, steady_indices(result), result.device_names)


def steady_shaped_ops_left_out(result: AnalyzeResult) -> list[tuple[str, list[str]]]:
    """The GEMM, convolution and attention shapes that ran only in steps left out of the
    typical step, with those steps (``shaped_ops.shaped_ops_left_out``)."""
    return shaped_ops_left_out(result.shaped_ops, steady_indices(result), [s.name for s in result.steps])


def steady_host_python(result: AnalyzeResult) -> tuple[list[PythonLayer], float]:
    """The typical step's time in no op by whose Python it is, and that time (ms)."""
    kept = steady_indices(result)
    if not result.host_python:
        return [], 0.0
    layers = host_python.typical([result.host_python[i] for i in kept], mean)
    return layers, sum(x.ms for x in layers)


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
        other_work_ms=mean([r.other_work_ms for r in rows]),
        events=round(mean([r.events for r in rows])),
        categories={
            c: mean([r.categories.get(c, 0.0) for r in rows]) for c in sorted(cats, key=categories.order)
        },
    )


# ---- analysis -----------------------------------------------------------------------------


def analyze_trace(trace: Trace) -> AnalyzeResult:
    """The breakdown of a loaded ``trace`` (as ``load_for_analysis`` reads it): a ``Trace``
    holds complete events only, so profile_memory's figures come from ``analyze_file`` alone.
    Its steps stop at the recording's end as ``analyze_file``'s do (``Trace.recorded_end``)."""
    cols = columns_of_events(trace.events, trace.path)
    cols.device_properties = trace.device_properties
    cols.recorded_end = latest_end(cols.recorded_end, trace.recorded_end)
    return analyze_columns(cols)


def analyze_file(path: str | Path) -> AnalyzeResult:
    """The breakdown of the trace at ``path``, read into columns (``columns.py``): the
    memory it takes follows the events the analysis reads, about 40 bytes each."""
    return analyze_columns(load_columns(path))


def analyze_columns(c: TraceColumns) -> AnalyzeResult:
    """Per device, or per CPU thread for a trace with no device activity. TraceError when
    it holds neither."""
    require_times(c)
    split = split_steps(c)
    thread, python = host_python.trace_python(c, split.windows)
    return AnalyzeResult(
        trace=c.path,
        steps=[step_result(split, k) for k in range(len(split.windows))],
        kernels=_kernels(split),
        device_names=_device_names(c.device_properties),
        outside_steps=split.outside,
        regions=regions(c, split),
        memory=step_memory(c.memory, split.windows),
        shaped_ops=shaped_ops(c, split),
        shapes_not_recorded=unrecorded_calls(c),
        host_python=python,
        host_python_thread=thread,
        restarted_ranges=c.restarted_ranges,
        unfinished=dict(c.unfinished),
        untimed=dict(c.untimed),
        no_dur=dict(c.no_dur),
        launches=len(c.launch),
        graph_replays=graph_replays(c, split),
    )


def require_times(c: TraceColumns) -> None:
    """TimesLost for a trace whose device events all carry no time: at ts 0 with dur 0, or
    with no dur written (core/left_out.py)."""
    no_dur = sum(c.no_dur.values())
    if len(c.device) or not (c.untimed_device or no_dur):
        return
    events = "device events (kernel, memcpy, memset)"
    one = "device event (kernel, memcpy, memset)"  # the trace's only one
    if c.untimed_device == 1 and not no_dur:
        raise TimesLost(f"{c.path}: its one {one} carries no time (ts 0, dur 0): the profiler lost it "
                        "(a session exported after another had started)")
    if not no_dur:
        raise TimesLost(
            f"{c.path}: its {c.untimed_device} {events} all carry no times (ts 0, dur 0): the "
            "profiler lost them (a session exported after another had started)")
    if no_dur == 1 and not c.untimed_device:
        raise TimesLost(f"{c.path}: its one {one} writes no dur: its time is not known",
                        f"its one {one} writes no dur: its time is not known")
    why = (f"its {no_dur} {events} all write no dur: their times are not known" if not c.untimed_device
           else f"its {no_dur + c.untimed_device} {events} all carry no times: {c.untimed_device} at ts 0 "
           f"with dur 0 (the profiler lost them), {no_dur} with no dur written")
    raise TimesLost(f"{c.path}: {why}", why)


def step_result(split: StepEvents, k: int) -> StepResult:
    name, start, _ = split.windows[k]
    end, past = recorded_step_end(split, k)
    devices = [
        DeviceStep(
            device=f.device,
            busy_ms=f.busy / US_PER_MS,
            kernel_ms=f.kernel_ms,
            waiting_on_cpu_ms=f.waiting_on_cpu / US_PER_MS,
            queued_ms=f.queued / US_PER_MS,
            nothing_launched_ms=f.nothing_launched / US_PER_MS,
            other_work_ms=f.other_work / US_PER_MS,
            events=f.events,
            categories=f.categories,
        )
        for f in step_devices(split, k, end)
    ]
    return StepResult(name, (end - start) / US_PER_MS, devices, past / US_PER_MS)


def is_host(device: str) -> bool:
    return device.startswith(HOST_THREAD)


def _kernels(split: StepEvents) -> list[TraceKernel]:
    """Per (device, kernel name, category): calls and time in every step, and every op that
    launched it, the most time first (a kernel some launches of which classify apart, a GEMM
    both ``aten::mm``'s and a convolution's backward's, is one row per category: the rows add
    up to the category table)."""
    names, name, row, rows = split.names, split.events.name, split.row, split.rows
    kind, kinds = split.kind, split.kinds
    found: dict[tuple[int, int, str], TraceKernel] = {}
    launchers: dict[tuple[int, int, str], dict[str, float]] = {}
    n_steps = len(split.per_step)
    for k in range(n_steps):
        for j, us in split.timed(k):
            category, launched_by = kinds[kind[j]]
            key = (row[j], name[j], category)
            kern = found.get(key)
            if kern is None:
                kern = found[key] = TraceKernel(
                    device=rows[key[0]], name=names[key[1]], category=category, calls=0,
                    total_ms=0.0, per_step_ms=[0.0] * n_steps, per_step_calls=[0] * n_steps,
                )
                launchers[key] = {}
            ms = us / US_PER_MS
            kern.calls += 1
            kern.total_ms += ms
            kern.per_step_ms[k] += ms
            kern.per_step_calls[k] += 1
            if launched_by is not None:
                by = launchers[key]
                by[launched_by] = by.get(launched_by, 0.0) + ms
    for key, kern in found.items():
        by = launchers[key]
        kern.launchers = sorted(by, key=lambda op: (-by[op], op))
        kern.launched_by = split.contexts.get(key[1], ", ".join(kern.launchers) or None)
    return sorted(found.values(), key=lambda x: (-x.total_ms, x.device, x.name, x.category))


def _device_names(properties: list[dict[str, Any]]) -> dict[str, str]:
    out = {}
    for p in properties:
        if "id" in p and p.get("name"):
            out[str(p["id"])] = str(p["name"])
    return out
