"""A ``Diff`` as text (terminal) or markdown (a pull-request comment). Returns strings.

Both start with the verdict line, then one block per section (breakdown, or compile mode):
the step/kernel/busy summary, per-category changes, and the kernels that were added,
removed, or significantly slower or faster.
"""

from __future__ import annotations

from ..categories import label
from ..diff import (
    ADDED,
    FASTER,
    IMPROVEMENT,
    INCONCLUSIVE,
    REGRESSION,
    REMOVED,
    SLOWER,
    Diff,
    KernelDiff,
    SectionDiff,
)
from ..stats import MIN_SAMPLES, NOISE_K, TOO_FEW, WITHIN_NOISE, Change
from .common import table as _tabulate

# Kernel rows shown per table; the rest are counted. Enough for the kernels that matter in
# a PR comment without burying the verdict.
DEFAULT_TOP = 10
# Kernels named in the verdict line as responsible for a regression.
VERDICT_KERNELS = 3
# Longest origin-op list and kernel name shown in a table cell before they are cut. Fused
# C++ kernel names run past 80 characters; the cut keeps both ends (the counter is at the end).
ORIGIN_CHARS = 60
NAME_CHARS = 60

KERNEL_GROUPS = (
    (SLOWER, "Slower kernels (significant)"),
    (ADDED, "Added kernels"),
    (FASTER, "Faster kernels (significant)"),
    (REMOVED, "Removed kernels"),
)


# ---- number formatting (shared with render/compare.py) -------------------------------------


def fmt_ms(x: float | None) -> str:
    if x is None:
        return "-"
    if abs(x) >= 1 or x == 0:
        return f"{x:.3f}"
    if abs(x) >= 0.001:
        return f"{x:.4f}"
    return f"{x:.2e}"


def fmt_signed_ms(x: float) -> str:
    return ("+" if x > 0 else "") + fmt_ms(x)


def fmt_pct(x: float | None, signed: bool = False) -> str:
    if x is None:
        return "-"
    return f"{x:+.1f}%" if signed else f"{x:.1f}%"


def fmt_spread(pct: float | None) -> str:
    return f"±{pct:.1f}%" if pct is not None else ""


def fmt_bytes(n: int | None) -> str:
    return "-" if n is None else f"{n / 2**20:.1f} MiB"


def fmt_seconds(s: float | None) -> str:
    return "-" if s is None else f"{s:.2f} s"


def _with_spread(median: float, spread: float | None, n: int) -> str:
    if n == 0:
        return fmt_ms(median)
    sp = fmt_spread(spread)
    return f"{fmt_ms(median)} {sp}".strip() + f" (n={n})"


def _change_cell(ch: Change) -> str:
    if ch.rel_pct is not None:
        return fmt_pct(ch.rel_pct, signed=True)
    return "new" if ch.head.median > 0 else "-"


# ---- the verdict ----------------------------------------------------------------------------


def _step_phrase(s: SectionDiff) -> str:
    ch = s.step
    return (
        f"{s.mode}: step time {fmt_ms(ch.base.median)} -> {fmt_ms(ch.head.median)} ms "
        f"({_change_cell(ch)}, {ch.verdict})"
    )


def _responsible_phrase(s: SectionDiff, code: bool) -> str:
    ks = s.responsible(VERDICT_KERNELS)
    if not ks:
        return ""
    names = ", ".join(
        f"{_code(k.name, code)} {fmt_signed_ms(k.delta_ms)} ms ({k.status})" for k in ks
    )
    return f"; kernels responsible: {names}"


def verdict_line(diff: Diff, threshold_pct: float | None = None, markdown: bool = False) -> str:
    status = diff.status()
    b = "**" if markdown else ""
    if status == REGRESSION:
        gated = diff.regressions(threshold_pct or 0.0)
        parts = [_step_phrase(s) + _responsible_phrase(s, markdown) for s in diff.regressions(0.0)]
        head = "REGRESSION"
        if threshold_pct is not None:
            head += (
                f" above the {threshold_pct:g}% gate"
                if gated
                else f" (below the {threshold_pct:g}% gate)"
            )
        return f"{b}{head}{b}: " + " | ".join(parts)
    if status == IMPROVEMENT:
        parts = [_step_phrase(s) for s in diff.sections if s.step.faster]
        return f"{b}FASTER{b}: " + " | ".join(parts)
    if status == INCONCLUSIVE:
        return f"{b}INCONCLUSIVE{b}: too few step-time samples to judge (record more with --repeat)"
    parts = [_step_phrase(s) for s in diff.sections]
    return f"{b}NO SIGNIFICANT CHANGE{b}: " + " | ".join(parts)


# ---- tables ---------------------------------------------------------------------------------


def _summary_rows(s: SectionDiff) -> list[list[str]]:
    rows = [_change_row(f"step time, ms ({s.step_source})", s.step)]
    if s.kernel_time is not None:
        rows.append(_change_row("kernel time, ms", s.kernel_time))
    if s.busy_pct is not None:
        b, h = s.busy_pct
        rows.append(["busy %", fmt_pct(b), fmt_pct(h), f"{h - b:+.1f} pp", ""])
    if s.compile_s is not None:
        b, h = s.compile_s
        rows.append(["compile (first call)", fmt_seconds(b), fmt_seconds(h), "", "one sample"])
    if s.peak_memory_bytes is not None:
        b, h = s.peak_memory_bytes
        rows.append(["peak memory", fmt_bytes(b), fmt_bytes(h), "", "one sample"])
    return rows


def _change_row(name: str, ch: Change) -> list[str]:
    return [
        name,
        _with_spread(ch.base.median, ch.base.spread_pct, ch.base.n),
        _with_spread(ch.head.median, ch.head.spread_pct, ch.head.n),
        _change_cell(ch),
        ch.verdict,
    ]


def _category_rows(s: SectionDiff) -> list[list[str]]:
    return [
        [
            label(c.category),
            fmt_ms(c.change.base.median),
            fmt_ms(c.change.head.median),
            fmt_signed_ms(c.change.delta_ms),
            _change_cell(c.change),
            c.change.verdict,
        ]
        for c in s.categories
    ]


def _origin(k: KernelDiff) -> str:
    text = ", ".join(k.aten_ops)
    return text if len(text) <= ORIGIN_CHARS else text[: ORIGIN_CHARS - 3] + "..."


def shorten(name: str, width: int = NAME_CHARS) -> str:
    """Cut the middle out of a long name: ``cpp_fused_a_b_..._sum_2``."""
    if len(name) <= width:
        return name
    keep = width - 3
    return name[: keep - keep // 3] + "..." + name[len(name) - keep // 3 :]


def _code(text: str, code: bool) -> str:
    return f"`{text}`" if code else text


def _match_cell(k: KernelDiff, code: bool) -> str:
    if k.matched_by is None or k.matched_by == "name" and k.base_graph is None:
        return ""
    was = f"was {_code(shorten(k.base_name), code)}" if k.base_name else ""
    where = f"in {k.base_graph}" if k.base_graph else ""
    return " ".join(x for x in (f"by {k.matched_by}:", was, where) if x)


def _kernel_rows(ks: list[KernelDiff], code: bool) -> list[list[str]]:
    return [
        [
            k.graph,
            _code(shorten(k.name), code),
            label(k.category),
            fmt_ms(k.base_ms) if k.status != ADDED else "-",
            fmt_ms(k.head_ms) if k.status != REMOVED else "-",
            fmt_signed_ms(k.delta_ms),
            _origin(k),
            _match_cell(k, code),
        ]
        for k in ks
    ]


def _table(rows: list[list[str]], headers: list[str], fmt: str = "simple") -> str:
    return _tabulate(rows, headers, markdown=fmt == "github")


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
SUMMARY_HEADERS = ["", "base", "head", "change", "verdict"]
CATEGORY_HEADERS = ["category", "base ms", "head ms", "change ms", "change", "verdict"]


def _quiet_counts(s: SectionDiff) -> str:
    noise = len(s.kernels_with(WITHIN_NOISE))
    few = len(s.kernels_with(TOO_FEW))
    text = f"{noise} matched kernel(s) within noise"
    if few:
        text += f", {few} with too few samples to judge"
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
    return "; ".join(parts)


def _kernel_blocks(s: SectionDiff, top: int, fmt: str) -> list[tuple[str, str]]:
    blocks = []
    for status, title in KERNEL_GROUPS:
        ks = s.kernels_with(status)
        if not ks:
            continue
        # biggest change first: increases for slower/added, decreases for faster/removed
        sign = -1 if status in (SLOWER, ADDED) else 1
        ks = sorted(ks, key=lambda k: sign * k.delta_ms)
        rows = _kernel_rows(ks[:top], fmt == "github")
        headers = KERNEL_HEADERS
        if not any(r[-1] for r in rows):  # nothing was matched under another name or graph
            rows, headers = [r[:-1] for r in rows], headers[:-1]
        more = f" (top {top} of {len(ks)})" if len(ks) > top else f" ({len(ks)})"
        blocks.append((title + more, _table(rows, headers, fmt)))
    return blocks


# ---- text -----------------------------------------------------------------------------------


def _title(diff: Diff) -> str:
    model = (
        diff.head_model
        if diff.base_model == diff.head_model
        else f"{diff.base_model} -> {diff.head_model}"
    )
    return f"{model} on {diff.device}: {diff.base_label} (base) vs {diff.head_label} (head)"


def _rule_text(diff: Diff) -> str:
    return (
        f"significant = at least {MIN_SAMPLES} samples per side and a change of medians above "
        f"both {100 * diff.min_rel:g}% and {NOISE_K:g}x the combined robust spread "
        "(1.4826 x MAD); spreads are shown as ± robust sigma in % of the median"
    )


def render_text(diff: Diff, threshold_pct: float | None = None, top: int = DEFAULT_TOP) -> str:
    out = [verdict_line(diff, threshold_pct), "", f"inductor-bench diff: {_title(diff)}"]
    out += [f"warning: {w}" for w in diff.warnings]
    out += [f"not compared: {s}" for s in diff.skipped]
    for s in diff.sections:
        out += ["", f"== {s.mode} ==", _table(_summary_rows(s), SUMMARY_HEADERS)]
        if s.categories:
            out += ["", "Per category", _table(_category_rows(s), CATEGORY_HEADERS)]
        for title, table in _kernel_blocks(s, top, "simple"):
            out += ["", title, table]
        if s.kernels:
            out += ["", _quiet_counts(s)]
        if note := _graph_note(s):
            out.append(note)
    out += ["", _rule_text(diff)]
    return "\n".join(out) + "\n"


# ---- markdown -------------------------------------------------------------------------------


def render_markdown(diff: Diff, threshold_pct: float | None = None, top: int = DEFAULT_TOP) -> str:
    out = [
        verdict_line(diff, threshold_pct, markdown=True),
        "",
        f"`inductor-bench diff` {_title(diff)}",
    ]
    out += [f"> warning: {w}" for w in diff.warnings]
    out += [f"> not compared: {s}" for s in diff.skipped]
    for s in diff.sections:
        out += [
            "",
            f"#### {s.mode}",
            "",
            _table(_summary_rows(s), SUMMARY_HEADERS, "github"),
        ]
        if s.categories:
            cats = _table(_category_rows(s), CATEGORY_HEADERS, "github")
            out += ["", "<details><summary>Per category</summary>", "", cats, "", "</details>"]
        for title, table in _kernel_blocks(s, top, "github"):
            out += ["", f"**{title}**", "", table]
        if s.kernels:
            out += ["", _quiet_counts(s) + "."]
        if note := _graph_note(s):
            out += ["", note + "."]
    out += ["", f"<sub>{_rule_text(diff)}</sub>"]
    return "\n".join(out) + "\n"
