"""Two results -> a diff record: step time, categories, busy %, and kernel by kernel.

Base and head are two breakdown results (one section) or two compare results (one section
per mode that ran in both). Kernels are paired by ``match.py``. Every change of a measured
quantity is judged by ``stats.judge``: significant, within noise, or too few samples.

A regression is a significant increase of a section's step time; only step time gates a
merge (``Diff.regressions``): a single kernel may get slower while the step gets faster
(work moved into it from a kernel that vanished), and the step is what users pay for.

Pure Python; no torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .categories import order as category_order
from .comparable import comparability
from .compare import CompareResult, ModeResult
from .devices import backend
from .errors import UsageError
from .match import KernelRef, match_kernels
from .results import BreakdownResult, GraphResult, KernelStat
from .stats import Change, compare_samples, sum_samples, summarize
from .step import disturbances
from .vocab import Change as KernelChange
from .vocab import Outcome, StepSource, Verdict

ADDED = KernelChange.ADDED
REMOVED = KernelChange.REMOVED
SLOWER = KernelChange.SLOWER
FASTER = KernelChange.FASTER

Result = BreakdownResult | CompareResult


# ---- records ------------------------------------------------------------------------------


@dataclass
class KernelDiff:
    status: str  # added | removed | slower | faster | within noise | too few samples
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

    @property
    def delta_ms(self) -> float:
        return self.head_ms - self.base_ms

    @property
    def renamed(self) -> bool:
        return self.base_name is not None and self.base_name != self.name

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in _KERNEL_KEYS}
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

    def kernels_with(self, *statuses: str) -> list[KernelDiff]:
        return [k for k in self.kernels if k.status in statuses]

    def responsible(self, limit: int | None = None) -> list[KernelDiff]:
        """Added or significantly slower kernels, the biggest increase first."""
        ks = sorted(self.kernels_with(ADDED, SLOWER), key=lambda k: -k.delta_ms)
        return ks[:limit] if limit is not None else ks

    def to_dict(self) -> dict[str, Any]:
        return {k: _plain(getattr(self, k)) for k in _SECTION_KEYS}


_SECTION_KEYS = ("mode", "step_source", "step", "kernel_time", "busy_pct", "categories", "kernels",
                 "graphs_added", "graphs_removed", "compile_s", "peak_memory_bytes")


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

    def regressions(self, threshold_pct: float = 0.0) -> list[SectionDiff]:
        """Sections whose step time rose significantly and by more than threshold_pct %."""
        return [
            s
            for s in self.sections
            if s.step.slower and (s.step.rel_pct is None or s.step.rel_pct > threshold_pct)
        ]

    def status(self) -> str:
        """regression | faster | within noise | inconclusive, over all sections' step time."""
        steps = [s.step for s in self.sections]
        if any(c.slower for c in steps):
            return Outcome.REGRESSION
        if any(c.faster for c in steps):
            return Outcome.FASTER
        if not steps or all(c.verdict == Verdict.TOO_FEW for c in steps):
            return Outcome.INCONCLUSIVE
        return Outcome.NO_CHANGE

    def to_dict(self) -> dict[str, Any]:
        return {
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
            "warnings": self.warnings,
        }


# ---- building the diff --------------------------------------------------------------------


def _kernel_change(b: KernelRef, h: KernelRef, how: str, min_rel: float) -> KernelDiff:
    ch = compare_samples(
        b.kernel.samples_ms,
        h.kernel.samples_ms,
        min_rel=min_rel,
        base_fallback=b.kernel.ms,
        head_fallback=h.kernel.ms,
    )
    status = SLOWER if ch.slower else FASTER if ch.faster else ch.verdict
    return KernelDiff(
        status=status,
        graph=h.graph.id,
        name=h.kernel.name,
        category=h.kernel.category,
        aten_ops=list(h.kernel.aten_ops),
        base_ms=ch.base.median,
        head_ms=ch.head.median,
        base_name=b.kernel.name if b.kernel.name != h.kernel.name else None,
        base_graph=b.graph.id if b.graph.id != h.graph.id else None,
        matched_by=how,
        change=ch,
    )


def _lone_kernel(r: KernelRef, status: str) -> KernelDiff:
    ms = _typical_ms(r.kernel)
    return KernelDiff(
        status=status,
        graph=r.graph.id,
        name=r.kernel.name,
        category=r.kernel.category,
        aten_ops=list(r.kernel.aten_ops),
        base_ms=ms if status == REMOVED else 0.0,
        head_ms=ms if status == ADDED else 0.0,
    )


def _typical_ms(k: KernelStat) -> float:
    return summarize(k.samples_ms, fallback=k.ms).median


def kernel_diffs(base: list[GraphResult], head: list[GraphResult], min_rel: float) -> list[KernelDiff]:
    """Every kernel of both sides, biggest absolute change first."""
    pairs, removed, added = match_kernels(base, head)
    out = [_kernel_change(b, h, how, min_rel) for b, h, how in pairs]
    out += [_lone_kernel(r, REMOVED) for r in removed]
    out += [_lone_kernel(r, ADDED) for r in added]
    return sorted(out, key=lambda k: (-abs(k.delta_ms), k.graph, k.name))


def _category_samples(r: BreakdownResult, category: str) -> list[float]:
    lists = [k.samples_ms for g in r.measured() for k in g.kernels if k.category == category]
    if not lists:  # no kernel of this category: exactly 0 ms in every iteration
        return [0.0] * len(r.totals().wall_samples_ms)
    return sum_samples(lists)


def category_diffs(base: BreakdownResult, head: BreakdownResult, min_rel: float) -> list[CategoryDiff]:
    bt, ht = base.totals(), head.totals()
    cats = sorted(set(bt.categories) | set(ht.categories), key=lambda c: (category_order(c), c))
    out = []
    for c in cats:
        ch = compare_samples(
            _category_samples(base, c),
            _category_samples(head, c),
            min_rel=min_rel,
            base_fallback=bt.categories.get(c, 0.0),
            head_fallback=ht.categories.get(c, 0.0),
        )
        out.append(CategoryDiff(category=c, change=ch))
    return out


def _all_kernel_samples(graphs: list[GraphResult]) -> list[float]:
    return sum_samples([k.samples_ms for g in graphs for k in g.kernels])


def breakdown_section(
    base: BreakdownResult,
    head: BreakdownResult,
    min_rel: float,
    *,
    mode: str | None = None,
    step: Change | None = None,
) -> SectionDiff:
    """The section of two breakdowns; ``step`` replaces the harness step (compare modes)."""
    bt, ht = base.totals(), head.totals()
    bg, hg = base.measured(), head.measured()
    harness_step = step is None
    if step is None:
        step = compare_samples(
            bt.wall_samples_ms,
            ht.wall_samples_ms,
            min_rel=min_rel,
            base_fallback=bt.wall_ms,
            head_fallback=ht.wall_ms,
        )
    bids, hids = [g.id for g in bg], [g.id for g in hg]
    if mode is None:
        mode = head.mode if base.mode == head.mode else f"{base.mode} -> {head.mode}"
    return SectionDiff(
        mode=mode,
        step=step,
        step_source=StepSource.HARNESS if harness_step else StepSource.MODEL,
        kernel_time=compare_samples(
            _all_kernel_samples(bg),
            _all_kernel_samples(hg),
            min_rel=min_rel,
            base_fallback=bt.kernel_ms,
            head_fallback=ht.kernel_ms,
        ),
        busy_pct=(bt.busy_pct, ht.busy_pct),
        categories=category_diffs(base, head, min_rel),
        kernels=kernel_diffs(bg, hg, min_rel),
        graphs_added=[g for g in hids if g not in bids],
        graphs_removed=[g for g in bids if g not in hids],
    )


def mode_section(base: ModeResult, head: ModeResult, min_rel: float) -> SectionDiff:
    step = compare_samples(base.samples, head.samples, min_rel=min_rel)
    if base.breakdown and head.breakdown:
        sec = breakdown_section(base.breakdown, head.breakdown, min_rel, mode=head.label, step=step)
    else:
        sec = SectionDiff(mode=head.label, step=step, step_source=StepSource.MODEL)
    sec.compile_s = (base.compile_s, head.compile_s)
    sec.peak_memory_bytes = (base.peak_memory_bytes, head.peak_memory_bytes)
    return sec


def _mode_sections(
    base: CompareResult, head: CompareResult, min_rel: float
) -> tuple[list[SectionDiff], list[str]]:
    names = [m.label for m in base.modes] + [m.label for m in head.modes if not base.mode(m.label)]
    sections: list[SectionDiff] = []
    skipped: list[str] = []
    for name in names:
        b, h = base.mode(name), head.mode(name)
        if b is None or h is None:
            skipped.append(f"{name}: only in {'base' if h is None else 'head'}")
        elif not (b.ok and h.ok):
            why = "; ".join(
                f"{side} {m.status}" + (f" ({m.reason})" if m.reason else "")
                for side, m in (("base", b), ("head", h))
                if not m.ok
            )
            skipped.append(f"{name}: {why}")
        else:
            sections.append(mode_section(b, h, min_rel))
    return sections, skipped


def diff_results(
    base: Result,
    head: Result,
    *,
    min_rel: float | None = None,
    allow_mismatch: bool = False,
    base_label: str = "base",
    head_label: str = "head",
) -> Diff:
    """Diff two breakdown results, or two compare results mode by mode.

    ``min_rel`` is the smallest relative change that can be significant; by default
    the head device's ``Backend.min_rel_change``."""
    if type(base) is not type(head):
        raise UsageError(
            f"cannot diff a {_kind(base)} result against a {_kind(head)} result: "
            "give two breakdown results or two compare results"
        )
    problems, notes = comparability(base, head)
    if problems and not allow_mismatch:
        raise UsageError(
            "base and head are not comparable: "
            + "; ".join(problems)
            + " (pass --allow-mismatch to diff them anyway)"
        )
    warnings = problems + notes
    if min_rel is None:
        min_rel = backend(head.device).min_rel_change
    if isinstance(base, CompareResult) and isinstance(head, CompareResult):
        sections, skipped = _mode_sections(base, head, min_rel)
    else:
        sections, skipped = [breakdown_section(base, head, min_rel)], []
    for side, r in (("base", base), ("head", head)):
        warnings += [f"{side}: {e}" for e in r.errors]
        for b in _breakdowns(r):
            warnings += [f"{side}: {d}" for d in disturbances(b)]
    return Diff(
        kind=_kind(head),
        base_model=base.model,
        head_model=head.model,
        device=head.device,
        min_rel=min_rel,
        sections=sections,
        skipped=skipped,
        warnings=warnings,
        base_label=base_label,
        head_label=head_label,
    )


def _breakdowns(r: Result) -> list[BreakdownResult]:
    if isinstance(r, CompareResult):
        return [m.breakdown for m in r.modes if m.breakdown is not None]
    return [r]


def _kind(r: Result) -> str:
    return "compare" if isinstance(r, CompareResult) else "breakdown"
