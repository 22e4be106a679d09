"""The breakdown by source: the kernel view with extern calls one by one and where each
kernel comes from (module path · file:line), and the views by module and by source line."""

from __future__ import annotations

from itertools import groupby
from operator import itemgetter
from pathlib import PurePath
from typing import Any

from ..core.categories import label, order
from ..core.compiled_from import top_levels
from ..core.results import BreakdownResult
from ..core.source_chains import label_code, label_text
from ..core.sources import ROOT_MODULE, Origin, SourceLine
from ..core.step import gain_frame
from ..core.step_totals import ALL_GRAPHS, ALL_GRAPHS_ROW, reweighed
from ..core.symbols import shapes_at
from ..core.views import (
    BUILT_AT,
    By,
    Group,
    Unit,
    built_lines,
    by_line,
    by_module,
    module_key,
    step_units,
    top_step_units,
    units,
)
from ..core.vocab import Role
from ..core.weight_copies import COPIES as COPY_ORIGINS
from ..core.weight_copies import INPUT_COPIES, WEIGHT_COPIES
from . import charts
from . import format as fmt
from .doc import Doc
from .roofline import PCT_HEADER, group_pct_cell, shows_roofline, unit_member, unit_pct_cell
from .view_marks import cell_marks, marks_note
from .weight_copy import copy_mark, copy_marks_note

TOP_LEVEL = "(top level)"  # code of the compiled function itself, or a node with no module stack
COPIES_ROW = f"({WEIGHT_COPIES})"  # the row, and the source cell, of such kernels (core/weight_copies.py)
INPUT_ROW = f"({INPUT_COPIES})"  # ... and of the kernels that mostly copy the model's input
MODULES_SHOWN = 2  # module paths named in a kernel's source cell before "+N"
LINES_SHOWN = 6  # source lines named there before "+N lines" (the views by line list them all)
# The columns of the kernel tables a terminal too narrow for them leaves out, in this order
# (``table_fit``): what the row's other cells or the category table already say.
TOP_OPTIONAL = ("% kernel", "calls", "#", "category")
GRAPH_OPTIONAL = ("file", "inputs", "calls")
# ... and of the views by op, module and line: the kernel tables name each kernel's modules and
# lines (its group), and ms holds the forward's and backward's split
VIEW_OPTIONAL = ("kernel", ("fwd ms", "bwd ms"), "kernels")  # forward and backward go together


def module_name(path: str) -> str:
    return path if path != ROOT_MODULE else TOP_LEVEL


def lines_text(lines: list[SourceLine], limit: int | None = None) -> str:
    """``net.py:16,18`` (lines of one file together), ``a.py:3 + b.py:5``; past ``limit``
    lines, the first of them and ``+N lines``."""
    by_file: dict[str, list[int]] = {}
    for ln in lines:
        by_file.setdefault(PurePath(ln.file).name, []).append(ln.line)
    picked = [(f, n) for f, ns in by_file.items() for n in sorted(set(ns))]
    cut = picked[:limit]
    text = " + ".join(f"{f}:{','.join(str(n) for _, n in run)}" for f, run in groupby(cut, key=itemgetter(0)))
    return text + (f" +{len(picked) - len(cut)} lines" if len(cut) < len(picked) else "")


def where(origin: Origin | None, note: str | None = None, types: dict[str, str] | None = None,
          root: str = ROOT_MODULE, sites: dict[str, list[Any]] | None = None) -> str:
    """A kernel's source cell: ``blocks.0.conv1 · net.py:16``, or why there is none; with no
    line, each module with its class where ``types`` knows it, once for modules of one class
    in a row, and the lines that built them where ``sites`` knows them (``0, 2 (Linear) ·
    built at seq.py:6,8``; else ``· no line``); the graph's own code as ``root`` names it
    (``compiled_from.top_levels``)."""
    if origin is None:
        return f"no source: {note}" if note else ""
    if origin.missing in COPY_ORIGINS and not origin.lines and not origin.modules:
        return f"({origin.missing})"
    named = [root if m == ROOT_MODULE else m for m in origin.modules[:MODULES_SHOWN]]
    kinds = [(types or {}).get(m) if not origin.lines else None for m in named]
    mods = [module_name(m) + (f" ({k})" if k and (i + 1 == len(named) or kinds[i + 1] != k) else "")
            for i, (m, k) in enumerate(zip(named, kinds, strict=True))]  # a class once per run of it
    more = len(origin.modules) - MODULES_SHOWN
    shown = ", ".join(mods) + (f" +{more}" if more > 0 else "")
    if not origin.lines:  # the module alone, where Dynamo recorded it but no line
        built = built_lines(origin, sites or {})
        said = f"built at {lines_text(built, LINES_SHOWN)}" if built else "no line"
        return f"{shown} · {said}" if shown else f"no source: {origin.missing or 'unknown'}"
    text = lines_text(origin.lines, LINES_SHOWN) + (" (recomputed)" if origin.recomputed else "")
    return f"{shown} · {text}" if shown else text


def _kernel_cell(doc: Doc, u: Unit, name: str) -> str:
    """A unit's kernel by ``name``, its label as code (the whole name on hover in HTML)."""
    return doc.named(doc.code(name + u.site_mark), u.kernel.name)


def top_units(doc: Doc, r: BreakdownResult, top: int) -> None:
    """The top kernels of the step, extern ops one row per call site."""
    t = r.totals()
    gain_wall = gain_frame(r).wall_ms
    us = top_step_units(r)
    roof = shows_roofline(r)
    roots = top_levels(r.measured())
    labels = doc.kernel_labels([u.kernel.name for u in us[:top]])
    rows = [
        [
            str(i),
            u.graph.id,
            _kernel_cell(doc, u, labels[i - 1]),
            label(u.kernel.category),
            fmt.count(u.calls),
            fmt.ms(u.ms),
            fmt.pct(fmt.share(u.ms, t.kernel_ms)),
            fmt.pct(fmt.share(u.ms, gain_wall)),
        ] + ([unit_pct_cell(r, u)] if roof else [])
        + [where(u.origin, u.graph.attribution, u.graph.module_types, roots.get(u.graph.id, ROOT_MODULE),
                 u.graph.module_sites) + copy_mark(u.kernel)]
        for i, u in enumerate(us[:top], 1)
    ]
    doc.heading(f"Top {min(top, len(us))} of {len(us)} kernels and extern calls ({ALL_GRAPHS})")
    doc.table(
        rows,
        ["#", "graph", "kernel", "category", "calls", "ms", "% kernel", "max gain"]
        + ([PCT_HEADER] if roof else []) + ["source"],
        ("right", "left", "left", "left", "right", "right", "right", "right")
        + (("right",) if roof else ()) + ("left",),
        optional=TOP_OPTIONAL,
    )
    doc.chart(charts.breakdown_top_units(r, us[:top]))
    doc.paragraph(max_gain_note(r, " Extern ops are one row per call in the compiled module (#n: its "
                                   "n-th extern call); --by op adds them up per op."))
    if note := copy_marks_note([u.kernel for u in us[:top]]):
        doc.paragraph(note)


def max_gain_note(r: BreakdownResult, more: str) -> str:
    """What the top kernels' max gain (and, where graphs weigh by their calls, calls and ms) mean."""
    if r.script:
        text = ("max gain = the kernel's share of the script's time in its compiled graphs: the most "
                "that time can shrink if this kernel took no time at all (Amdahl).")
    elif (frame := gain_frame(r)).outside_ms > 0:
        text = (f"max gain = the kernel's share of {fmt.ms(frame.wall_ms)} ms, {ALL_GRAPHS_ROW}'s "
                f"{fmt.ms(frame.graphs_ms)} ms and the {fmt.ms(frame.outside_ms)} ms outside the graphs: "
                "the most the step can speed up if this kernel took no time at all (Amdahl).")
    else:
        text = (f"max gain = the kernel's share of {ALL_GRAPHS_ROW}'s wall time: the most the step "
                "can speed up if this kernel took no time at all (Amdahl).")
    if reweighed(r.weights()):
        text += (" calls and ms: in all its graph's calls in the script (each graph's own table: one call)."
                 if r.script else " calls and ms: per step, in all its graph's calls.")
    if shows_roofline(r) and any(k.beside for g in r.measured() for k in g.kernels):
        text += (f" {PCT_HEADER} of an extern call's main kernel: its calls' work over the time of every "
                 "kernel they ran (a split-K reduction's too, whose own row reads -; the roofline section "
                 "names them).")
    return text + more


def graph_units(doc: Doc, r: BreakdownResult, top: int) -> None:
    """Each graph's kernels by category, extern ops one row per call site (each with its own
    % peak where the call was counted)."""
    roof = shows_roofline(r)
    roots = top_levels(r.measured())
    for g in r.measured():
        by_cat: dict[str, list[Unit]] = {}
        for u in units([g]):
            by_cat.setdefault(u.kernel.category, []).append(u)
        doc.heading(f"Graph {g.id}: kernels and extern calls")
        doc.paragraph(f"{fmt.ms(g.wall_ms)} ms wall, busy {fmt.pct(g.busy_pct)}, "
                      f"{fmt.ms(g.kernel_ms)} ms of kernels")
        if g.attribution:
            doc.paragraph(f"source attribution: {g.attribution}")
        for cat in sorted(by_cat, key=lambda c: (-g.categories.get(c, 0.0), order(c))):
            us = sorted(by_cat[cat], key=lambda u: -u.ms)
            with_inputs = any(u.site and u.site.shapes for u in us)
            with_file = any(u.kernel.file for u in us)
            rows, at = [], {**g.sizes, **g.unbacked}
            labels = doc.kernel_labels([u.kernel.name for u in us[:top]])
            for u, name in zip(us[:top], labels, strict=True):
                share = fmt.pct(fmt.share(u.ms, g.kernel_ms))
                row = [_kernel_cell(doc, u, name), fmt.count(u.calls), fmt.ms(u.ms), share]
                row += [unit_pct_cell(r, u)] if roof else []
                row.append(where(u.origin, g.attribution, g.module_types, roots.get(g.id, ROOT_MODULE),
                                 g.module_sites) + copy_mark(u.kernel))
                if with_inputs:
                    row.append(", ".join(shapes_at(u.site.shapes, at)) if u.site else "")
                rows.append(row + ([u.kernel.file or ""] if with_file else []))
            headers = ["kernel", "calls", "ms", "% graph"] + ([PCT_HEADER] if roof else []) + ["source"]
            headers += (["inputs"] if with_inputs else []) + (["file"] if with_file else [])
            cat_ms = g.categories.get(cat, 0.0)
            doc.paragraph(doc.strong(f"{g.id} · {label(cat)}") + f": {fmt.ms(cat_ms)} ms, "
                          f"{fmt.pct(fmt.share(cat_ms, g.kernel_ms))} of its kernel time")
            doc.table(rows, headers, optional=GRAPH_OPTIONAL)
            if note := copy_marks_note([u.kernel for u in us[:top]]):
                doc.paragraph(note)
            if len(us) > top:
                rest = us[top:]
                doc.paragraph(f"… and {len(rest)} more ({fmt.ms(sum(u.ms for u in rest))} ms)")


def source_view(doc: Doc, r: BreakdownResult, by: str, top: int, depth: int | None) -> None:
    """Time per source line (groups of lines a kernel fuses) or per module (cut to ``depth``);
    the kernels of a graph the step never called (compiled, then left for a recompile's) are
    no time of any line or module, and not listed."""
    weights = r.weights()
    us = [u for u in step_units(r, kernel_calls=True) if weights.get(u.graph.id, 1.0) > 0]
    total = sum(u.ms for u in us)
    roots = top_levels(r.measured())
    groups = by_line(us) if by == By.LINE else by_module(us, depth, roots)
    types = module_labels(r)
    named = one_kernel_cells(doc, groups[:top], us)
    two_roles = any(g.role == Role.BACKWARD and weights.get(g.id, 1.0) > 0 for g in r.measured())
    roof = shows_roofline(r)
    rows: list[list[str]] = []
    marks: set[str] = set()  # the marks before a group's % peak: each of its kernels latency-bound, in cache
    for i, grp in enumerate(groups[:top], 1):
        times = [fmt.ms(grp.ms), fmt.pct(fmt.share(grp.ms, total))]
        if two_roles:
            times += [_role_ms(grp, False, grp.forward_ms), _role_ms(grp, True, grp.backward_ms)]
        entries = _entries(doc, grp, by, types)
        peak = [group_pct_cell(r, [unit_member(u) for u in grp.units])] if roof else []
        marks |= {cell_marks(c) for c in peak}
        rows.append([str(i), *times, str(len(grp.units)), *peak, named[i - 1], *entries[0]])
        blank = [""] * (3 + len(times) + len(peak))
        rows += [[*blank, *e] for e in entries[1:]]
    shown = groups[:top]
    rest = groups[top:]
    if rest:
        ms = sum(g.ms for g in rest)
        rows.append(["", fmt.ms(ms), fmt.pct(fmt.share(ms, total))] + [""] * (len(rows[0]) - 3))
        rows[-1][-2 if by == By.LINE else -1] = f"… {len(rest)} more group{'' if len(rest) == 1 else 's'}"
    total_row = _total_row(total, us, two_roles, by)
    if roof:
        total_row.insert(6 if two_roles else 4, cell := group_pct_cell(r, [unit_member(u) for u in us]))
        marks.add(cell_marks(cell))
    rows.append(total_row)
    what = "source line" if by == By.LINE else "module" + (f" at depth {depth}" if depth else "")
    doc.heading(f"Time by {what} ({ALL_GRAPHS}): {len(shown)} of {len(groups)} groups")
    headers = ["#", "ms", "% kernel"] + (["fwd ms", "bwd ms"] if two_roles else []) + ["kernels"]
    headers += ([PCT_HEADER] if roof else []) + ["kernel"]
    headers += ["line", "source"] if by == By.LINE else ["module"]
    text = 3 if by == By.LINE else 2  # the kernel's name and the group's cells, left-aligned
    gone = doc.table(rows, headers, ("right",) * (len(headers) - text) + ("left",) * text,
                     optional=VIEW_OPTIONAL)
    kernels = "kernels" not in gone  # the notes explain the columns shown
    reused = any(u.site is not None and not u.site.extern for u in us)
    built = BUILT if by == By.LINE and any(g.built for g in shown) else ""
    via = VIA if by == By.LINE and any(ln.via for g in shown for ln in g.lines) else ""
    via += COPIES if any(g.missing == WEIGHT_COPIES for g in shown) else ""
    via += INPUT_COPIES_NOTE if any(g.missing == INPUT_COPIES for g in shown) else ""
    doc.paragraph(_view_note(by, bool(roots), kernels, any(named) and "kernel" not in gone)
                  + (f" {REUSED}{REUSED_KERNELS if kernels else '.'}" if reused else "") + built + via
                  + (marks_note(marks) if PCT_HEADER not in gone else ""))


def module_labels(r: BreakdownResult) -> dict[str, str]:
    """Each module as the module view keys it (``core/views.module_key``) -> its class, and for
    one none of whose kernels ran a line of the model, the line that built it
    (``Linear, built at two.py:3``)."""
    labels: dict[str, str] = {}
    for g in r.measured():
        for path in {*g.module_types, *g.module_sites}:
            built = built_lines(Origin(modules=[path]), g.module_sites)
            said = [g.module_types.get(path, "")] + ([f"built at {lines_text(built)}"] if built else [])
            labels[module_key(path, g.module_sites)] = ", ".join(x for x in said if x)
    return labels


def one_kernel_cells(doc: Doc, groups: list[Group], us: list[Unit]) -> list[str]:
    """Each group's kernel column: the name of the one kernel it holds (``Group.one_kernel``), as
    the kernel tables label it, with its graph where another graph of ``us`` has a kernel of that
    name (``cpp_fused_0 (0-backward)``); empty for a group of several kernels."""
    ones = [g.one_kernel for g in groups]
    graphs: dict[str, set[str]] = {}
    for u in us:
        graphs.setdefault(u.kernel.name, set()).add(u.graph.id)
    labels = iter(doc.kernel_labels([u.kernel.name for u in ones if u is not None]))
    return ["" if u is None else doc.named(doc.code(next(labels)), u.kernel.name)
            + (f" ({u.graph.id})" if len(graphs[u.kernel.name]) > 1 else "") for u in ones]


def _role_ms(grp: Group, backward: bool, ms: float) -> str:
    """The group's time in one role; a dash where none of its kernels ran in that role."""
    return fmt.ms(ms) if any(u.backward == backward for u in grp.units) else fmt.DASH


def _entries(doc: Doc, grp: Group, by: str, types: dict[str, str]) -> list[list[str]]:
    """The group's cells: one entry per line, its source as code (module, with its class where
    known: ``features.3 (Conv2d)``), the first on the group's row."""
    if grp.missing in COPY_ORIGINS:
        row, source = f"({grp.missing})", COPIES_SOURCE[grp.missing]
        return [[row, source] if by == By.LINE else [row]]
    if grp.missing is not None:
        cells = ["(no source line)", grp.missing] if by == By.LINE else [f"(no module) {grp.missing}"]
        return [cells]
    if by == By.LINE:
        built = " (built there)" if grp.built else ""
        return [[("+ " if i else "") + label_text(ln) + built, doc.code(label_code(ln))]
                for i, ln in enumerate(grp.lines)]
    named = [(module_name(m.split(BUILT_AT)[0]), types.get(m)) for m in grp.key]
    return [[("+ " if i else "") + name + (f" ({kind})" if kind else "")]
            for i, (name, kind) in enumerate(named)]


def _total_row(total: float, us: list[Unit], two_roles: bool, by: str) -> list[str]:
    row = ["total", fmt.ms(total), fmt.pct(100.0 if total else 0.0)]
    if two_roles:
        bwd = sum(u.ms for u in us if u.backward)
        row += [fmt.ms(total - bwd), fmt.ms(bwd)]
    return row + [str(len(us)), ""] + (["", ""] if by == By.LINE else [""])


BUILT = (" (built there): the kernels of torch's own modules run by torch's own code (an nn.Sequential "
         "of torch layers) ran no line of the model; they count at the line that built their module.")
VIA = (" A via B: line A (a layer's own code, reached from several lines) as called from line B, "
       "whose text is shown (docs/attribution.md).")
COPIES_SOURCE = {WEIGHT_COPIES: "no line: Inductor copies the weights on every call",
                 INPUT_COPIES: "no line: Inductor copies the input on every call"}
COPIES = (f" {COPIES_ROW}: generated kernels that copy the convolutions' weights (with the model's input, "
          "where one kernel copies both) from the layout the model keeps them in into channels-last, the "
          "layout the convolutions read, on every call; a model and input in channels_last "
          "(model.to(memory_format=torch.channels_last)) have none to copy, and with --freezing "
          "(inference) the weights are copied once, at compile.")
INPUT_COPIES_NOTE = (f" {INPUT_ROW}: a generated kernel that copies the model's input (with fewer "
                     "bytes of weights, where one kernel copies both) into channels-last, the layout the "
                     "convolutions read, on every call; an input in channels_last "
                     "(x.to(memory_format=torch.channels_last)) is not copied, and with the model in "
                     "channels_last too nothing is.")
ONE_KERNEL = "kernel = the group's kernel or extern op, where it holds one (its calls at several places too)."
REUSED = ("A kernel called at several places (one code for the same work in each layer) counts each "
          "call where that call comes from: its time there")
REUSED_KERNELS = ", and one in that group's kernels (the column's total counts it once per place)."


def _view_note(by: str, named_roots: bool = False, kernels: bool = True, kernel: bool = False) -> str:
    """The note under a view; ``kernels``, ``kernel``: whether its kernels column, and a kernel
    column naming some group's kernel, are shown."""
    column = " kernels = kernels and extern calls in the group." if kernels else ""
    column += f" {ONE_KERNEL}" if kernel else ""
    if by == By.LINE:
        return (
            "A kernel that fuses operations of several lines is counted once, in the group of all "
            "its lines (+ rows); a backward kernel counts at the forward lines it differentiates."
            + column
        )
    return (
        "A kernel that ran in several modules is counted once, in the group of all of them (+ rows); "
        + (f"{TOP_LEVEL} = the compiled function's own code" if not named_roots else
           "(top level of F) = the code of the compiled function F itself, outside every nn.Module")
        + ", listed after the modules a kernel fuses it with."
        + column
    )
