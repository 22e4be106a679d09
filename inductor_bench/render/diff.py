"""A ``Diff`` as text (terminal) or markdown (a pull-request comment). Returns strings.

Both start with the verdict line, then one block per section (breakdown, or compile mode):
the step/kernel/busy summary, per-category changes, and the kernels that were added,
removed, or significantly slower or faster.
"""

from __future__ import annotations

from ..core.categories import label
from ..core.diff import ADDED, FASTER, REMOVED, SLOWER, Diff, KernelDiff, SectionDiff
from ..core.graph_breaks import describe
from ..core.paired_rounds import PAIR_CONFIDENCE
from ..core.stats import MIN_SAMPLES, TOO_FEW, WITHIN_NOISE, Change
from ..core.summaries import MEAN_CONFIDENCE
from ..core.vocab import Verdict
from . import charts_compare as charts
from .diff_kernel_labels import DEFAULT_TOP, NAME_CHARS, kernel_change, row_labels, table_order
from .diff_roofline import roofline_block
from .diff_verdict import change_cell, graph_missing, verdict_cell, verdict_line
from .doc import TEXT, Doc, new_doc
from .format import (
    DASH,
    SPREAD,
    mib,
    ms_between,
    ms_precise,
    pct,
    points_between,
    seconds,
    spread,
    step_figure,
    step_source,
)
from .format import count as fmt_calls
from .roofline_step import loaded_words, step_roof_cell

# Longest origin-op list shown in a table cell before it is cut (a kernel name's: NAME_CHARS;
# fused C++ kernel names run past 80 characters, the cut keeps both ends).
ORIGIN_CHARS = 60

KERNEL_GROUPS = (
    (SLOWER, "Slower kernels, significant"),
    (ADDED, "Added kernels"),
    (FASTER, "Faster kernels, significant"),
    (REMOVED, "Removed kernels"),
    (Verdict.CALLS_CHANGED, "The same code, its graph called another number of times"),
    (Verdict.OTHER_WORKLOAD, "Matched kernels, another workload on each side: not judged"),
)


def _with_spread(ms: float, spread_pct: float | None, n: int) -> str:
    if n == 0:
        return ms_precise(ms)
    return f"{ms_precise(ms)} {spread(spread_pct)}".strip() + f" (n={n})"


# ---- tables ---------------------------------------------------------------------------------


def _summary_rows(s: SectionDiff) -> list[list[str]]:
    rows = [_change_row(f"{step_figure(s.step_source)}, ms ({step_source(s.step_source)})", s.step, s)]
    if s.kernel_time is not None:
        rows.append(_change_row("kernel time, ms", s.kernel_time, s))
    if s.busy_pct is not None:
        b, h = s.busy_pct
        rows.append(["busy %", pct(b), pct(h), _moved(s, points_between(b, h)), ""])
    if s.compile_s is not None:
        b, h = s.compile_s
        rows.append(["compile (first call)", seconds(b), seconds(h), "", "one sample"])
    if s.peak_memory_bytes is not None:
        b, h = s.peak_memory_bytes
        rows.append(["peak memory", mib(b), mib(h), "", "one sample"])
    if s.recomputed_ms is not None:
        b, h = s.recomputed_ms
        moved = _moved(s, ms_between(b, h))
        rows.append(["recomputed in the backward, ms", ms_precise(b), ms_precise(h), moved, ""])
    if s.roofline_sides is not None:
        b, h = s.roofline_sides
        bp, hp = s.roofline_pct or (None, None)
        moved = _moved(s, points_between(bp, hp)) if bp is not None and hp is not None else ""
        # neither a % nor a share: no ceilings or no counted kernel on that side (a run stopped
        # before its ceilings were measured), not kernels all latency-bound or in cache
        cells = [step_roof_cell(x) if x is not None and (x.pct, x.share) != (None, None)
                 else f"{DASH} (not measured)" for x in (b, h)]
        # both sides against the higher of each side's ceilings (the note under the section):
        # not the % against each run's own
        shared = s.roofline_ceilings is not None and s.roofline_ceilings[2] is not None
        words = (", shared ceilings" if shared else "") + loaded_words(s.roofline_loaded)
        rows.append([f"% of peak (time-weighted{words})", *cells, moved, ""])
    return rows


def _moved(s: SectionDiff, change: str) -> str:
    """A move between two figures of the section, or none where a graph was measured on one
    side only: the two sums are then over other graphs, as ``change_cell`` says of a change."""
    return DASH if graph_missing(s) else change


def _change_row(name: str, ch: Change, s: SectionDiff) -> list[str]:
    return [
        name,
        _with_spread(ch.base.ms, ch.base.spread_pct, ch.base.n),
        _with_spread(ch.head.ms, ch.head.spread_pct, ch.head.n),
        change_cell(ch, s),
        verdict_cell(ch, s),
    ]


def _category_rows(s: SectionDiff) -> list[list[str]]:
    return [
        [
            label(c.category),
            ms_precise(c.change.base.ms),
            ms_precise(c.change.head.ms),
            _moved(s, ms_between(c.change.base.ms, c.change.head.ms)),
            change_cell(c.change, s),
            verdict_cell(c.change, s),
        ]
        for c in s.categories
    ]


def _origin(doc: Doc, k: KernelDiff) -> str:
    """The kernel's origin ATen ops, cut to ORIGIN_CHARS where the document cuts names
    (``Doc.whole_cell``): all of them on hover."""
    full = ", ".join(k.aten_ops)
    return doc.named(doc.whole_cell(full, ORIGIN_CHARS), full)


def _name(doc: Doc, name: str) -> str:
    """A kernel's name as code, shortened to NAME_CHARS where the document shortens names (the
    whole name on hover in HTML)."""
    return doc.named(doc.code(doc.kernel_label(name, NAME_CHARS)), name)


def _match_cell(k: KernelDiff, doc: Doc) -> str:
    """How the kernel was matched where not by its name in its graph, and ``shapes changed``
    where its calls' inputs did: its change is then not one of the same work."""
    how = ""
    if k.matched_by is not None and not (k.matched_by == "name" and k.base_graph is None):
        was = f"was {_name(doc, k.base_name)}" if k.base_name else ""
        where = f"in {k.base_graph}" if k.base_graph else ""
        how = " ".join(x for x in (f"by {k.matched_by}:", was, where) if x)
    return "; ".join(x for x in (how, _shapes_words(k)) if x)


def _shapes_words(k: KernelDiff) -> str:
    """``shapes changed: #1``: the calls of an extern op whose inputs changed size, as the
    moves toward the limit name them; ``graph inputs changed`` for a kernel without calls whose
    graph was given other inputs; nothing where none did."""
    marks = [c.rsplit(" ", 1)[-1] for c in k.shapes_changed]
    return "; ".join(([f"shapes changed: {', '.join(marks)}"] if marks else [])
                     + (["graph inputs changed"] if k.graph_inputs_changed else []))


def _kernel_rows(ks: list[KernelDiff], doc: Doc) -> list[list[str]]:
    labels = row_labels(ks, doc)
    return [
        [
            k.graph,
            doc.named(doc.code(name), k.name),
            label(k.category),
            *charts.kernel_sides(k),
            kernel_change(k),
            _origin(doc, k),
            _match_cell(k, doc),
        ]
        for k, name in zip(ks, labels, strict=True)
    ]


KERNEL_HEADERS = [
    "graph",
    "kernel",
    "category",
    "base ms",
    "head ms",
    "change ms",
    "origin ATen",
    "matched",
]
KERNEL_OPTIONAL = ("origin ATen", "category")  # what a narrow terminal leaves out (table_fit)
SUMMARY_HEADERS = ["", "base", "head", "change", "verdict"]
CATEGORY_HEADERS = ["category", "base ms", "head ms", "change ms", "change", "verdict"]


# What diff matches: each generated kernel, and each extern op with its calls in the graph summed.
MATCHED = "matched kernel(s) and extern op(s)"


def _quiet_counts(s: SectionDiff) -> str:
    if s.same_code:
        return f"{len(s.kernels_with(Verdict.SAME_CODE))} {MATCHED}, the same code on both sides"
    if s.other_workload:
        return (f"{len(s.kernels_with(Verdict.OTHER_WORKLOAD))} {MATCHED}, each run on another workload on "
                "each side: none judged")
    noise = len(s.kernels_with(WITHIN_NOISE))
    few = len(s.kernels_with(TOO_FEW))
    text = f"{noise} {MATCHED} within noise"
    if few:
        text += f", {few} with too few samples to judge"
    same = len(s.kernels_with(Verdict.SAME_CODE))
    if same:
        text += f"; {same} the same code on both sides (their times differ by the processes alone)"
    moved = len(s.kernels_with(Verdict.CALLS_CHANGED))
    if moved:
        text += (f"; {moved} the same code on both sides, their graphs called another number of times "
                 "(their times per step move with the calls)")
    renamed = sum(1 for k in s.kernels if k.renamed)
    if renamed:
        text += f"; {renamed} matched under a new name"
    return text


def _graph_note(s: SectionDiff) -> str:
    parts = []
    if s.graphs_added:
        parts.append("graphs only in head: " + ", ".join(s.graphs_added))
    if s.graphs_removed:
        parts.append("graphs only in base: " + ", ".join(s.graphs_removed))
    parts += [f"graph break new in head: {describe(b)}" for b in s.breaks_added]
    parts += [f"graph break gone in head: {describe(b)}" for b in s.breaks_removed]
    parts += [f"recompile limit hit new in head: {x}: its calls past it ran eagerly" for x in s.limits_added]
    parts += [f"recompile limit hit gone in head: {x}" for x in s.limits_removed]
    if s.calls_changed:
        each = ", ".join(f"{g} {fmt_calls(b)} -> {fmt_calls(h)}" for g, b, h in s.calls_changed)
        parts.append(f"calls changed: {each} (the step adds each graph's calls: it moves with them)")
    return "; ".join(parts)


def _kernel_blocks(s: SectionDiff, top: int, doc: Doc) -> None:
    for status, title in KERNEL_GROUPS:
        ks = table_order(s, status)
        if not ks:
            continue
        rows = _kernel_rows(ks[:top], doc)
        headers = KERNEL_HEADERS
        if not any(r[-1] for r in rows):  # nothing was matched under another name or graph
            rows, headers = [r[:-1] for r in rows], headers[:-1]
        more = f" (top {top} of {len(ks)})" if len(ks) > top else f" ({len(ks)})"
        doc.captioned(doc.strong(title + more), doc.table_text(rows, headers, None, KERNEL_OPTIONAL))
    marked = [k for status, _ in KERNEL_GROUPS for k in s.kernels_with(status) if k.other_work]
    if any(k.shapes_changed for k in marked):
        doc.paragraph("shapes changed (matched): the op's calls it names are the same calls of the model "
                      "(the same op, module and source line) with inputs of other sizes in head: its "
                      "change is not one of the same work but the model's, whether or not that was meant")
    if any(k.graph_inputs_changed for k in marked):
        graphs = ", ".join(f"{g}: {how}" for g, how in s.graph_inputs.items())
        doc.paragraph(f"graph inputs changed (matched): {graphs}; the kernel's change is not one of "
                      "the same work but the model's, whether or not that was meant")


# ---- the document ---------------------------------------------------------------------------


def _model(diff: Diff) -> str:
    same = diff.base_model == diff.head_model
    return diff.head_model if same else f"{diff.base_model} -> {diff.head_model}"


def _title(diff: Diff, doc: Doc) -> str:
    """The model, the device and the two paths (code spans in markdown)."""
    return (f"{_model(diff)} on {diff.device}: {doc.code(diff.base_label)} (base) vs "
            f"{doc.code(diff.head_label)} (head)")


def _rule_text(diff: Diff) -> str:
    return (
        "times = means over the steady iterations (those far slower than the median left out as "
        f"disturbed: docs/statistics.md); significant = at least {MIN_SAMPLES} samples per side, a "
        f"change above {100 * diff.min_rel:g}% either way (head / base above {1 + diff.min_rel:g} or below "
        f"1/{1 + diff.min_rel:g}), and the two times' {100 * MEAN_CONFIDENCE:g}% "
        f"confidence intervals apart (a {100 * PAIR_CONFIDENCE:g}% interval of the ratio, shown as "
        f"[low..high]); spreads are shown as ± {SPREAD} in % of the time"
    )


def _section(doc: Doc, s: SectionDiff, top: int) -> None:
    doc.captioned(doc.section(s.mode), doc.table_text(_summary_rows(s), SUMMARY_HEADERS))
    if not s.unmeasured:  # the charts draw changes of sums over the graphs
        doc.chart(charts.diff_step(s))
    if s.categories:
        doc.details("Per category", doc.table_text(_category_rows(s), CATEGORY_HEADERS))
        if not s.unmeasured:
            doc.chart(charts.diff_categories(s))
    _kernel_blocks(s, top, doc)
    doc.chart(charts.diff_kernels(s, top))
    roofline_block(s, top, doc, _name)
    notes = [f"not comparable: {', '.join(s.other_workload)}: base and head ran other workloads, so "
             "their figures are shown side by side and none is judged"] if s.other_workload else []
    notes += [f"not comparable: {u.describe()}" for u in s.unmeasured]
    if s.unmeasured:
        notes.append("the kernels listed are those of the graphs measured on both sides")
    notes += [_quiet_counts(s)] if s.kernels else []
    if note := _graph_note(s):
        notes.append(note)
    if notes:
        doc.sentences(*notes)


def render_diff(
    diff: Diff, fmt_name: str = TEXT, *, threshold_pct: float | None = None, top: int = DEFAULT_TOP
) -> str:
    doc = new_doc(fmt_name)
    doc.headline(f"inductor-bench diff: {_model(diff)}: {diff.base_label} vs {diff.head_label}")
    doc.paragraph(verdict_line(diff, doc, threshold_pct, top))
    doc.paragraph(
        doc.byline("inductor-bench diff", _title(diff, doc)),
        *(doc.quote(f"warning: {w}") for w in diff.warnings),
        *(doc.quote(f"not compared: {s}") for s in diff.skipped),
        *(doc.quote(f"not comparable: {u.describe()}") for u in diff.columns_unmeasured),
    )
    for s in diff.sections:
        _section(doc, s, top)
    doc.fine_print(_rule_text(diff))
    return doc.render()
