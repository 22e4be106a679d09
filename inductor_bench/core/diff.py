"""Two results -> a diff record: step time, categories, busy %, and kernel by kernel.

Base and head are two breakdown results (one section) or two compare results (one section
per mode that ran in both). Kernels are paired by ``match.py``. Every change of a measured
quantity is judged by ``stats.judge``: significant, within noise, or too few samples.

A regression is a significant increase of a section's step time; only step time gates a
merge (``Diff.regressions``): a single kernel may get slower while the step gets faster
(work moved into it from a kernel that vanished), and the step is what users pay for.
A graph measured on one side only (``comparable.unmeasured_graphs``) leaves its section with
no verdict ("not comparable"); only the kernels of graphs measured on both sides are paired.

The records are in ``diff_records.py``, the kernels' and categories' rows built in
``diff_kernels.py``, sections of the same code judged in ``diff_same_code.py``. Pure Python; no torch.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .call_pairs import inputs_changed
from .comparable import comparability, runtimes_differ, stopped_apart, unmeasured_modes
from .compare import CompareResult, ModeResult, step_disturbances
from .compiles import limits_one_side_only
from .devices import AUTO, backend
from .diff_kernels import category_diffs, kernel_diffs
from .diff_records import (
    ADDED,
    FASTER,
    REMOVED,
    SLOWER,
    CategoryDiff,
    Diff,
    KernelDiff,
    SectionDiff,
)
from .diff_same_code import code_judged, column_code, compiled_alike, one_code_kernels, same_code_section
from .disturbed_side import code_changed_by_model, judged_on_few_rounds, slower_where_disturbed
from .errors import UsageError
from .graph_breaks import one_side_only
from .other_workload import other_workload, unjudged
from .result_kinds import Result, kind, named_breakdowns
from .results import BreakdownResult
from .roofline import roofline_moves
from .stats import Change, compare_samples, judge
from .step import disturbances
from .stop_lines import stop_lines
from .unmeasured import Unmeasured, calls_changed, measured_on_both, uncounted_calls, unmeasured_graphs
from .views import recomputed, recomputed_step_ms, recomputes_known
from .vocab import Outcome, StepSource

# Kept importable from here: the kernels' and the same code's parts live in diff_kernels.py and
# diff_same_code.py.
__all__ = ["ADDED", "FASTER", "REMOVED", "SLOWER", "CategoryDiff", "Diff", "KernelDiff", "SectionDiff",
           "breakdown_section", "category_diffs", "compiled_alike", "diff_results", "kernel_diffs",
           "mode_section", "one_code_kernels", "same_code_section"]


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
            sections.append(column_code(section, b, h, code_dirs))
    return sections, skipped


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
            f"cannot diff a {kind(base)} result against a {kind(head)} result: "
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
        sections, skipped = [code_judged(breakdown_section(base, head, min_rel), base, head, code_dirs)], []
    disturbed: list[str] = []
    for side, r in (("base", base), ("head", head)):
        measured = isinstance(r, BreakdownResult) and bool(r.graphs) and all(g.ok for g in r.graphs)
        warnings += [f"{side}: {e}" for e in stop_lines(r.errors, measured)]
        lines = [f"{where}{d}" for where, b in named_breakdowns(r) for d in disturbances(b)]
        lines += step_disturbances(r) if isinstance(r, CompareResult) else []
        warnings += [f"{side}: {d}" for d in lines]
        disturbed += [side] if lines else []
    if workload := other_workload(base, head):  # other work on each side: no verdict, figures kept
        sections = [unjudged(s, workload) for s in sections]
    changed = code_changed_by_model(sections, head)
    sections = [slower_where_disturbed(judged_on_few_rounds(s, base, head), base, head, c)
                for s, c in zip(sections, changed, strict=True)]
    return Diff(
        kind=kind(head),
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
