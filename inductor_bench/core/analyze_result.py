"""What ``analyze`` finds in a trace: its steps, devices and kernels, and which steps are typical."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .graph_replays import GraphReplays
from .host_python import PythonFrame
from .memory import DeviceMemory
from .ns_figures import ns_json
from .regions import Region
from .shaped_ops import ShapedOp, typical_shaped_ops
from .steady import steady_held
from .steps import device_order

SCHEMA = "inductor-bench/analyze"
SCHEMA_VERSION = 1


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
    cut_short: dict[str, str] = field(default_factory=dict)  # traces cut short among several: why
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
        steady = typical_shaped_ops(self.shaped_ops, steady_indices(self), self.device_names)
        typical = {id(t.row): t for t in steady}
        for row, shown in zip(self.shaped_ops, out["shaped_ops"], strict=True):
            t = typical.get(id(row))
            shown["ms_per_call"] = t.ms_per_call if t else None
            shown["kernels_a_call"] = t.kernels_a_call if t else None
        return out

    def to_json(self) -> str:
        return ns_json(self.to_dict())



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

