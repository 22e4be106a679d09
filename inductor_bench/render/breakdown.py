"""Breakdown reports: the run's facts, time by category, the top kernels and each graph's
kernels; the graph table (``breakdown_graphs.py``) and the compile lines
(``breakdown_compile.py``) in their place. Returns strings."""

from __future__ import annotations

from collections import Counter

from ..core.categories import label, order
from ..core.comparable import trains
from ..core.devices import HOST_BACKEND, backend
from ..core.results import BreakdownResult, GraphResult, KernelStat
from ..core.step import gain_frame
from ..core.step_totals import ALL_GRAPHS, listed_categories
from ..core.views import By, has_sources, top_step_units
from ..core.vocab import Role, Status
from ..core.workload import script_line
from . import charts
from . import format as fmt
from .breakdown_compile import compile_lines
from .breakdown_graphs import graph_table
from .doc import TEXT, Doc, new_doc
from .execution import render_execution
from .roofline import (
    FAR_HEADER,
    PCT_HEADER,
    far_below_cells,
    op_pct_cell,
    roofline_section,
    shows_roofline,
)
from .view_marks import op_pct_note
from .views import (
    GRAPH_OPTIONAL,
    TOP_OPTIONAL,
    graph_units,
    max_gain_note,
    source_view,
    top_units,
)
from .weight_copy import copy_mark, copy_marks_note, weight_copy_note

DEFAULT_TOP = 15
ATEN_WIDTH = 48  # characters of origin ATen ops shown per row


def _ops(doc: Doc, k: KernelStat) -> str:
    """The kernel's origin ATen ops (or its launcher), cut to ATEN_WIDTH where the document cuts
    names (``Doc.whole_cell``): all of them on hover."""
    full = ", ".join(k.aten_ops) or (k.launched_by or "")
    return doc.named(doc.whole_cell(full, ATEN_WIDTH), full) + copy_mark(k)


def _what_ran(r: BreakdownResult) -> str:
    """A script runs what it runs: its graphs' roles and calls say so, not --train."""
    if trains(r):
        return "training step (forward + backward)"
    # Dynamo compiles a dynamic-shape graph's backward with its forward, called or not
    backward = r.script and any(g.role == Role.BACKWARD for g in r.graphs)
    return "inference (a backward graph compiled, never called)" if backward else "inference"


def _header(doc: Doc, r: BreakdownResult) -> None:
    how = [_what_ran(r), f"mode {r.mode}"]
    if not r.script:  # a script chooses its own dtype: the option's default says nothing of it
        how.append(r.dtype + (" (autocast)" if r.autocast else ""))
    how += (["freezing"] if r.freezing else []) + ([f"batch {r.batch_size}"] if r.batch_size else [])
    doc.title(f"inductor-bench breakdown: {r.model}")
    facts = [
        " · ".join(how),
        f"device {r.device}" + (f" · {r.device_name}" if r.device_name else ""),
        " · ".join(f"{k} {v}" for k, v in r.versions.items() if k in ("torch", "triton")),
    ]
    if r.script:
        line = script_line(r.model_path or f"{r.model}.py", r.script_args)
        ran = f", {doc.code(line)}" if r.script_args else ""
        whole = ": every graph it compiled"
        if r.script_stopped_s is not None:
            ran += f", stopped after {r.script_stopped_s:.1f} s (--script-seconds)"
            whole += " by then, its calls counted up to then"
        facts.insert(0, f"ran as a script{ran}{whole}")
    doc.paragraph(*(doc.item(f) for f in facts if f))
    if r.status != Status.OK or r.errors:
        doc.paragraph(doc.alert(f"Status: {r.status}"), *(f"- {e.splitlines()[0]}" for e in r.errors))


def _category_table(
    doc: Doc, cats: dict[str, float], listed: list[str], wall: float, title: str,
    far: dict[str, str] | None = None,
) -> None:
    """``listed``: the category of each row of the kernel tables (``listed_categories``)."""
    total = sum(cats.values())
    count = Counter(listed)
    rows = [
        [
            label(c),
            str(count.get(c, 0)),
            fmt.ms(ms),
            fmt.pct(fmt.share(ms, total)),
            fmt.pct(fmt.share(ms, wall)),
        ] + ([far.get(c, fmt.DASH)] if far is not None else [])
        for c, ms in sorted(cats.items(), key=lambda kv: (-kv[1], order(kv[0])))
        if ms > 0 or count.get(c)
    ]
    rows.append(
        [
            "total",
            str(len(listed)),
            fmt.ms(total),
            fmt.pct(100.0 if total else 0.0),
            fmt.pct(fmt.share(total, wall)),
        ] + ([far["total"]] if far is not None else [])
    )
    doc.heading(title)
    doc.table(
        rows,
        ["category", "kernels", "ms", "% kernel", "% wall"] + ([FAR_HEADER] if far is not None else []),
        ("left", "right", "right", "right", "right") + (("right",) if far is not None else ()),
    )


def _units_named(r: BreakdownResult, units: list) -> str:
    """What the top table's rows are: on the host, an extern call is an ATen op, not a kernel."""
    ops = backend(r.device) is HOST_BACKEND and any(u.kernel.category.startswith("extern_") for u in units)
    return "kernels and extern ops" if ops else "kernels"


def _top_kernels(doc: Doc, r: BreakdownResult, top: int, details: bool) -> None:
    t = r.totals()
    gain_wall = gain_frame(r).wall_ms
    us = top_step_units(r, split=False)
    roof = shows_roofline(r)
    labels = doc.kernel_labels([u.kernel.name for u in us[:top]])
    rows = [
        [
            str(i),
            u.graph.id,
            doc.named(doc.code(labels[i - 1]), u.kernel.name),
            label(u.kernel.category),
            fmt.count(u.calls),
            fmt.ms(u.ms),
            fmt.pct(fmt.share(u.ms, t.kernel_ms)),
            fmt.pct(fmt.share(u.ms, gain_wall)),
        ] + ([op_pct_cell(r, u.graph, u.kernel)] if roof else []) + [_ops(doc, u.kernel)]
        for i, u in enumerate(us[:top], 1)
    ]
    doc.heading(f"Top {min(top, len(us))} of {len(us)} {_units_named(r, us)} ({ALL_GRAPHS})")
    doc.table(
        rows,
        ["#", "graph", "kernel", "category", "calls", "ms", "% kernel", "max gain"]
        + ([PCT_HEADER] if roof else []) + ["origin ATen ops"],
        ("right", "left", "left", "left", "right", "right", "right", "right")
        + (("right",) if roof else ()) + ("left",),
        optional=TOP_OPTIONAL,
    )
    doc.chart(charts.breakdown_top(r, top))
    # the % peak cells its note explains: this table's, and the graphs' tables below it where shown
    below = [(g, k) for g in r.measured() for _, ks in _kernels_by_category(g, top) for k in ks]
    shown = [(u.graph, u.kernel) for u in us[:top]] + (below if details else [])
    doc.paragraph(max_gain_note(r, op_pct_note(r, shown) if roof else ""))
    if note := copy_marks_note([u.kernel for u in us[:top]]):
        doc.paragraph(note)


def _graph_sections(doc: Doc, r: BreakdownResult, top: int) -> None:
    roof = shows_roofline(r)
    for g in r.measured():
        _category_table(
            doc,
            g.categories,
            listed_categories(g),
            g.wall_ms,
            f"Graph {g.id}: {fmt.ms(g.wall_ms)} ms wall, busy {fmt.pct(g.busy_pct)}",
            far_below_cells(r, g.categories, [g]),
        )
        for cat, ks in _kernels_by_category(g):
            with_file = any(k.file for k in ks)
            rows = []
            for k, name in zip(ks[:top], doc.kernel_labels([k.name for k in ks[:top]]), strict=True):
                row = [
                    doc.named(doc.code(name), k.name),
                    fmt.count(k.calls),
                    fmt.ms(k.ms),
                    fmt.pct(fmt.share(k.ms, g.kernel_ms)),
                ] + ([op_pct_cell(r, g, k)] if roof else []) + [_ops(doc, k)]
                rows.append(row + ([doc.link(k.file, k.file) if k.file else ""] if with_file else []))
            headers = ["kernel", "calls", "ms", "% graph"] + ([PCT_HEADER] if roof else [])
            headers += ["origin ATen ops"] + (["file"] if with_file else [])
            doc.paragraph(doc.strong(f"{g.id} · {label(cat)}"))
            doc.table(rows, headers, optional=GRAPH_OPTIONAL)
            if note := copy_marks_note(ks[:top]):
                doc.paragraph(note)
            if len(ks) > top:
                rest = ks[top:]
                doc.paragraph(f"… and {len(rest)} more ({fmt.ms(sum(k.ms for k in rest))} ms)")


def _kernels_by_category(g: GraphResult, top: int | None = None) -> list[tuple[str, list[KernelStat]]]:
    """A graph's kernels by category, the category with the most time first, each the longest
    first (its ``top`` where given: the rows a graph's table shows)."""
    by_cat: dict[str, list[KernelStat]] = {}
    for k in g.kernels:
        by_cat.setdefault(k.category, []).append(k)
    return [(cat, sorted(by_cat[cat], key=lambda k: -k.ms)[:top])
            for cat in sorted(by_cat, key=lambda c: (-g.categories.get(c, 0.0), order(c)))]


def _footer(doc: Doc, r: BreakdownResult) -> None:
    if r.run_dir:
        traces = doc.code(f"{r.run_dir}/graphs/<graph>/trace.json.gz")
        traced = any(g.trace for g in r.graphs)
        doc.paragraph(f"run directory: {doc.code(r.run_dir)}"
                      + (f"\ntraces: {traces} (open in https://ui.perfetto.dev)" if traced else ""))
    doc.links("Each graph's files", charts.graph_files(r), charts.PERFETTO_HOW)


def render_breakdown(
    r: BreakdownResult,
    fmt_name: str = TEXT,
    *,
    top: int = DEFAULT_TOP,
    details: bool = True,
    by: str = By.KERNEL,
    depth: int | None = None,
    width: int | None = None,
) -> str:
    """``by``: kernel (extern calls one by one where the result has their sources), op (one row
    per extern op: the report before source attribution), module (cut to ``depth`` parts) or
    line. ``width``: the terminal's, which text tables fit."""
    doc = new_doc(fmt_name, width)
    _header(doc, r)
    if r.graphs:
        graph_table(doc, r)
        doc.chart(charts.breakdown_busy(r))
        render_execution(doc, r)
    t = r.totals()
    if t.graphs:
        _kernel_tables(doc, r, by, top, depth, details)
        roofline_section(doc, r, top)
        compile_lines(doc, r)
        if details and by in (By.KERNEL, By.OP) and t.kernel_count:  # each graph's kernels
            (graph_units if by == By.KERNEL and has_sources(r) else _graph_sections)(doc, r, top)
    _footer(doc, r)
    return doc.render()


def _kernel_tables(doc: Doc, r: BreakdownResult, by: str, top: int, depth: int | None, details: bool) -> None:
    """The categories and the top kernels in the view asked; one line where no kernel ran."""
    t = r.totals()
    if not t.kernel_count:  # graphs that only alias or view their inputs
        doc.paragraph(f"No kernel or extern call ran in the measured graphs: their {fmt.ms(t.wall_ms)} ms "
                      "is all the wrapper's (Python, allocation, bookkeeping).")
        return
    _category_table(doc, t.categories, [c for g in r.measured() for c in listed_categories(g)], t.wall_ms,
                    f"Time by category ({ALL_GRAPHS})", far_below_cells(r, t.categories))
    doc.chart(charts.breakdown_categories(r))
    if note := weight_copy_note(r):
        doc.paragraph(note)
    if by in (By.MODULE, By.LINE):
        source_view(doc, r, by, top, depth)
    elif by == By.KERNEL and has_sources(r):
        top_units(doc, r, top)
    else:
        _top_kernels(doc, r, top, details and by in (By.KERNEL, By.OP))
