"""The saved, plain-data record between measuring and analysing.

A ``BreakdownResult`` is written as ``breakdown.json`` in every run directory and by
``--json``; every report can be re-rendered from it with no torch and no GPU. Times are
milliseconds per iteration of the graph's own harness (one call of the compiled module).
Raw per-iteration samples are kept so that a later diff can judge noise.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from .errors import ResultError
from .stats import sum_samples

SCHEMA = "inductor-bench/breakdown"
SCHEMA_VERSION = 1


@dataclass
class KernelStat:
    """One kernel (or extern op) of one graph."""

    name: str
    category: str
    calls: float  # launches per iteration
    ms: float  # mean time per iteration (all launches)
    samples_ms: list[float] = field(default_factory=list)  # time in each iteration
    aten_ops: list[str] = field(default_factory=list)  # origin ATen ops
    source_nodes: list[str] = field(default_factory=list)  # FX nodes it was fused from
    file: str | None = None  # kernel file, relative to the run directory
    launched_by: str | None = None  # the CPU op that launched it (extern GPU kernels)


@dataclass
class GraphResult:
    """One compiled module: a forward, backward or inference graph of one frame."""

    id: str  # unique in the run, e.g. "0-forward", "1-inference"
    role: str  # forward | backward | inference
    aot_id: str = ""  # Inductor's AOT ID, e.g. "0_forward"
    frame_id: int | None = None
    frame_compile_id: int | None = None
    module: str | None = None  # compiled module, relative to the run directory
    trace: str | None = None  # chrome trace, relative to the run directory
    device: str = "cpu"
    iterations: int = 0
    wall_ms: float = 0.0  # mean wall time of one harness call
    wall_samples_ms: list[float] = field(default_factory=list)
    busy_ms: float = 0.0  # union of kernel intervals per iteration
    kernel_ms: float = 0.0  # sum of kernel times per iteration (== sum of categories)
    categories: dict[str, float] = field(default_factory=dict)  # category -> ms
    kernels: list[KernelStat] = field(default_factory=list)  # sorted by ms, descending
    # The profiler windows (separate profiler sessions) this graph was profiled in: median
    # iteration time of each, minor page faults per iteration of each (None where the OS does
    # not count them), and the index of the one kept (the fastest; the times above are its).
    windows_ms: list[float] = field(default_factory=list)
    window_faults: list[float | None] = field(default_factory=list)
    window: int | None = None
    status: str = "ok"  # ok | failed | timeout | skipped
    error: str | None = None

    @property
    def busy_pct(self) -> float:
        return 100.0 * self.busy_ms / self.wall_ms if self.wall_ms > 0 else 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class Totals:
    """All graphs of one step together (each graph called once per step)."""

    wall_ms: float
    busy_ms: float
    kernel_ms: float
    categories: dict[str, float]
    kernel_count: int
    graphs: int
    wall_samples_ms: list[float]

    @property
    def busy_pct(self) -> float:
        return 100.0 * self.busy_ms / self.wall_ms if self.wall_ms > 0 else 0.0


@dataclass
class BreakdownResult:
    model: str  # display name (file stem)
    model_path: str = ""
    device: str = "cpu"
    device_name: str = ""
    mode: str = "default"
    train: bool = False
    dtype: str = "float32"
    autocast: bool = False
    freezing: bool = False
    batch_size: int | None = None
    script: bool = False  # the file ran as a script (no factory)
    versions: dict[str, str] = field(default_factory=dict)  # torch, triton, python, tool
    created: str = ""
    run_dir: str = ""
    iterations: int = 0
    graphs: list[GraphResult] = field(default_factory=list)
    status: str = "ok"  # ok | partial | failed
    errors: list[str] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)  # autotune, compile timings ...
    schema: str = SCHEMA
    schema_version: int = SCHEMA_VERSION

    def measured(self) -> list[GraphResult]:
        return [g for g in self.graphs if g.ok]

    def totals(self) -> Totals:
        gs = self.measured()
        cats: dict[str, float] = {}
        for g in gs:
            for k, v in g.categories.items():
                cats[k] = cats.get(k, 0.0) + v
        return Totals(
            wall_ms=sum(g.wall_ms for g in gs),
            busy_ms=sum(g.busy_ms for g in gs),
            kernel_ms=sum(g.kernel_ms for g in gs),
            categories=cats,
            kernel_count=sum(len(g.kernels) for g in gs),
            graphs=len(gs),
            wall_samples_ms=step_samples(gs),
        )

    def graph(self, graph_id: str) -> GraphResult:
        for g in self.graphs:
            if g.id == graph_id:
                return g
        raise ResultError(f"no graph {graph_id!r} in this result")

    # -- JSON ----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["totals"] = asdict(self.totals())
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BreakdownResult:
        if not isinstance(d, dict) or d.get("schema") != SCHEMA:
            raise ResultError("not an inductor-bench breakdown result (schema field missing)")
        if d.get("schema_version") != SCHEMA_VERSION:
            raise ResultError(
                f"breakdown schema version {d.get('schema_version')} is not supported "
                f"(this inductor-bench reads version {SCHEMA_VERSION})"
            )
        d = dict(d)
        d.pop("totals", None)
        graphs = [_graph_from_dict(g) for g in d.pop("graphs", [])]
        return cls(graphs=graphs, **_known(cls, d))


def _known(cls: type, d: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in d.items() if k in names}


def _graph_from_dict(d: dict[str, Any]) -> GraphResult:
    d = dict(d)
    kernels = [KernelStat(**_known(KernelStat, k)) for k in d.pop("kernels", [])]
    return GraphResult(kernels=kernels, **_known(GraphResult, d))


def step_samples(graphs: list[GraphResult]) -> list[float]:
    """Per-iteration step samples: the i-th sample of every graph added together."""
    return sum_samples([g.wall_samples_ms for g in graphs if g.wall_samples_ms])


def load_result(path: str | Path) -> BreakdownResult:
    """Read a breakdown result from a JSON file or a run directory."""
    p = Path(path)
    if p.is_dir():
        p = p / "breakdown.json"
    if not p.exists():
        raise ResultError(f"{p}: no such result file")
    try:
        data = json.loads(p.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ResultError(f"{p}: not readable as JSON ({e})") from None
    return BreakdownResult.from_dict(data)
