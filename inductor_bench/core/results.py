"""The saved, plain-data record between measuring and analysing.

A ``BreakdownResult`` is written as ``breakdown.json`` in every run directory and by
``--json``; every report can be re-rendered from it with no torch and no GPU. Times are
milliseconds per iteration of the graph's own harness (one call of the compiled module).
Raw per-iteration samples are kept, every iteration's; each figure is the mean over the
graph's steady iterations (``core/steady.py``: the policy, and ``GraphResult.left_out`` the
disturbed iterations it left out), so a later diff judges noise on the same figures. Each
graph's record is in ``core/graph_result.py``.
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
from .graph_result import GraphResult as GraphResult  # re-exported: results name them
from .graph_result import KernelStat as KernelStat
from .graph_result import graph_from_dict, known_fields
from .outside import OutsideProfile
from .run_extras import CompileCache as CompileCache  # re-exported: results name them
from .run_extras import PeakMemory as PeakMemory
from .run_extras import StepTurns as StepTurns
from .run_extras import TorchSettings as TorchSettings
from .run_extras import Totals
from .steady import RULES
from .summaries import Summary
from .vocab import CompileMode, Status

SCHEMA = "inductor-bench/breakdown"
# 2: kernel origins, extern call sites (core/sources.py); 3: the statistics policy
# (core/steady.py): times are means over the steady iterations, ``left_out`` the others;
# 4: each kernel's bytes and FLOPs, the measured ceilings (``extras.roofline``).
SCHEMA_VERSION = 4
READABLE_VERSIONS = (1, 2, 3, 4)  # before 3, times are means over every iteration
STEADY_SINCE = 3


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
        graphs = [graph_from_dict(g) for g in d.pop("graphs", [])]
        extras = dict(d.pop("extras", None) or {})
        peak = extras.pop("peak_memory", None)
        ts = extras.pop("torch_settings", None)
        cc = extras.pop("compile_cache", None)
        turns = extras.pop("step_turns", None)
        return cls(
            graphs=graphs,
            rules=d.pop("rules", None),  # none recorded: not the default, the rules of today
            step_turns=StepTurns(**known_fields(StepTurns, turns)) if turns else None,
            torch_settings=TorchSettings(**known_fields(TorchSettings, ts)) if ts else None,
            compile_cache=CompileCache(**known_fields(CompileCache, cc)) if cc else None,
            peak_memory=PeakMemory(**known_fields(PeakMemory, peak)) if peak else None,
            autotune=autotune_from_dict(extras.pop("autotune", None)),
            roofline=Roofline.from_dict(extras.pop("roofline", None)),
            outside=OutsideProfile.from_dict(extras.pop("outside", None)),
            **known_fields(cls, {**extras, **d}),
        )


def _plain(v: Any) -> Any:
    """Dataclasses (at any depth) as dicts, the way ``asdict`` writes them."""
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return asdict(v) if hasattr(v, "__dataclass_fields__") else v
