"""The records of a diff (``diff.py`` builds them): kernel by kernel, per category, one
section per comparable pair, and the whole ``Diff`` with its status. Pure; no torch."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .ceilings import Ceilings, GroupRoof
from .stats import Change
from .unmeasured import Unmeasured
from .vocab import Change as KernelChange
from .vocab import Outcome, Verdict

ADDED = KernelChange.ADDED
REMOVED = KernelChange.REMOVED
SLOWER = KernelChange.SLOWER
FASTER = KernelChange.FASTER
# a paired kernel both sides compiled to one code (called as often, or not)
ONE_CODE = frozenset({Verdict.SAME_CODE, Verdict.CALLS_CHANGED})


@dataclass
class CallMove:
    """One call of an extern op paired with the same call on the other side (``call_pairs.py``:
    the same op from the same place in the model): its own time in head (per step) and % of its
    limit on each side."""

    graph: str
    name: str  # the op with the call's mark, as head's report names it: ``aten::mm #2``
    head_ms: float
    base_pct: float | None = None
    head_pct: float | None = None
    no_distance: str = ""
    base_name: str | None = None  # as base's report names it, where its index differs
    # each side's input shapes, where they differ: its time is then not the same work's
    base_shapes: list[str] | None = None
    head_shapes: list[str] | None = None
    # the sides ("base", "head") where its % is held against a compute ceiling it beat (``!``)
    above_ceiling: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items()
                if k != "graph" and v not in (None, "") and not (k == "above_ceiling" and not v)}


@dataclass
class KernelDiff:
    # added | removed | slower | faster | within noise | too few samples | same code | calls changed
    status: str
    graph: str  # graph id in head (base for removed kernels)
    name: str  # name in head (base for removed kernels)
    category: str
    aten_ops: list[str]
    base_ms: float = 0.0  # median per iteration (the recorded mean when there are no samples)
    head_ms: float = 0.0
    base_name: str | None = None  # when matched under another name
    base_graph: str | None = None  # when matched in another graph
    matched_by: str | None = None  # name | origin | name stem
    change: Change | None = None
    # % of its limit on each side (core/roofline.py), where that side has ceilings and a count
    base_pct: float | None = None
    head_pct: float | None = None
    # why a side's % is no distance to its limit ("latency-bound in base", "in cache in head"):
    # its move is not one toward the limit (core/ceilings.no_distance)
    no_distance: str = ""
    # the sides ("base", "head") where its % takes in a kernel above the compute ceiling (``!``)
    above_ceiling: list[str] = field(default_factory=list)
    # an extern op called at several places, each call paired with the same call on the other
    # side (``call_pairs.py``): each call's move, as the report shows each
    calls: list[CallMove] = field(default_factory=list)
    # why its calls were not paired ("5 calls in base, 4 in head"): its move is the op's
    calls_unpaired: str = ""
    # beside paired calls, those made from a place the other side made none ("#5 in head only")
    calls_one_side: str = ""
    # its paired calls whose input shapes differ, as head names them (``aten::mm #1``): its time
    # is then not the same work's on both sides, whatever its verdict says
    shapes_changed: list[str] = field(default_factory=list)
    # a kernel without extern calls whose graph was given other inputs (more, fewer, or of
    # other shapes)
    # (``call_pairs.inputs_changed``): its time not the same work's either
    graph_inputs_changed: bool = False

    @property
    def other_work(self) -> bool:
        """Its time is not the same work's on both sides: its calls' or its graph's inputs changed."""
        return bool(self.shapes_changed) or self.graph_inputs_changed

    @property
    def delta_ms(self) -> float:
        return self.head_ms - self.base_ms

    @property
    def renamed(self) -> bool:
        return self.base_name is not None and self.base_name != self.name

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in _KERNEL_KEYS}
        d.update({k: getattr(self, k) for k in ("base_pct", "head_pct", "no_distance", "above_ceiling",
                                              "calls_unpaired", "calls_one_side")
                  if getattr(self, k) not in (None, "", [])})
        if self.calls:
            d["calls"] = [c.to_dict() for c in self.calls]
        if self.other_work:  # a graph's inputs as the kernel's own name
            d["shapes_changed"] = self.shapes_changed + ([self.name] if self.graph_inputs_changed else [])
        return {**d, "change": self.change.to_dict() if self.change else None}


_KERNEL_KEYS = ("status", "graph", "name", "category", "aten_ops", "base_ms", "head_ms", "delta_ms",
                "base_name", "base_graph", "matched_by")


@dataclass
class CategoryDiff:
    category: str
    change: Change

    def to_dict(self) -> dict[str, Any]:
        return {"category": self.category, **self.change.to_dict()}


@dataclass
class SectionDiff:
    """One comparable pair: the two breakdowns, or one mode of two compares."""

    mode: str
    step: Change
    step_source: str  # StepSource.HARNESS | StepSource.MODEL
    kernel_time: Change | None = None
    busy_pct: tuple[float, float] | None = None
    categories: list[CategoryDiff] = field(default_factory=list)
    kernels: list[KernelDiff] = field(default_factory=list)
    graphs_added: list[str] = field(default_factory=list)
    graphs_removed: list[str] = field(default_factory=list)
    compile_s: tuple[float | None, float | None] | None = None  # compare only
    peak_memory_bytes: tuple[int | None, int | None] | None = None  # compare only
    unmeasured: list[Unmeasured] = field(default_factory=list)  # graphs on one side only
    # each side's kernels' time-weighted % of peak, qualified as the views' total row qualifies it
    # (core/ceilings.group_roof); a side None: no ceilings; all None: neither side has any
    roofline_sides: tuple[GroupRoof | None, GroupRoof | None] | None = None
    # where the two sides' ceilings differ: (base's, head's, the shared set both were held
    # against: the higher of each figure, or None when the devices differ)
    roofline_ceilings: tuple[Ceilings, Ceilings, Ceilings | None] | None = None
    roofline_loaded: bool = False  # a side's ceilings were measured under load (may be low)
    # graph breaks (core/graph_breaks.py) met on one side only: a new one is a classic slowdown
    breaks_added: list[dict[str, Any]] = field(default_factory=list)
    breaks_removed: list[dict[str, Any]] = field(default_factory=list)
    # functions that hit Dynamo's recompile limit on one side only (core/compiles.py)
    limits_added: list[str] = field(default_factory=list)
    limits_removed: list[str] = field(default_factory=list)
    # (graph, base calls, head calls) of graphs the model called a different number of times
    # (per step, or in the script): the step adds each graph's calls, so it moves with them
    calls_changed: list[tuple[str, float, float]] = field(default_factory=list)
    # both sides compiled the same code for every graph, called as often at the same sizes:
    # no verdict is significant, what moved is the processes' (core/diff_same_code.same_code_section)
    same_code: bool = False
    # ms per step of the forward's work the backward graphs do again (core/views.recomputed), on
    # each side; None where neither side recomputes any
    recomputed_ms: tuple[float, float] | None = None
    # the workload options the two sides ran otherwise (``batch size 8 -> 16``,
    # core/other_workload.py): its figures are shown, none judged
    other_workload: list[str] = field(default_factory=list)
    # graph -> how its inputs differ (``2 inputs more in head (512x512, 512)``,
    # core/graph_inputs.py), where kernels without calls were put down to it
    # (``call_pairs.inputs_changed``): the section's work is then not the same on both sides
    graph_inputs: dict[str, str] = field(default_factory=dict)

    def kernels_with(self, *statuses: str) -> list[KernelDiff]:
        return [k for k in self.kernels if k.status in statuses]

    def shapes_changed(self) -> list[str]:
        """The paired extern calls whose inputs changed size (``0-forward aten::mm #1``): the
        section's work is then not the same on both sides, its step's change the model's too
        (so is it where ``graph_inputs`` holds a graph)."""
        return list(dict.fromkeys(f"{k.graph} {c}" for k in self.kernels for c in k.shapes_changed))

    def responsible(self, limit: int | None = None) -> list[KernelDiff]:
        """Added or significantly slower kernels, the biggest increase first."""
        ks = sorted(self.kernels_with(ADDED, SLOWER), key=lambda k: -k.delta_ms)
        return ks[:limit] if limit is not None else ks

    @property
    def roofline_pct(self) -> tuple[float | None, float | None] | None:
        """Each side's time-weighted % of peak (``GroupRoof.pct``)."""
        return self._roofline_figure("pct")

    @property
    def roofline_share(self) -> tuple[float | None, float | None] | None:
        """The share (%) of each side's kernel time its % is a mean over (``GroupRoof.share``)."""
        return self._roofline_figure("share")

    def _roofline_figure(self, name: str) -> tuple[float | None, float | None] | None:
        if self.roofline_sides is None:
            return None
        b, h = (getattr(x, name) if x is not None else None for x in self.roofline_sides)
        return b, h

    def to_dict(self) -> dict[str, Any]:
        d = {k: _plain(getattr(self, k)) for k in _SECTION_KEYS}
        if self.roofline_sides is not None:
            d["roofline_pct"] = list(self._roofline_figure("pct") or ())
            d["roofline_judged_share"] = list(self._roofline_figure("share") or ())
            d["roofline_step"] = [x.to_dict() if x else None for x in self.roofline_sides]
        if self.recomputed_ms is not None:  # the tables' "recomputed in the backward, ms" row
            d["recomputed_in_backward_ms"] = list(self.recomputed_ms)
        if self.roofline_ceilings is not None:
            d["roofline_ceilings"] = dict(zip(("base", "head", "shared"), (
                None if c is None else {"gbps": c.gbps, "tflops": c.tflops} for c in self.roofline_ceilings),
                strict=True))
        for k in ("breaks_added", "breaks_removed", "limits_added", "limits_removed", "calls_changed",
                  "same_code", "other_workload", "graph_inputs"):
            if getattr(self, k):
                d[k] = getattr(self, k)
        return d


_SECTION_KEYS = ("mode", "step_source", "step", "kernel_time", "busy_pct", "categories", "kernels",
                 "graphs_added", "graphs_removed", "compile_s", "peak_memory_bytes", "unmeasured")


def _plain(v: Any) -> Any:
    """Records as dicts, tuples as lists, for JSON."""
    if hasattr(v, "to_dict"):
        return v.to_dict()
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


@dataclass
class Diff:
    kind: str  # breakdown | compare
    base_model: str
    head_model: str
    device: str
    min_rel: float
    sections: list[SectionDiff]
    skipped: list[str] = field(default_factory=list)  # modes not diffed, with the reason
    warnings: list[str] = field(default_factory=list)
    base_label: str = "base"
    head_label: str = "head"
    columns_unmeasured: list[Unmeasured] = field(default_factory=list)  # compare modes
    # the sides ("base", "head") whose figures came from a busy or slow machine (the warnings)
    disturbed: list[str] = field(default_factory=list)
    # of two compares: each side's columns (a column that did not run with its status)
    columns: tuple[list[str], list[str]] | None = None
    # the workload options base ran otherwise than head (core/other_workload.py): no verdict
    other_workload: list[str] = field(default_factory=list)

    @property
    def unmeasured(self) -> list[Unmeasured]:
        """Every graph or column measured on one side only."""
        return self.columns_unmeasured + [u for s in self.sections for u in s.unmeasured]

    def nothing_compared(self) -> str | None:
        """Why no section could be judged and nothing was lost on one side (two compares with no
        column in both); None where something was compared."""
        if self.sections or self.unmeasured:
            return None
        b, h = self.columns or ([], [])
        return (f"no column ran in both runs (base has {', '.join(b) or 'none'}; head has "
                f"{', '.join(h) or 'none'})")

    def regressions(self, threshold_pct: float = 0.0) -> list[SectionDiff]:
        """Sections whose step time rose significantly and by more than threshold_pct %."""
        return [
            s
            for s in self.sections
            if s.step.slower and (s.step.rel_pct is None or s.step.rel_pct > threshold_pct)
        ]

    def status(self) -> str:
        """regression | not comparable | same code | faster | within noise | inconclusive,
        over all sections' step time; not comparable as well where there is no section, or
        the sides ran other workloads."""
        steps = [s.step for s in self.sections]
        if any(c.slower for c in steps):
            return Outcome.REGRESSION
        if self.unmeasured or not self.sections or self.other_workload:
            return Outcome.NOT_COMPARABLE
        if all(s.same_code for s in self.sections):
            return Outcome.SAME_CODE
        if any(c.faster for c in steps):
            return Outcome.FASTER
        if all(c.verdict == Verdict.TOO_FEW for c in steps):
            return Outcome.INCONCLUSIVE
        return Outcome.NO_CHANGE

    def to_dict(self) -> dict[str, Any]:
        d = {
            "schema": "inductor-bench/diff",
            "schema_version": 1,
            "kind": self.kind,
            "status": self.status(),
            "base": {"label": self.base_label, "model": self.base_model},
            "head": {"label": self.head_label, "model": self.head_model},
            "device": self.device,
            "min_change_pct": 100.0 * self.min_rel,
            "sections": [s.to_dict() for s in self.sections],
            "skipped": self.skipped,
            "not_comparable": [u.to_dict() for u in self.unmeasured],
            "warnings": self.warnings,
            "disturbed": self.disturbed,
        }
        if self.other_workload:
            d["other_workload"] = self.other_workload
        if why := self.nothing_compared():
            d["nothing_compared"] = why
            if self.columns is not None:
                d["columns"] = {"base": self.columns[0], "head": self.columns[1]}
        return d
