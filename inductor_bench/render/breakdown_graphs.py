"""A breakdown's graph table: each graph's calls, steady iterations and times, and how those
times were made (the iterations left out as disturbed, and why)."""

from __future__ import annotations

import statistics

from ..core import steady
from ..core.devices import backend
from ..core.leftout import describe, left_out_why
from ..core.results import STEADY_SINCE, BreakdownResult, GraphResult
from ..core.step_totals import ALL_GRAPHS, ALL_GRAPHS_ROW, counted, listed_categories, reweighed
from ..core.vocab import Status
from . import format as fmt
from .doc import Doc
from .windows import windows_note


def _failed(doc: Doc, g: GraphResult) -> str:
    """A graph's status and the first 60 characters of why it failed, cut with ``…`` (the run's
    status lines above give the line whole, the HTML page's cell on hover the whole error)."""
    why = (g.error or "").strip()
    line = why.splitlines()[0] if why else ""
    shown = line if len(line) <= 60 and line == why else line[:59] + "…"
    return doc.named(f"{g.status}: {shown}", f"{g.status}: {why}")


def graph_table(doc: Doc, r: BreakdownResult) -> None:
    t = r.totals()
    calls = reweighed(t.weights)  # a calls column: the whole row adds each graph's calls
    rows = []
    for g in r.graphs:
        n = [fmt.count(g.calls) if g.calls is not None else ""] if calls else []
        if g.ok:
            rows.append([g.id, g.role, *n, _iterations(g), fmt.ms(g.wall_ms), fmt.ms(g.kernel_ms),
                         fmt.pct(g.busy_pct), str(len(listed_categories(g))), Status.OK])
        else:
            rows.append([g.id, g.role, *n, "", "", "", "", "", _failed(doc, g)])
    n = [fmt.count(sum(t.weights.values()))] if calls else []
    rows.append([ALL_GRAPHS, f"{t.graphs} graph(s)", *n, "", fmt.ms(t.wall_ms), fmt.ms(t.kernel_ms),
                 fmt.pct(t.busy_pct), str(t.kernel_count), ""])
    if calls:
        heading = f"Graphs (times per call; {ALL_GRAPHS_ROW}: each graph times its calls)"
    elif not counted(r.measured()):  # a run recorded before calls were counted, or without them
        heading = "Graphs (each taken once: their calls were not counted)"
    else:
        heading = "Graphs (one call each)" if r.script else "Graphs (one call each per step)"
    doc.heading(heading)
    doc.table(
        rows,
        ["graph", "role", *(["calls"] if calls else []), "steady iters", "wall ms", "kernel ms", "busy",
         "kernels", "status"],
        ("left", "left", *(("right",) if calls else ()), "right", "right", "right", "right", "right", "left"),
    )
    doc.paragraph(backend(r.device).busy_note)
    doc.paragraph(steady_note(r, doc))
    note = windows_note(r)
    if note:
        doc.paragraph(note)


def _iterations(g: GraphResult) -> str:
    """Steady iterations of the kept window: "95/100" when some were left out."""
    n = len(g.wall_samples_ms) or g.iterations
    return f"{n - len(g.left_out)}/{n}" if g.left_out else str(n)


def steady_note(r: BreakdownResult, doc: Doc) -> str:
    """How every time was made, and which iterations were left out as disturbed."""
    if r.schema_version < STEADY_SINCE:
        return (
            "times: means over every profiled iteration (this result was saved before the "
            "steady-iteration policy, by a version that kept no profiles to analyse again, so "
            "`inductor-bench report RUN --reanalyze` cannot re-derive them: a new breakdown of the "
            "model measures them by it: docs/statistics.md)"
        )
    head = (
        "times: the mean over each graph's steady iterations, the same iterations for every "
        f"figure of the graph; an iteration slower than the median by over {steady.TAIL_SIGMAS:g} "
        f"robust sigmas and {100 * steady.TAIL_FLOOR:.0f}%, or with a kernel (or the idle time "
        f"between kernels) that much slower than its own median by over "
        f"{100 * steady.EXCESS_FLOOR:.0f}% of the iteration, is left out as disturbed, as is "
        "one the worker's own clock (by which the window was chosen) finds that slow "
        "(docs/statistics.md)"
    )
    out = []
    for g in r.measured():
        if not g.left_out:
            continue
        why_out = left_out_why(g)  # the three counts add up to the iterations left out
        wall, clock, parts = why_out.wall, why_out.clock, len(why_out.parts)
        load = g.kept_load
        why = f"; meanwhile {load.describe()}" if load is not None and load.disturbed else ""
        out.append(
            f"{g.id} {len(g.left_out)} of {len(g.wall_samples_ms)} ({len(wall)} over the wall limit "
            f"{fmt.ms(g.limit_ms or 0.0)} ms{_faster_half(g)}, up to {fmt.ms(max(g.wall_samples_ms))} ms"
            + (f"; {len(clock)} more slow by the worker's clock" if clock else "")
            + (f"; {parts} more by one kernel or idle gap{describe(why_out, code=doc.code)}" if parts else "")
            + f"{why})"
        )
    if not out:
        return head + "; none was."
    return head + ": " + "; ".join(out) + "."


def _faster_half(g: GraphResult) -> str:
    """Where the walls' limit lies below their median: whose limit it is."""
    if g.limit_ms is None or g.limit_ms >= statistics.median(g.wall_samples_ms):
        return ""
    return ", the faster half's: most iterations stalled"
