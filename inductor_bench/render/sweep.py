"""A sweep's report: the gate's verdict (with ``--baseline``), the geometric-mean speedup per
mode, one row per model and mode (speedup over eager and its interval, compare's verdict, busy
%, the top kernel category, compile time, status), how each cell ran. The HTML page also draws
the models by the modes as a heatmap (``sweep_html.py``). Returns strings."""

from __future__ import annotations

import json

from ..core.categories import label
from ..core.compare import EAGER
from ..core.sweep import Cell
from ..core.sweep_cells import grid_size, how_it_ended, models, progress_line
from ..core.sweep_table import Figures, Gate, OtherWorkload, Regression, SweepTable
from .chart_model import Bar, Chart, Segment
from .doc import TEXT, Doc, new_doc
from .format import interval_pct, interval_x, ms_precise, rel_change_pct, seconds, speedup_at

HEADERS = [
    "model",
    "mode",
    "speedup",
    "95% interval",
    "verdict",
    "busy %",
    "top category",
    "compile",
    "graph breaks",
    "status",
]

# what a terminal too narrow for the table leaves out, in this order (``table_fit``): each
# model's compare and breakdown keep them
OPTIONAL = ("compile", "top category", "busy %")

# beside the busy % and top category of a cell whose breakdown was profiled disturbed
DISTURBED_MARK = " (!)"


# the speedup cell of a mode whose rounds were mostly disturbed: no figure
NO_SPEEDUP = "n/m"
# the interval cell of a speedup with too few steady rounds for one (``Figures.no_interval``)
NO_INTERVAL = "too few steady rounds"


def speedup_text(f: Figures) -> str:
    """As compare prints it: more decimals where two would reach the verdict's floor."""
    return NO_SPEEDUP if f.no_speedup else speedup_at(f.speedup, f.min_rel)


def geomean_text(table: SweepTable, mode: str) -> str:
    """The mode's geomean, at the decimals its cells' floor asks (``speedup_text``)."""
    return speedup_at(table.geomeans[mode][0], table.min_rel(mode))


def top_text(f: Figures) -> str:
    if f.top_category is None:
        return "-"
    return f"{label(f.top_category)} {f.top_share_pct:.0f}%"


def _status(f: Figures) -> str:
    if f.status == "ok":
        return "ok"
    return f"{f.status}: {f.reason}" if f.reason else f.status


def reference_text(f: Figures) -> str:
    """The reference's own speedup cell: 1.00x where it was timed by a job that ran to its end;
    else no figure (a cell stopped, timed out or killed: its reference did not complete)."""
    return "1.00x (reference)" if f.status == "ok" and f.speedup is not None else "- (reference)"


def row(f: Figures, ref: str) -> list[str]:
    return [
        f.model,
        f.mode,
        reference_text(f) if f.mode == ref else speedup_text(f),
        interval_x(f.speedup_ci, f.min_rel) or (NO_INTERVAL if f.no_interval else "-"),
        f.verdict or f.no_speedup or "-",
        (f"{f.busy_pct:.1f}%" + DISTURBED_MARK * bool(f.disturbed)) if f.busy_pct is not None else "-",
        top_text(f) + DISTURBED_MARK * bool(f.disturbed and f.top_category),
        seconds(f.compile_s) if f.compile_s is not None and f.mode != EAGER else "-",  # nothing to compile
        str(f.graph_breaks) if f.graph_breaks is not None else "-",
        _status(f),
    ]


def geomean_rows(table: SweepTable) -> list[list[str]]:
    n = len(table.rows)
    return [
        [mode, geomean_text(table, mode), f"{k}/{n}"] for mode, (_, k) in table.geomeans.items()
    ]


def geomean_line(table: SweepTable) -> str:
    n = len(table.rows)
    parts = [  # no geomean: '-', its count saying why (``0 of 2 models``)
        f"{mode} {geomean_text(table, mode) if g is not None else '-'} ({k} of {models(n)}"
        f"{_left_out(table, mode)})"
        for mode, (g, k) in table.geomeans.items()
    ]
    if not parts:  # the reference alone (a baseline for --baseline): no speedup to average
        return f"Geomean speedup over {table.reference}: none, no other mode was swept"
    return f"Geomean speedup over {table.reference}: " + ", ".join(parts)


def _left_out(table: SweepTable, mode: str) -> str:
    """The models out of a mode's geomean for want of steady rounds, and why (``; b left out:
    7 of 10 rounds disturbed``), after its count."""
    left = table.geomean_left_out.get(mode, {})
    return "".join(f"; {model} left out: {why}" for model, why in left.items())


def gate_line(gate: Gate, doc: Doc) -> str:
    """The verdict against the baseline: the gate's with ``--fail-on-regression``; with
    ``--baseline`` alone, as ``diff`` words it without a gate (every significant slowdown)."""
    t = gate.threshold_pct
    other = f" (the baseline sweep's workload options: {'; '.join(gate.settings)})" if gate.settings else ""
    return _verdict(gate, doc, t) + other


def regression_text(r: Regression, *, interval: bool = False) -> str:
    """``mlp:default +9.97% [+9.96%..+12.3%]``: the change (and its interval) at the decimals
    diff prints it with, so that a change just under the floor never reads as reaching it."""
    change = f"{r.model}:{r.mode} {rel_change_pct(r.rel_pct, r.min_rel)}"
    return f"{change} {interval_pct(r.ratio_ci, r.min_rel)}".rstrip() if interval else change


def _verdict(gate: Gate, doc: Doc, t: float | None) -> str:
    unjudged = "; ".join([*gate.unmeasured, *map(_other_workload, gate.other_workload)])
    if gate.regressions:  # what could not be judged beside them is named too: no other line says it
        what = "; ".join(regression_text(r, interval=True) for r in gate.regressions)
        return (doc.alert("REGRESSION" + (f" above the {t:g}% gate" if t is not None else "")) + f": {what}"
                + (f" | not comparable, no verdict: {unjudged}" if unjudged else ""))
    if unjudged:
        return (
            doc.alert("NOT COMPARABLE" + (f", so the {t:g}% gate fails" if t is not None else ""))
            + f": {unjudged} - no verdict without them"
        )
    n = gate.judged
    judged = f"{n} model-mode{'s' * (n != 1)} judged" + (", eager included" if gate.judged_eager else "")
    if t is None:
        return doc.strong("NO REGRESSION") + f" against the baseline ({judged})"
    return doc.strong(f"NO REGRESSION above the {t:g}% gate") + f" ({judged})"


def _other_workload(o: OtherWorkload) -> str:
    """``mlp: the baseline ran another workload: batch size 64 -> 128 (default 0.3656 -> 0.7310
    ms, not judged)``: each mode's step times side by side."""
    steps = ", ".join(f"{mode} {ms_precise(b)} -> {ms_precise(h)} ms" for mode, b, h in o.steps)
    return o.describe() + (f" ({steps}, not judged)" if steps else "")


def _what(table: SweepTable) -> str:
    s = table.sweep
    step = "train step (forward + backward)" if "--train" in s.compare_args else "inference"
    shard = f", shard {s.shard[0]}/{s.shard[1]}" if s.shard else ""
    return f"{grid_size(s)}, {step}, --device {s.device}, {s.executor} executor{shard}"


def _speedup_is(table: SweepTable) -> str | None:
    """What a speedup is: compare's median of its rounds' ratios where its columns were timed
    in interleaved rounds (not the ratio of the two step times compare's report shows), else
    that ratio of steps each column timed in its own compile worker (a compare stopped before
    its interleaved timing, or whose timing failed), those models named where both kinds are
    shown; None where no cell has a speedup, nor rounds that were too disturbed for one."""
    ref = table.reference
    figs = [f for r in table.rows.values() for f in r.values()
            if f.mode != ref and (f.speedup is not None or f.no_speedup)]
    if not figs:
        return None
    apart = (f"step time of {ref} / step time of the mode, from each model's compare, each column's steps "
             "timed in its own compile worker (separate processes, not interleaved)")
    if not any(f.speedup_rounds for f in figs):
        return apart
    out = (f"compare's median over the model's interleaved rounds of {ref}'s step time / the mode's in "
           "that round (every column timed in one process), not the ratio of the two step times")
    unpaired = ", ".join(sorted({f.model for f in figs if not f.speedup_rounds}))
    return out + (f"; where a compare was not timed in rounds ({unpaired}): {apart}" if unpaired else "")


def _speedup_note(table: SweepTable) -> list[str]:
    """The legend of the speedup, its interval, verdict and geomean, where a cell has one; else
    why none has (the reference swept alone: the geomean line says so)."""
    what = _speedup_is(table)
    if what is not None:
        return [f"speedup = {what}; its 95% interval and verdict are compare's (docs/compare-and-diff.md); "
                "geomean over the models where the mode was timed by a job that ran to its end"]
    if not table.geomeans:
        return []
    return [f"no speedup: no model's compare timed another mode beside {table.reference} (each row's "
            "status says why)"]


def _figures_note(table: SweepTable) -> list[str]:
    """The legend of the busy %, top category, compile and graph breaks columns: of those a
    cell has a figure in (none where no cell has: a sweep whose jobs all stopped or failed)."""
    figs = [f for r in table.rows.values() for f in r.values()]
    parts = [
        what
        for what, shown in (
            ("busy % and top category (share of kernel time): from each mode's breakdown",
             any(f.busy_pct is not None or f.top_category is not None for f in figs)),
            ("compile: the first call, timed on its own",
             any(f.compile_s is not None and f.mode != EAGER for f in figs)),
            ("graph breaks: the distinct breaks Dynamo met compiling it (each one's place and reason: "
             "that model's compare report)", any(f.graph_breaks is not None for f in figs)),
        )
        if shown
    ]
    return ["; ".join(parts)] if parts else []


def baseline_warnings(table: SweepTable) -> list[str]:
    """The warnings ``diff`` gives for each model's two compares, in its words (base: the baseline's,
    head: this sweep's): ``warning: mlp against the baseline: torch settings differ: ...``; of this
    sweep's side, those the notes do not give already (its steps or profiles measured disturbed)."""
    if table.gate is None:
        return []
    return [f"warning: {model} against the baseline: {w}" for model, lines in table.gate.warnings.items()
            for w in lines if w not in _said_of_head(table, model)]


def _said_of_head(table: SweepTable, model: str) -> set[str]:
    """What the notes say of ``model``'s disturbed steps and profiles, as diff words it of its head."""
    said = {f"head: {line}" for line in table.step_disturbed.get(model, [])}
    return said | {f"head: {f.mode}: {d}" for f in table.rows.get(model, {}).values() for d in f.disturbed}


def notes(table: SweepTable) -> list[str]:
    s = table.sweep
    out = [
        *_speedup_note(table),
        *_figures_note(table),
    ]
    if any(f.no_speedup for r in table.rows.values() for f in r.values()):
        out.append(f"{NO_SPEEDUP}: no speedup where most of the rounds it would be the median of were "
                   "disturbed (a block's median above its column's steady limit, docs/statistics.md); "
                   "out of the geomean")
    if any(f.no_interval for r in table.rows.values() for f in r.values()):
        out.append(f"{NO_INTERVAL}: no interval where as many rounds were disturbed as it leaves out on "
                   "a side, or more (2 of 10): a stalled round's ratio would be a bound (docs/statistics.md)")
    for f in (f for r in table.rows.values() for f in r.values() if f.disturbed):
        out.append(f"{DISTURBED_MARK.strip()} {f.model} {f.mode}: profiled disturbed, its busy % and top "
                   f"category may be off: {'; '.join(f.disturbed)}")
    out += [f"warning: {model}: {line}" for model, lines in table.step_disturbed.items() for line in lines]
    out += [f"hint: {model}: {line}" for model, line in table.threads_hints.items()]
    out += baseline_warnings(table)
    if table.reference != "eager":
        out.append(f"no eager column (--no-eager): speedups are over the first mode, {table.reference}")
    if s.shard and not s.cells:
        n = len(s.models)
        out.append(f"shard {s.shard[0]}/{s.shard[1]} holds none of the {n} model{'s' if n != 1 else ''} "
                   f"given: {s.shard[1]} shards of {n} leave {s.shard[1] - n} empty")
    for c in s.cells:
        ended = how_it_ended(c, job_time(c))
        where = f" on {c.where}" if c.where else ""
        tries = f", attempt {c.attempts}" if c.attempts > 1 else ""
        left_out = (
            f"; what it measured is shown, marked {c.status}, left out of the geomeans and the gate "
            "(the same command runs it again)"
            if c.model in table.measured and not c.comparable
            else ""
        )
        earlier = table.shown_from.get(c.model)
        shown = (f"; the figures shown are {earlier}'s, an earlier attempt that measured more columns"
                 if earlier else "")
        out.append(f"{c.model}: {ended}{where}{tries} ({c.run_dir or 'no run directory'}){left_out}{shown}")
    return out


def job_time(cell: Cell) -> str | None:
    """A cell's job time as the notes and the progress lines say it (None: none known): the
    sweep's own timing of its job (``146.52 s``), or, for a cell found finished on disk, what
    that attempt recorded, to the second (``144 s, found finished on disk (...)``): its compare's
    start and end in its compare.json, else (written before it recorded its end) its files' times."""
    if not cell.found_on_disk:
        return seconds(cell.seconds) if cell.seconds is not None else None
    took = f"{cell.seconds:.0f} s, " if cell.seconds is not None else ""
    return f"{took}{FOUND_ON_DISK} ({SPAN_RECORDED if cell.end_recorded else SPAN_BY_FILES})"


FOUND_ON_DISK = "found finished on disk"
SPAN_RECORDED = "its compare's start and end in its compare.json"
SPAN_BY_FILES = "its compare's start to its last file"  # a result written before its end was recorded


def speedup_chart(table: SweepTable) -> Chart | None:
    n = len(table.rows)
    bars = [
        Bar(mode, [Segment(g, mode, text=geomean_text(table, mode))],  # on hover as the table reads
            note=f"{geomean_text(table, mode)} over {table.reference} ({k} of {models(n)})")
        for mode, (g, k) in table.geomeans.items()
        if g is not None
    ]
    if not bars:
        return None
    return Chart(
        f"Geomean speedup over {table.reference}, per mode", "x", bars, note="1.00x: as fast as the reference"
    )


def render_sweep(table: SweepTable, fmt_name: str = TEXT) -> str:
    """The report in text or markdown (HTML: ``sweep_html.render_sweep_html``); ``json`` is
    the table's record."""
    if fmt_name == "json":
        return json.dumps(table.to_dict(), indent=1) + "\n"
    doc = new_doc(fmt_name)
    fill(doc, table)
    return doc.render()


def fill(doc: Doc, table: SweepTable, heatmap: str | None = None) -> None:
    """The report's blocks, in order; ``heatmap``: a block of the format's own, after the verdicts."""
    if table.gate is not None:
        doc.paragraph(gate_line(table.gate, doc))
    doc.paragraph(doc.strong(geomean_line(table)), progress_line(table.sweep))
    doc.paragraph(doc.byline("inductor-bench sweep", _what(table)))
    if heatmap is not None:
        doc.blocks.append(heatmap)
    rows = [row(f, table.reference) for r in table.rows.values() for f in r.values()]
    doc.table(rows, HEADERS, optional=OPTIONAL)
    if table.geomeans:
        doc.table(geomean_rows(table), ["mode", f"geomean speedup over {table.reference}", "models"])
    doc.chart(speedup_chart(table))
    doc.fine_print(*notes(table))
    doc.links("Each model's compare", [_link(c.model, c.run_dir, table.shown_from.get(c.model))
                                       for c in table.sweep.cells if c.run_dir])


def _link(model: str, run_dir: str, shown_from: str | None) -> tuple[str, str]:
    """The compare page whose figures the table shows: an earlier attempt's where they are its
    (``shown_from``), named, else the last attempt's."""
    if shown_from is None:
        return f"{model}: compare report", f"{run_dir}/index.html"
    return f"{model}: compare report of {shown_from}, whose figures are shown", f"{shown_from}/index.html"
