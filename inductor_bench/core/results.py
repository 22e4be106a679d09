"""The saved, plain-data record between measuring and analysing.

A ``BreakdownResult`` is written as ``breakdown.json`` in every run directory and by
``--json``; every report can be re-rendered from it with no torch and no GPU. Times are
milliseconds per iteration of the graph's own harness (one call of the compiled module).
Raw per-iteration samples are kept, every iteration's; each figure is the mean over the
graph's steady iterations (``core/steady.py``: the policy, and ``GraphResult.left_out`` the
disturbed iterations it left out), so a later diff judges noise on the same figures.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from . import step_totals
from .autotune_records import Autotune, autotune_from_dict
from .autotune_records import KernelMatch as KernelMatch  # re-exported: results name them
from .autotune_records import KernelRetuning as KernelRetuning
from .autotune_records import Recompile as Recompile
from .autotune_records import RetunedKernel as RetunedKernel
from .ceilings import Roofline
from .devices import HOST_BACKEND, canonical_name
from .errors import ResultError
from .load import Load
from .outside import OutsideProfile
from .pipelined import PipelinedRun
from .run_extras import CompileCache as CompileCache  # re-exported: results name them
from .run_extras import PeakMemory as PeakMemory
from .run_extras import StepTurns as StepTurns
from .run_extras import TorchSettings as TorchSettings
from .run_extras import Totals
from .sources import CallSite, Origin, trim_json
from .steady import RULES, Steady, from_left_out
from .summaries import Summary, summarize_steady
from .vocab import CompileMode, Status

SCHEMA = "inductor-bench/breakdown"
# 2: kernel origins, extern call sites (core/sources.py); 3: the statistics policy
# (core/steady.py): times are means over the steady iterations, ``left_out`` the others;
# 4: each kernel's bytes and FLOPs, the measured ceilings (``extras.roofline``).
SCHEMA_VERSION = 4
READABLE_VERSIONS = (1, 2, 3, 4)  # before 3, times are means over every iteration
STEADY_SINCE = 3


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
_KERNEL_COUNTS = ("bytes", "flops", "compute", "work_from", "beside", "own_calls")

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
    "call_sizes": [], "input_shapes": [],
    **{name: {} for name in ("sizes", "size_hints", "unbacked", "module_types", "module_sites")},
}

# What a run adds beside its graphs; saved under "extras" in that order, each only when set.
EXTRAS = ("compile_s", "step_samples_ms", "step_turns", "peak_memory", "elapsed_s", "autotune",
          "torch_settings", "subgraphs_left_out", "compile_cache", "roofline", "graph_breaks", "outside",
          "compiles", "script_stopped_s")


@dataclass
class BreakdownResult:
    model: str  # display name (file stem)
    model_path: str = ""
    device: str = HOST_BACKEND.name
    device_name: str = ""
    mode: str = CompileMode.DEFAULT
    train: bool = False
    dtype: str = "float32"
    autocast: bool = False
    freezing: bool = False
    batch_size: int | None = None
    script: bool = False  # the file ran as a script (no factory)
    script_args: list[str] = field(default_factory=list)  # its sys.argv after the file (given after --)
    script_stopped_s: float | None = None  # the script was stopped this long after it started
    versions: dict[str, str] = field(default_factory=dict)  # torch, triton, python, tool
    created: str = ""
    run_dir: str = ""
    iterations: int = 0
    graphs: list[GraphResult] = field(default_factory=list)
    status: str = Status.OK  # ok | partial | failed | running
    errors: list[str] = field(default_factory=list)
    compile_s: float | None = None  # the first call of the model, timed on its own
    step_samples_ms: list[float] = field(default_factory=list)  # steady-state model calls
    step_turns: StepTurns | None = None  # the step and the graphs in turns (core/step.py)
    outside: OutsideProfile | None = None  # a profiled step's ops outside the graphs (core/outside.py)
    peak_memory: PeakMemory | None = None
    elapsed_s: float | None = None  # the whole run, compile and profiling included
    autotune: Autotune | None = None  # --autotune-top
    # The process-wide precision/backend settings the model ran with (TF32, cuDNN, SDPA
    # backends, ...), read after its first step and applied by every profiling worker.
    torch_settings: TorchSettings | None = None
    # Modules Inductor compiled only to benchmark an autotuning choice (core/subgraphs.py):
    # not profiled; each {"path": ..., "reason": ...}.
    subgraphs_left_out: list[dict[str, str]] = field(default_factory=list)
    compile_cache: CompileCache | None = None
    # The measured ceilings (and the datasheet's) the kernels' % of peak is held against.
    roofline: Roofline | None = None
    # Where Dynamo broke the graph (core/graph_breaks.py): each {file, line, reason, skipped, count}.
    graph_breaks: list[dict[str, Any]] = field(default_factory=list)
    # Dynamo's compiles: why each was made, its times, a recompile limit hit (core/compiles.py).
    compiles: list[dict[str, Any]] = field(default_factory=list)
    # The statistics rules that judged its samples (``steady.RULES``); None: saved before they
    # were numbered (``core/judged.py``).
    rules: int | None = RULES
    schema: str = SCHEMA
    schema_version: int = SCHEMA_VERSION

    def measured(self) -> list[GraphResult]:
        return [g for g in self.graphs if g.ok]

    def weights(self) -> dict[str, float]:
        """Graph id -> the calls each measured graph is weighed by (core/step_totals.py)."""
        return step_totals.graph_weights(self.measured())

    def totals(self) -> Totals:
        return step_totals.totals(self.measured())

    def step_summary(self) -> Summary:
        """The step through the graphs' harnesses: each graph's wall times its calls, added."""
        return step_totals.step_summary(self.measured())

    def kernel_summary(self, category: str | None = None) -> Summary:
        """The kernel time of the step (of one category), each graph times its calls."""
        return step_totals.kernel_summary(self.measured(), category)

    def graph(self, graph_id: str) -> GraphResult:
        if (g := next((g for g in self.graphs if g.id == graph_id), None)) is not None:
            return g
        raise ResultError(f"no graph {graph_id!r} in this result")

    # -- JSON ----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        for f in fields(self):
            if f.name == EXTRAS[0]:
                d["extras"] = self._extras()
            if f.name == "graphs":
                d["graphs"] = [g.to_dict() for g in self.graphs]
            elif f.name not in EXTRAS and not (f.name == "script_args" and not self.script_args) and not (
                    f.name == "rules" and self.rules is None):  # a result without them stays so
                d[f.name] = _plain(getattr(self, f.name))
        d["totals"] = asdict(self.totals())
        return d

    def _extras(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in EXTRAS:
            v = getattr(self, name)
            if v is None or v == []:
                continue
            out[name] = v.to_dict() if hasattr(v, "to_dict") else _plain(v)
        return out  # the roofline's figures per kernel: added on writing (core/result_json.py)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BreakdownResult:
        if not isinstance(d, dict) or d.get("schema") != SCHEMA:
            raise ResultError("not an inductor-bench breakdown result (schema field missing)")
        if d.get("schema_version") not in READABLE_VERSIONS:
            raise ResultError(
                f"breakdown schema version {d.get('schema_version')} is not supported "
                f"(this inductor-bench reads versions {', '.join(map(str, READABLE_VERSIONS))})"
            )
        d = dict(d, device_name=canonical_name(str(d.get("device_name") or "")))
        d.pop("totals", None)
        graphs = [_graph_from_dict(g) for g in d.pop("graphs", [])]
        extras = dict(d.pop("extras", None) or {})
        peak = extras.pop("peak_memory", None)
        ts = extras.pop("torch_settings", None)
        cc = extras.pop("compile_cache", None)
        turns = extras.pop("step_turns", None)
        return cls(
            graphs=graphs,
            rules=d.pop("rules", None),  # none recorded: not the default, the rules of today
            step_turns=StepTurns(**_known(StepTurns, turns)) if turns else None,
            torch_settings=TorchSettings(**_known(TorchSettings, ts)) if ts else None,
            compile_cache=CompileCache(**_known(CompileCache, cc)) if cc else None,
            peak_memory=PeakMemory(**_known(PeakMemory, peak)) if peak else None,
            autotune=autotune_from_dict(extras.pop("autotune", None)),
            roofline=Roofline.from_dict(extras.pop("roofline", None)),
            outside=OutsideProfile.from_dict(extras.pop("outside", None)),
            **_known(cls, {**extras, **d}),
        )


def _known(cls: type, d: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in d.items() if k in names}


def _plain(v: Any) -> Any:
    """Dataclasses (at any depth) as dicts, the way ``asdict`` writes them."""
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return asdict(v) if hasattr(v, "__dataclass_fields__") else v


def _graph_from_dict(d: dict[str, Any]) -> GraphResult:
    d = dict(d)
    kernels = [_kernel_from_dict(k) for k in d.pop("kernels", [])]
    loads = [Load.from_dict(x) for x in d.pop("window_load", None) or []]
    pipe = d.pop("pipelined", None)
    pipelined = PipelinedRun(**_known(PipelinedRun, pipe)) if pipe else None
    sites = [CallSite.from_dict(s) for s in d.pop("sites", [])]
    return GraphResult(
        kernels=kernels, pipelined=pipelined, sites=sites, window_load=loads, **_known(GraphResult, d)
    )


def _kernel_from_dict(d: dict[str, Any]) -> KernelStat:
    o = d.get("origin")
    return KernelStat(**{**_known(KernelStat, d), "origin": Origin.from_dict(o) if o else None})

