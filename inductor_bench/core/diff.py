"""Two results -> a diff record: step time, categories, busy %, and kernel by kernel.

Base and head are two breakdown results (one section) or two compare results (one section
per mode that ran in both). Kernels are paired by ``match.py``. Every change of a measured
quantity is judged by ``stats.judge``: significant, within noise, or too few samples.

A regression is a significant increase of a section's step time; only step time gates a
merge (``Diff.regressions``): a single kernel may get slower while the step gets faster
(work moved into it from a kernel that vanished), and the step is what users pay for.
A graph measured on one side only (``comparable.unmeasured_graphs``) leaves its section with
no verdict ("not comparable"); only the kernels of graphs measured on both sides are paired.

The records are in ``diff_records.py``. Pure Python; no torch.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .call_pairs import inputs_changed
from .categories import order as category_order
from .comparable import comparability, runtimes_differ, sizes_differ, stopped_apart, unmeasured_modes
from .compare import CompareResult, ModeResult, step_disturbances
from .compiled_from import graph_codes, module_texts
from .compiles import limits_one_side_only
from .devices import AUTO, backend
from .diff_records import (
    ADDED,
    FASTER,
    ONE_CODE,
    REMOVED,
    SLOWER,
    CategoryDiff,
    Diff,
    KernelDiff,
    SectionDiff,
)
from .disturbed_side import code_changed, judged_on_few_rounds, slower_where_disturbed
from .errors import UsageError
from .graph_breaks import one_side_only
from .match import KernelRef, match_kernels
from .one_code import RunKernels, one_code
from .other_workload import other_workload, unjudged
from .results import BreakdownResult, GraphResult
from .roofline import roofline_moves
from .stats import Change, Summary, compare_samples, judge
from .step import disturbances
from .step_totals import same_calls
from .unmeasured import Unmeasured, calls_changed, measured_on_both, uncounted_calls, unmeasured_graphs
from .views import recomputed, recomputed_step_ms, recomputes_known
from .vocab import Outcome, StepSource, Verdict

__all__ = ["ADDED", "FASTER", "REMOVED", "SLOWER", "CategoryDiff", "Diff", "KernelDiff", "SectionDiff",
           "breakdown_section", "diff_results", "kernel_diffs", "mode_section"]

Result = BreakdownResult | CompareResult


Weights = dict[str, float]  # graph id -> its calls (``BreakdownResult.weights``)


def _kernel_change(b: KernelRef, h: KernelRef, how: str, min_rel: float,
                   w: tuple[Weights, Weights]) -> KernelDiff:
    ch = judge(_kernel_summary(b, w[0]), _kernel_summary(h, w[1]), min_rel)
    status = SLOWER if ch.slower else FASTER if ch.faster else ch.verdict
    return KernelDiff(
        status=status,
        graph=h.graph.id,
        name=h.kernel.name,
        category=h.kernel.category,
        aten_ops=list(h.kernel.aten_ops),
        base_ms=ch.base.ms,
        head_ms=ch.head.ms,
        base_name=b.kernel.name if b.kernel.name != h.kernel.name else None,
        base_graph=b.graph.id if b.graph.id != h.graph.id else None,
        matched_by=how,
        change=ch,
    )


def _lone_kernel(r: KernelRef, status: str, w: Weights) -> KernelDiff:
    ms = _kernel_summary(r, w).ms
    return KernelDiff(
        status=status,
        graph=r.graph.id,
        name=r.kernel.name,
        category=r.kernel.category,
        aten_ops=list(r.kernel.aten_ops),
        base_ms=ms if status == REMOVED else 0.0,
        head_ms=ms if status == ADDED else 0.0,
    )


def _kernel_summary(r: KernelRef, w: Weights) -> Summary:
    """The kernel's figure per step (or in the script), as the top kernels of its report: over
    its graph's steady iterations, times the graph's calls (1 where there is no weight)."""
    return r.graph.summary(r.kernel.samples_ms, r.kernel.ms).scaled(w.get(r.graph.id, 1.0))


def kernel_diffs(base: list[GraphResult], head: list[GraphResult], min_rel: float,
                 weights: tuple[Weights, Weights] = ({}, {})) -> list[KernelDiff]:
    """Every kernel of both sides, biggest absolute change first. ``weights`` (each side's
    ``BreakdownResult.weights``) weigh each kernel by its graph's calls, as the step and the
    categories are, so that the kernels' changes add up to theirs; without, per call."""
    pairs, removed, added = match_kernels(base, head)
    out = [_kernel_change(b, h, how, min_rel, weights) for b, h, how in pairs]
    out += [_lone_kernel(r, REMOVED, weights[0]) for r in removed]
    out += [_lone_kernel(r, ADDED, weights[1]) for r in added]
    return sorted(out, key=lambda k: (-abs(k.delta_ms), k.graph, k.name))


def category_diffs(base: BreakdownResult, head: BreakdownResult, min_rel: float) -> list[CategoryDiff]:
    bt, ht = base.totals(), head.totals()
    cats = sorted(set(bt.categories) | set(ht.categories), key=lambda c: (category_order(c), c))
    out = []
    for c in cats:
        ch = judge(base.kernel_summary(c), head.kernel_summary(c), min_rel)
        out.append(CategoryDiff(category=c, change=ch))
    return out


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
    if mode is None:
        mode = head.mode if base.mode == head.mode else f"{base.mode} -> {head.mode}"
    gaps = unmeasured_graphs(base, head, mode) + uncounted_calls(base, head, mode)
    both = measured_on_both(base, head)
    bg, hg = base.measured(), head.measured()
    harness_step = step is None
    if step is None:
        step = judge(base.step_summary(), head.step_summary(), min_rel)
    bids, hids = [g.id for g in bg], [g.id for g in hg]
    gap_ids = {u.graph for u in gaps}
    paired = [[g for g in gs if g.id in both or not gaps] for gs in (bg, hg)]
    section = SectionDiff(
        mode=mode,
        step=step,
        step_source=StepSource.HARNESS if harness_step else StepSource.MODEL,
        kernel_time=judge(base.kernel_summary(), head.kernel_summary(), min_rel),
        busy_pct=(bt.busy_pct, ht.busy_pct),
        categories=category_diffs(base, head, min_rel),
        # with gaps, of graphs measured on both sides; each weighed by its graph's calls
        kernels=kernel_diffs(*paired, min_rel, (base.weights(), head.weights())),
        graphs_added=[g for g in hids if g not in bids and g not in gap_ids],
        graphs_removed=[g for g in bids if g not in hids and g not in gap_ids],
        unmeasured=gaps,
        calls_changed=calls_changed(base, head),
    )
    roofline_moves(section, base, head)
    inputs_changed(section, base, head)
    again = recomputed(base), recomputed(head)
    if any(again) and recomputes_known(base) and recomputes_known(head):
        section.recomputed_ms = (recomputed_step_ms(base, again[0]), recomputed_step_ms(head, again[1]))
    section.breaks_added, section.breaks_removed = one_side_only(base.graph_breaks, head.graph_breaks,
                                                                  reworded=bool(runtimes_differ(base, head)))
    section.limits_added, section.limits_removed = limits_one_side_only(base.compiles, head.compiles)
    return _withhold_verdicts(section) if gaps or stopped_apart(base, head) else section


def compiled_alike(base: BreakdownResult, head: BreakdownResult, s: SectionDiff,
                   texts: tuple[dict[str, str], dict[str, str]]) -> bool:
    """Both runs compiled the same code for every graph (``compiled_from.graph_codes`` of each
    side's module texts), the model called each as often and it was profiled at the same
    sizes: the harness step's work is the same on both sides."""
    codes = [graph_codes(r, texts=t) for r, t in zip((base, head), texts, strict=True)]
    return bool(codes[0]) and codes[0] == codes[1] and not (
        s.unmeasured or s.calls_changed or sizes_differ(base, head))


def same_code_section(s: SectionDiff) -> SectionDiff:
    """A section whose sides ran the same work: none of its changes is the change's, so none
    is judged significant; each keeps its figures, marked ``same code``."""
    s.same_code = True
    s.step = replace(s.step, verdict=Verdict.SAME_CODE)
    if s.kernel_time is not None:
        s.kernel_time = replace(s.kernel_time, verdict=Verdict.SAME_CODE)
    s.categories = [CategoryDiff(c.category, replace(c.change, verdict=Verdict.SAME_CODE))
                    for c in s.categories]
    s.kernels = [_same_kernel(k) if k.change is not None else k for k in s.kernels]
    return s


def one_code_kernels(s: SectionDiff, base: RunKernels, head: RunKernels,
                     weights: tuple[Weights, Weights] = ({}, {})) -> SectionDiff:
    """Each paired kernel both runs compiled to one code (``core/one_code.py``) marked ``same
    code``, whatever its two processes' times say, or ``calls changed`` where its graph was
    called another number of times (``weights``: each side's calls per graph), which then moves
    its time per step; a category or the kernel time all of whose kernels are one code, the
    same, but in a section that lacks a graph on one side (its sums stay not comparable); the
    rest of the section as judged."""
    s.kernels = [_one_code_kernel(k, weights) if k.change is not None and k.status not in (ADDED, REMOVED)
                 and one_code(base, (k.base_graph or k.graph, k.base_name or k.name), head, (k.graph, k.name))
                 else k for k in s.kernels]
    if s.unmeasured:  # its sums over graphs lack a graph on one side: not comparable, and said so
        return s
    judged = {k.category for k in s.kernels if k.status not in ONE_CODE}
    by_cat = {k.category: _one_verdict(s, k.category) for k in s.kernels if k.category not in judged}
    s.categories = [CategoryDiff(c.category, replace(c.change, verdict=by_cat[c.category]))
                    if c.category in by_cat else c for c in s.categories]
    if s.kernel_time is not None and s.kernels and not (s.graphs_added or s.graphs_removed) and not judged:
        s.kernel_time = replace(s.kernel_time, verdict=_one_verdict(s))
    return s


def _one_code_kernel(k: KernelDiff, weights: tuple[Weights, Weights]) -> KernelDiff:
    b, h = weights[0].get(k.base_graph or k.graph, 1.0), weights[1].get(k.graph, 1.0)
    if same_calls(b, h):
        return _same_kernel(k)
    return replace(k, status=Verdict.CALLS_CHANGED, change=replace(k.change, verdict=Verdict.CALLS_CHANGED))


def _one_verdict(s: SectionDiff, category: str | None = None) -> str:
    """``calls changed`` where a kernel (of ``category``) of one code was called another number
    of times, else ``same code``."""
    moved = any(k.status == Verdict.CALLS_CHANGED for k in s.kernels if category in (None, k.category))
    return Verdict.CALLS_CHANGED if moved else Verdict.SAME_CODE


def _same_kernel(k: KernelDiff) -> KernelDiff:
    return replace(k, status=Verdict.SAME_CODE, change=replace(k.change, verdict=Verdict.SAME_CODE))


def _withhold_verdicts(s: SectionDiff) -> SectionDiff:
    """A section that lacks a graph on one side: its sums over graphs are not comparable."""
    s.step = replace(s.step, verdict=Outcome.NOT_COMPARABLE)
    if s.kernel_time is not None:
        s.kernel_time = replace(s.kernel_time, verdict=Outcome.NOT_COMPARABLE)
    s.categories = [CategoryDiff(c.category, replace(c.change, verdict=Outcome.NOT_COMPARABLE))
                    for c in s.categories]
    return s


def mode_section(base: ModeResult, head: ModeResult, min_rel: float,
                 samples: tuple[list[float], list[float]]) -> SectionDiff:
    """One column of two compares; ``samples``: each side's step times as its compare shows
    them (``CompareResult.step_samples``), so that the diff's step is the compares' own."""
    step = compare_samples(*samples, min_rel=min_rel)
    if base.breakdown and head.breakdown:
        sec = breakdown_section(base.breakdown, head.breakdown, min_rel, mode=head.label, step=step)
    else:
        sec = SectionDiff(mode=head.label, step=step, step_source=StepSource.MODEL)
    sec.compile_s = (base.compile_s, head.compile_s)
    sec.peak_memory_bytes = (base.peak_memory_bytes, head.peak_memory_bytes)
    return sec


def _mode_sections(
    base: CompareResult, head: CompareResult, min_rel: float, code_dirs: tuple[Path | None, Path | None]
) -> tuple[list[SectionDiff], list[str]]:
    names = [m.label for m in base.modes] + [m.label for m in head.modes if not base.mode(m.label)]
    sections: list[SectionDiff] = []
    skipped: list[str] = []
    for name in names:
        b, h = base.mode(name), head.mode(name)
        if b is None or h is None:
            skipped.append(f"{name}: only in {'base' if h is None else 'head'}")
        elif not (b.ok and h.ok):
            alike = (b.status, b.reason) == (h.status, h.reason)  # said once: both skipped (why)
            why = "; ".join(
                f"{side} {m.status}" + (f" ({m.reason})" if m.reason else "")
                for side, m in ((("both", b),) if alike else (("base", b), ("head", h)))
                if not m.ok
            )
            skipped.append(f"{name}: {why}")
        else:
            section = mode_section(b, h, min_rel, (base.step_samples(b), head.step_samples(h)))
            sections.append(_column_code(section, b, h, code_dirs))
    return sections, skipped


def _column_code(s: SectionDiff, base: ModeResult, head: ModeResult,
                 code_dirs: tuple[Path | None, Path | None]) -> SectionDiff:
    """A compare column's section judged on its breakdowns' code as a breakdown diff is
    (``_code_judged``), the modules read from each column's directory under ``code_dirs``.
    Its step stays judged: it is the real model call, whose code outside the compiled graphs
    their modules do not show; the section is ``same code`` only where that step is not a
    significant change either."""
    if not (base.breakdown and head.breakdown):
        return s
    step = s.step
    dirs = (_column_dir(base, code_dirs[0]), _column_dir(head, code_dirs[1]))
    s = _code_judged(s, base.breakdown, head.breakdown, dirs)
    if s.same_code:
        s.step, s.same_code = step, not step.significant
    return s


def _column_dir(m: ModeResult, code_dir: Path | None) -> Path | None:
    """Where a compare column's modules are: its directory under the compare's (as read)."""
    where = (m.breakdown.run_dir if m.breakdown else "") or m.run_dir
    return code_dir / Path(where).name if code_dir is not None and where else None


def _code_judged(s: SectionDiff, base: BreakdownResult, head: BreakdownResult,
                 code_dirs: tuple[Path | None, Path | None]) -> SectionDiff:
    """The same code for every graph: ``same_code_section``; else each kernel of one code on
    both sides marked so (``one_code_kernels``); nothing so where the sides ran another torch
    or Triton (``comparable.runtimes_differ``)."""
    if runtimes_differ(base, head):
        return s
    texts = (module_texts(base, code_dirs[0]), module_texts(head, code_dirs[1]))  # each read once
    if compiled_alike(base, head, s, texts):
        return same_code_section(s)
    return one_code_kernels(s, RunKernels(base, texts[0]), RunKernels(head, texts[1]),
                            (base.weights(), head.weights()))


def diff_results(
    base: Result,
    head: Result,
    *,
    min_rel: float | None = None,
    allow_mismatch: bool = False,
    base_label: str = "base",
    head_label: str = "head",
    code_dirs: tuple[Path | None, Path | None] = (None, None),
) -> Diff:
    """Diff two breakdown results, or two compare results mode by mode.

    ``min_rel`` is the smallest relative change that can be significant; by default
    the head device's ``Backend.min_rel_change``. ``code_dirs``: where each side's compiled
    modules are (the directory it was read from), by default its recorded run directory."""
    if type(base) is not type(head):
        raise UsageError(
            f"cannot diff a {_kind(base)} result against a {_kind(head)} result: "
            "give two breakdown results or two compare results (a compare's run directory holds "
            "each mode's breakdown run directory: RUN/default)"
        )
    problems, notes = comparability(base, head)
    if problems and not allow_mismatch:
        raise UsageError(
            "base and head are not comparable: "
            + "; ".join(problems)
            + " (pass --allow-mismatch to diff them anyway)"
        )
    warnings = problems + notes
    device = base.device if head.device == AUTO else head.device  # AUTO: stopped before it knew
    if min_rel is None:
        min_rel = backend(device).min_rel_change
    gaps: list[Unmeasured] = []
    columns = None
    if isinstance(base, CompareResult) and isinstance(head, CompareResult):
        sections, skipped = _mode_sections(base, head, min_rel, code_dirs)
        gaps = unmeasured_modes(base, head)
        columns = (_columns(base), _columns(head))
    else:
        sections, skipped = [_code_judged(breakdown_section(base, head, min_rel), base, head, code_dirs)], []
    disturbed: list[str] = []
    for side, r in (("base", base), ("head", head)):
        warnings += [f"{side}: {e}" for e in r.errors]
        lines = [f"{where}{d}" for where, b in _breakdowns(r) for d in disturbances(b)]
        lines += step_disturbances(r) if isinstance(r, CompareResult) else []
        warnings += [f"{side}: {d}" for d in lines]
        disturbed += [side] if lines else []
    if workload := other_workload(base, head):  # other work on each side: no verdict, figures kept
        sections = [unjudged(s, workload) for s in sections]
    changed = code_changed(sections)
    sections = [slower_where_disturbed(judged_on_few_rounds(s, base, head), base, head, changed)
                for s in sections]
    return Diff(
        kind=_kind(head),
        base_model=base.model,
        head_model=head.model,
        device=device,
        min_rel=min_rel,
        sections=sections,
        skipped=skipped,
        warnings=warnings,
        base_label=base_label,
        head_label=head_label,
        columns_unmeasured=gaps,
        disturbed=disturbed,
        columns=columns,
        other_workload=workload,
    )


def _columns(r: CompareResult) -> list[str]:
    """The columns of a compare result, each that did not run with its status."""
    return [m.label if m.ok else f"{m.label} ({m.status})" for m in r.modes]


def _breakdowns(r: Result) -> list[tuple[str, BreakdownResult]]:
    """A result's breakdowns, each with what names it in a line: a compare's column label."""
    if isinstance(r, CompareResult):
        return [(f"{m.label}: ", m.breakdown) for m in r.modes if m.breakdown is not None]
    return [("", r)]


def _kind(r: Result) -> str:
    return "compare" if isinstance(r, CompareResult) else "breakdown"
