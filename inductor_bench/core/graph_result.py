"""One graph's saved record (``GraphResult``) and its kernels' (``KernelStat``), to and from JSON.

A graph's times are milliseconds per iteration of its own harness (one call of the compiled
module); every figure is the mean over its steady iterations (``core/steady.py``), its raw
per-iteration samples kept. ``core/results.py`` holds the run around them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from .devices import HOST_BACKEND
from .load import Load
from .pipelined import PipelinedRun
from .sources import CallSite, Origin, trim_json
from .steady import Steady, from_left_out
from .summaries import Summary, summarize_steady
from .vocab import Status


@dataclass
class KernelStat:
    """One kernel (or extern op) of one graph."""

    name: str
    category: str
    calls: float  # launches per iteration
    ms: float  # time per iteration (all launches): the mean over the graph's steady iterations
    samples_ms: list[float] = field(default_factory=list)  # time in each iteration, every one
    aten_ops: list[str] = field(default_factory=list)  # origin ATen ops
    source_nodes: list[str] = field(default_factory=list)  # FX nodes it was fused from
    file: str | None = None  # kernel file, relative to the run directory
    launched_by: str | None = None  # the CPU op that launched it (extern GPU kernels)
    origin: Origin | None = None  # FX nodes, model source lines, nn.Module paths (schema 2)
    # What it moves and computes per iteration (schema 4, core/work.py; None: not counted),
    # the compute type its FLOP/s is held against, and how the count was made.
    bytes: float | None = None
    flops: float | None = None
    compute: str | None = None
    work_from: str | None = None
    # device timeline: the other kernels its extern calls launched, name -> [launches, ms] an iteration
    beside: dict[str, list[float]] | None = None
    own_calls: float | None = None  # with beside: its launches an iteration under those calls
    # of ``ms``, the time copying weights into the layout extern calls read, by the bytes it writes
    # (core/weight_copies.py); None: it copies none, or not counted
    copy_ms: float | None = None


@dataclass
class GraphResult:
    """One compiled module: a forward, backward or inference graph of one frame."""

    id: str  # unique in the run, e.g. "0-forward", "1-inference"
    role: str  # forward | backward | inference
    aot_id: str = ""  # Inductor's AOT ID, e.g. "0_forward"
    compiled_autograd: bool = False  # compiled autograd's backward (AOT's inference graph)
    frame_id: int | None = None
    frame_compile_id: int | None = None
    module: str | None = None  # compiled module, relative to the run directory
    trace: str | None = None  # chrome trace, relative to the run directory
    device: str = HOST_BACKEND.name
    iterations: int = 0
    wall_ms: float = 0.0  # wall time of one harness call (steady mean, as every figure here)
    wall_samples_ms: list[float] = field(default_factory=list)
    busy_ms: float = 0.0  # union of kernel intervals per iteration
    kernel_ms: float = 0.0  # sum of kernel times per iteration (== sum of categories)
    busy_samples_ms: list[float] = field(default_factory=list)
    # The iterations (indices into every samples list) the policy left out as disturbed, the
    # wall time above which it did (None: too few iterations to judge, all kept), and the worker's
    # own clock reading of each iteration, which it judges by too ([]: not recorded).
    left_out: list[int] = field(default_factory=list)
    limit_ms: float | None = None
    clock_samples_ms: list[float] = field(default_factory=list)
    categories: dict[str, float] = field(default_factory=dict)  # category -> ms
    kernels: list[KernelStat] = field(default_factory=list)  # sorted by ms, descending
    # The profiler windows (separate profiler sessions) this graph was profiled in: median
    # iteration time of each, minor page faults per iteration of each (None where the OS does
    # not count them), and the index of the one kept (the fastest; the times above are its).
    windows_ms: list[float] = field(default_factory=list)
    window_faults: list[float | None] = field(default_factory=list)
    window: int | None = None
    # The worker process each window ran in (0, 1, ...: core/processes.py; empty: all in one).
    window_process: list[int] = field(default_factory=list)
    # The machine's speed during each window against the fastest the run saw (1.0: full; 0.6:
    # fixed work took 1/0.6 as long; runner/speed.py), and the seconds spent waiting for it.
    window_speed: list[float | None] = field(default_factory=list)
    speed_waited_s: float = 0.0
    # Load from other processes during each window (None where the OS could not tell).
    window_load: list[Load | None] = field(default_factory=list)
    status: str = Status.OK  # ok | failed | timeout | skipped
    error: str | None = None
    # CUDA graphs: whether the mode put this graph under them (None: it does not, or the device
    # has none), whether the profile replayed it from one (its times), and why not where not.
    cuda_graphs: bool | None = None
    replayed: bool = False
    cuda_graphs_note: str | None = None
    # How the mode runs it (core/replay_plan.py): partitions, eager steps, copied inputs, or why eager.
    how_it_ran: str | None = None
    # Accelerators: the same iterations launched back to back with one sync at the end.
    pipelined: PipelinedRun | None = None
    pipelined_trace: str | None = None
    # Source attribution (schema 2): extern calls of call() one by one, a note where it is partial.
    sites: list[CallSite] = field(default_factory=list)
    attribution: str | None = None
    recompute_marked: bool = False  # its record marks recomputed nodes (core/source_store.py)
    weight_copy_ms: float | None = None  # copying weights for extern calls (core/weight_copies.py)
    # Each extern call's [bytes, FLOPs] by its position among the module's extern calls
    # (``CallSite.index``; schema 4, core/work.py): a call site's own % of peak.
    site_counts: list[list[float | None]] = field(default_factory=list)
    # Dynamic shapes (core/symbols.py; empty: static): each size symbol -> the value profiled
    # at, and where ``--size`` set it, the module's own size hint; each data-dependent size (u0)
    # -> its value in the profiled call (runner/unbacked.py); nn.Module path -> its class.
    sizes: dict[str, int] = field(default_factory=dict)
    size_hints: dict[str, int] = field(default_factory=dict)
    unbacked: dict[str, int] = field(default_factory=dict)
    # The sizes it was called at, in order met: [{"sizes": {symbol: value}, "calls": n}] (core/call_sizes.py).
    call_sizes: list[dict[str, Any]] = field(default_factory=list)
    # Each tensor input's shape where it was profiled (core/static_twin.py; []: not known).
    input_shapes: list[list[int]] = field(default_factory=list)
    # Each tensor input's dtype as the module spells it (``float32``), in the same order; []:
    # not known (a run saved before they were recorded, or one input's not said).
    input_dtypes: list[str] = field(default_factory=list)
    module_types: dict[str, str] = field(default_factory=dict)
    # A module with no line of the model -> [file, line, function, code] of the line that built it.
    module_sites: dict[str, list[Any]] = field(default_factory=dict)
    # The user function it was compiled from (runner/dynamo_frame.py): {name, file, line}.
    compiled_from: dict[str, Any] | None = None
    # [inputs set to the model's first call's integer/boolean values, of them those put back
    # before every call as the graph changes them in place] (runner/call_inputs.py); []: none.
    first_call_inputs: list[int] = field(default_factory=list)
    # How many times the model called it: per timed step (a factory model), in the whole run (a
    # script); None where not counted (an older run; CUDA-graph replays bypass the counted call).
    calls: float | None = None

    @property
    def busy_pct(self) -> float:
        return 100.0 * self.busy_ms / self.wall_ms if self.wall_ms > 0 else 0.0

    @property
    def ok(self) -> bool:
        return self.status == Status.OK

    def steady(self) -> Steady:
        """The iterations the policy kept (all of them in a result saved before it)."""
        return from_left_out(len(self.wall_samples_ms), self.left_out, self.limit_ms)

    def summary(self, samples: list[float], fallback: float | None = None) -> Summary:
        """The figure and interval of a per-iteration series of this graph (its wall, a
        kernel's time, a category's) over the graph's steady iterations."""
        kept = self.steady() if self.wall_samples_ms else from_left_out(len(samples), [])
        return summarize_steady(kept.pick(samples), len(self.left_out), fallback)

    @property
    def kept_load(self) -> Load | None:
        """Load from other processes during the window whose figures are reported."""
        if self.window is None or self.window >= len(self.window_load):
            return None
        return self.window_load[self.window]

    @property
    def kept_speed(self) -> float | None:
        """The machine's speed during the window whose figures are reported (1.0: the fastest
        the run saw; ``runner/speed.py``); None where it was not read."""
        if self.window is None or self.window >= len(self.window_speed):
            return None
        return self.window_speed[self.window]

    def to_dict(self) -> dict[str, Any]:
        """As ``asdict``, leaving out the optional fields that were not measured."""
        d = asdict(self)
        for name, unset in _GRAPH_OPTIONAL.items():
            if d[name] == unset:
                del d[name]
        if "window_load" in d:
            d["window_load"] = [x.to_dict() if x is not None else None for x in self.window_load]
        for k in d["kernels"]:
            for name in ("origin", *_KERNEL_COUNTS):
                if k[name] is None:
                    del k[name]
        for s in d.get("sites", []):
            if s["occurrence"] is None:  # an extern call (as before kernels' calls were split)
                del s["occurrence"]
        for o in (x["origin"] for x in [*d["kernels"], *d.get("sites", [])] if x.get("origin")):
            trim_json(o)  # fields said only where set
        return d


# KernelStat fields written only when set (a kernel not counted reads as before schema 4)
_KERNEL_COUNTS = ("bytes", "flops", "compute", "work_from", "beside", "own_calls", "copy_ms")

# GraphResult fields written only when set (a result without them reads the same).
_GRAPH_OPTIONAL: dict[str, Any] = {
    "busy_samples_ms": [],
    "left_out": [],
    "limit_ms": None,
    "clock_samples_ms": [],
    "window_load": [],
    "window_process": [],
    "window_speed": [],
    "speed_waited_s": 0.0,
    "cuda_graphs": None,
    "replayed": False,
    "cuda_graphs_note": None,
    "how_it_ran": None,
    "pipelined": None,
    "pipelined_trace": None,
    "sites": [],
    "attribution": None,
    "recompute_marked": False, "compiled_autograd": False, "weight_copy_ms": None,
    "site_counts": [],
    "compiled_from": None,
    "first_call_inputs": [],
    "calls": None,
    "call_sizes": [], "input_shapes": [], "input_dtypes": [],
    **{name: {} for name in ("sizes", "size_hints", "unbacked", "module_types", "module_sites")},
}

def known_fields(cls: type, d: dict[str, Any]) -> dict[str, Any]:
    """The items of ``d`` that name a field of the dataclass ``cls`` (those of a newer version
    left out)."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in d.items() if k in names}


def graph_from_dict(d: dict[str, Any]) -> GraphResult:
    d = dict(d)
    kernels = [kernel_from_dict(k) for k in d.pop("kernels", [])]
    loads = [Load.from_dict(x) for x in d.pop("window_load", None) or []]
    pipe = d.pop("pipelined", None)
    pipelined = PipelinedRun(**known_fields(PipelinedRun, pipe)) if pipe else None
    sites = [CallSite.from_dict(s) for s in d.pop("sites", [])]
    return GraphResult(
        kernels=kernels, pipelined=pipelined, sites=sites, window_load=loads, **known_fields(GraphResult, d)
    )


def kernel_from_dict(d: dict[str, Any]) -> KernelStat:
    o = d.get("origin")
    return KernelStat(**{**known_fields(KernelStat, d), "origin": Origin.from_dict(o) if o else None})

