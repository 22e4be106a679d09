"""Breakdown reports as text (terminal) or markdown (pull requests). Return strings only."""

from __future__ import annotations

from ..categories import label, order
from ..results import BreakdownResult, KernelStat
from .common import heading, table

DEFAULT_TOP = 15
ATEN_WIDTH = 48  # characters of origin ATen ops shown per row


def fmt_ms(v: float) -> str:
    if v >= 100:
        return f"{v:.1f}"
    if v >= 0.01:
        return f"{v:.3f}"
    return f"{v:.4f}"


def fmt_pct(v: float) -> str:
    return f"{v:.1f}%"


def _pct(part: float, whole: float) -> float:
    return 100.0 * part / whole if whole > 0 else 0.0


def _ops(k: KernelStat) -> str:
    s = ", ".join(k.aten_ops) or (k.launched_by or "")
    return s if len(s) <= ATEN_WIDTH else s[: ATEN_WIDTH - 1] + "…"


def _calls(c: float) -> str:
    return f"{c:g}" if c == int(c) else f"{c:.2f}"


class _Doc:
    """Collects sections; text and markdown differ only in headings and table format."""

    def __init__(self, markdown: bool) -> None:
        self.md = markdown
        self.parts: list[str] = []

    def heading(self, s: str) -> None:
        self.parts.append(heading(s, markdown=self.md))

    def line(self, s: str) -> None:
        self.parts.append(s)

    def table(self, rows: list[list], headers: list[str], align: tuple[str, ...] | None = None) -> None:
        self.parts.append(table(rows, headers, markdown=self.md, align=align))

    def render(self) -> str:
        return "\n\n".join(self.parts) + "\n"


def _header(doc: _Doc, r: BreakdownResult) -> None:
    what = "training step (forward + backward)" if r.train else "inference"
    dtype = r.dtype + (" (autocast)" if r.autocast else "") + (" · freezing" if r.freezing else "")
    title = f"inductor-bench breakdown: {r.model}"
    doc.parts.append(f"## {title}" if doc.md else title + "\n" + "=" * len(title))
    facts = [
        f"{what} · mode {r.mode} · {dtype}" + (f" · batch {r.batch_size}" if r.batch_size else ""),
        f"device {r.device}" + (f" · {r.device_name}" if r.device_name else ""),
        " · ".join(f"{k} {v}" for k, v in r.versions.items() if k in ("torch", "triton")),
    ]
    if r.script:
        facts.insert(0, "ran as a script: every graph it compiled")
    doc.line("\n".join(f"- {f}" if doc.md else f for f in facts if f))
    if r.status != "ok" or r.errors:
        doc.line(
            ("**Status: " + r.status + "**" if doc.md else "STATUS: " + r.status.upper())
            + "".join(f"\n- {e.splitlines()[0]}" for e in r.errors)
        )


def _graph_table(doc: _Doc, r: BreakdownResult) -> None:
    t = r.totals()
    rows = []
    for g in r.graphs:
        if g.ok:
            rows.append(
                [
                    g.id,
                    g.role,
                    str(g.iterations),
                    fmt_ms(g.wall_ms),
                    fmt_ms(g.kernel_ms),
                    fmt_pct(g.busy_pct),
                    str(len(g.kernels)),
                    "ok",
                ]
            )
        else:
            rows.append([g.id, g.role, "", "", "", "", "", f"{g.status}: {(g.error or '')[:60]}"])
    rows.append(
        [
            "step",
            f"{t.graphs} graph(s)",
            "",
            fmt_ms(t.wall_ms),
            fmt_ms(t.kernel_ms),
            fmt_pct(t.busy_pct),
            str(t.kernel_count),
            "",
        ]
    )
    doc.heading("Graphs (one call each per step)")
    doc.table(
        rows,
        ["graph", "role", "iters", "wall ms", "kernel ms", "busy", "kernels", "status"],
        ("left", "left", "right", "right", "right", "right", "right", "left"),
    )
    dev = "GPU" if r.device == "cuda" else "CPU"
    if r.device == "cuda":
        doc.line(
            f"busy = union of {dev} kernel intervals ÷ wall time of the same profiled iterations "
            "(never above 100%); kernel ms sums every kernel, so concurrent streams can exceed busy."
        )
    else:
        doc.line(
            "busy = time inside C++ kernels and extern ops ÷ wall time of the same profiled "
            "iterations; the rest is the Python wrapper (allocation, launch, bookkeeping)."
        )
    note = _windows_note(r)
    if note:
        doc.line(note)


# Window medians further apart than this (relative to the kept one) are pointed out.
WINDOW_SPREAD = 0.10


def _windows_note(r: BreakdownResult) -> str | None:
    """One line on the profiler windows: how many, and which graphs had slow ones."""
    gs = [g for g in r.measured() if g.windows_ms and g.window is not None]
    if not gs:
        return None
    counts = sorted({len(g.windows_ms) for g in gs})
    n = str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
    if counts == [1]:
        return "windows: each graph was profiled in one profiler session (--windows 1)."
    slow = []
    for g in gs:
        kept = g.windows_ms[g.window]
        worst = max(range(len(g.windows_ms)), key=lambda i: g.windows_ms[i])
        if kept > 0 and g.windows_ms[worst] > kept * (1 + WINDOW_SPREAD):
            faults = g.window_faults[worst] if worst < len(g.window_faults) else None
            why = f", {faults:.0f} page faults per iteration" if faults else ""
            slow.append(
                f"{g.id} {fmt_ms(kept)} vs up to {fmt_ms(g.windows_ms[worst])} ms "
                f"(+{100 * (g.windows_ms[worst] / kept - 1):.0f}%{why})"
            )
    head = f"windows: each graph was profiled in {n} profiler sessions and the fastest is reported"
    if not slow:
        return head + f"; their medians agree within {100 * WINDOW_SPREAD:.0f}%."
    return head + "; slower sessions were left out: " + "; ".join(slow) + "."


def _category_table(
    doc: _Doc, cats: dict[str, float], kernels: list[KernelStat], wall: float, title: str
) -> None:
    total = sum(cats.values())
    count: dict[str, int] = {}
    for k in kernels:
        count[k.category] = count.get(k.category, 0) + 1
    rows = [
        [label(c), str(count.get(c, 0)), fmt_ms(ms), fmt_pct(_pct(ms, total)), fmt_pct(_pct(ms, wall))]
        for c, ms in sorted(cats.items(), key=lambda kv: (-kv[1], order(kv[0])))
        if ms > 0 or count.get(c)
    ]
    rows.append(
        [
            "total",
            str(len(kernels)),
            fmt_ms(total),
            fmt_pct(100.0 if total else 0.0),
            fmt_pct(_pct(total, wall)),
        ]
    )
    doc.heading(title)
    doc.table(
        rows,
        ["category", "kernels", "ms", "% kernel", "% wall"],
        ("left", "right", "right", "right", "right"),
    )


def _top_kernels(doc: _Doc, r: BreakdownResult, top: int) -> None:
    t = r.totals()
    pairs = [(g, k) for g in r.measured() for k in g.kernels]
    pairs.sort(key=lambda gk: -gk[1].ms)
    rows = [
        [
            str(i),
            g.id,
            k.name,
            label(k.category),
            _calls(k.calls),
            fmt_ms(k.ms),
            fmt_pct(_pct(k.ms, t.kernel_ms)),
            fmt_pct(_pct(k.ms, t.wall_ms)),
            _ops(k),
        ]
        for i, (g, k) in enumerate(pairs[:top], 1)
    ]
    doc.heading(f"Top {min(top, len(pairs))} of {len(pairs)} kernels (whole step)")
    doc.table(
        rows,
        ["#", "graph", "kernel", "category", "calls", "ms", "% kernel", "max gain", "origin ATen ops"],
        ("right", "left", "left", "left", "right", "right", "right", "right", "left"),
    )
    doc.line(
        "max gain = the kernel's share of step wall time: the most the step can speed up "
        "if this kernel took no time at all (Amdahl)."
    )


def _graph_sections(doc: _Doc, r: BreakdownResult, top: int) -> None:
    for g in r.measured():
        _category_table(
            doc,
            g.categories,
            g.kernels,
            g.wall_ms,
            f"Graph {g.id}: {fmt_ms(g.wall_ms)} ms wall, busy {fmt_pct(g.busy_pct)}",
        )
        by_cat: dict[str, list[KernelStat]] = {}
        for k in g.kernels:
            by_cat.setdefault(k.category, []).append(k)
        for cat in sorted(by_cat, key=lambda c: (-g.categories.get(c, 0.0), order(c))):
            ks = sorted(by_cat[cat], key=lambda k: -k.ms)
            with_file = any(k.file for k in ks)
            rows = []
            for k in ks[:top]:
                row = [k.name, _calls(k.calls), fmt_ms(k.ms), fmt_pct(_pct(k.ms, g.kernel_ms)), _ops(k)]
                rows.append(row + ([k.file or ""] if with_file else []))
            headers = ["kernel", "calls", "ms", "% graph", "origin ATen ops"] + (
                ["file"] if with_file else []
            )
            doc.line(f"{g.id} · {label(cat)}" if not doc.md else f"**{g.id} · {label(cat)}**")
            doc.table(rows, headers)
            if len(ks) > top:
                rest = ks[top:]
                doc.line(f"… and {len(rest)} more ({fmt_ms(sum(k.ms for k in rest))} ms)")


def _footer(doc: _Doc, r: BreakdownResult) -> None:
    if r.run_dir:
        traces = [g.trace for g in r.graphs if g.trace]
        doc.line(
            f"run directory: {r.run_dir}"
            + (
                f"\ntraces: {r.run_dir}/graphs/<graph>/trace.json.gz (open in https://ui.perfetto.dev)"
                if traces
                else ""
            )
        )


def _extras(doc: _Doc, r: BreakdownResult) -> None:
    from . import extras

    for section in extras.render_sections(r, markdown=doc.md):
        doc.line(section)


def render_breakdown(
    r: BreakdownResult, *, top: int = DEFAULT_TOP, markdown: bool = False, details: bool = True
) -> str:
    doc = _Doc(markdown)
    _header(doc, r)
    if r.graphs:
        _graph_table(doc, r)
    t = r.totals()
    if t.graphs:
        _category_table(
            doc,
            t.categories,
            [k for g in r.measured() for k in g.kernels],
            t.wall_ms,
            "Time by category (whole step)",
        )
        _top_kernels(doc, r, top)
        _extras(doc, r)
        if details:
            _graph_sections(doc, r, top)
    _footer(doc, r)
    return doc.render()
