"""A ``CompareResult`` as a document: a verdict line, then one table whose columns are the
modes and whose rows are compile time, step time, speedups, memory, kernels, busy % and the
share of kernel time per category. Returns strings."""

from __future__ import annotations

from ..core import compile_phases, compiles
from ..core.categories import label
from ..core.categories import order as category_order
from ..core.compare import (
    DEFAULT,
    EAGER,
    NOT_RUN_INTERRUPTED,
    CompareResult,
    ModeResult,
    column_disturbances,
    column_marks,
    few_steady,
    judge,
    outside_load,
    quiet_moments,
    timed,
    timing_failure,
    too_disturbed,
    unpaired,
)
from ..core.compare_summary import graphs_unmeasured
from ..core.compare_threads import threads_lost
from ..core.devices import AUTO, backend
from ..core.stats import MIN_SAMPLES
from ..core.step import disturbances, oversubscribed, pipelined_busy_pct, replayed_count
from ..core.vocab import Status, Stop
from . import charts_compare as charts
from .compare_verdict import first_model, gate_line, model_verdicts, same_model, verdict_line
from .doc import TEXT, new_doc
from .execution import breaks_line
from .format import (
    SPREAD,
    STOPPED_WORDS,
    interval_x,
    mib,
    ms_precise,
    optional,
    rounds_run,
    seconds,
    speedup_x,
    spread,
)
from .roofline_step import roofline_rows, step_marks_note, step_roofs


def _speedup_cell(result: CompareResult, mode: ModeResult, ref: ModeResult | None) -> str:
    if ref is mode:
        return "1.00x" if mode.ok else "-"
    if not (timed(ref) and timed(mode)):
        return "-"
    if why := too_disturbed(result, ref, mode):
        return f"n/m ({why})"
    if gap := graphs_unmeasured(result, ref, mode):
        return f"not comparable: {gap}"
    ch = judge(result, ref, mode)
    if ch.speedup is None:
        return "-"
    ci = interval_x(ch.speedup_ci, ch.min_rel) if min(ch.base.n, ch.head.n) >= MIN_SAMPLES else ""
    if ci and (few := few_steady(result, ref, mode)):
        ci = f"[{few}]"
    return f"{speedup_x(ch)} {ci} ({ch.verdict})".replace("  ", " ")


def _step_cell(result: CompareResult, m: ModeResult) -> str:
    """A timed column's step time; "-" for one that did not run whole (failed, timed out,
    interrupted): its compile worker's calls, another process's speed, are no figure beside
    the others', as its samples, speedups, chart bar and JSON ``step_ms`` are none."""
    if not timed(m) or not result.step_samples(m):
        return "-"
    s = result.step(m)
    return f"{ms_precise(s.ms)} {spread(s.spread_pct)}".strip() + (" (!)" if quiet_moments(result, m) else "")


def _samples_cell(result: CompareResult, m: ModeResult) -> str:
    """How many of the column's timed calls its step time is the mean of: ``kept/timed``."""
    samples = result.step_samples(m)
    return f"{result.step(m).n}/{len(samples)}" if samples else "0"


def _categories(result: CompareResult) -> list[str]:
    cats = {c for m in result.modes if m.breakdown for c in m.breakdown.totals().categories}
    return sorted(cats, key=lambda c: (category_order(c), c))


def _share(m: ModeResult, cat: str) -> str:
    if not m.breakdown:
        return "-"
    t = m.breakdown.totals()
    return f"{100 * t.categories.get(cat, 0.0) / t.kernel_ms:.1f}%" if t.kernel_ms > 0 else "-"


def _memory_label(result: CompareResult) -> str:
    kinds = {m.peak_memory_kind for m in result.modes if m.peak_memory_kind}
    return f"peak memory ({', '.join(sorted(kinds))})" if kinds else "peak memory"


def _rows(result: CompareResult) -> list[list[str]]:
    ms = result.modes
    rows = [
        ["status"] + [m.status for m in ms],
        ["compile (first call)"] + [seconds(m.compile_s) if m.ok or m.compile_s else "-" for m in ms],
        *_compile_phase_rows(ms),
        ["step time, ms (steady mean ± spread)"] + [_step_cell(result, m) for m in ms],
        ["steady samples"] + [_samples_cell(result, m) if m.ok else "-" for m in ms],
    ]
    for over in (EAGER, DEFAULT):
        refs = [same_model(result, m, over) for m in ms]
        if any(r is not None and r is not m for r, m in zip(refs, ms, strict=True)):
            cells = [_speedup_cell(result, m, r) for m, r in zip(ms, refs, strict=True)]
            rows.append([f"speedup vs {over}", *cells])
    if len(result.models) > 1:
        cells = [_speedup_cell(result, m, first_model(result, m)) for m in ms]
        rows.append([f"speedup vs {result.models[0]}", *cells])
    rows.append([_memory_label(result)] + [mib(m.peak_memory_bytes) for m in ms])
    rows.append(["kernels"] + [optional(m.kernel_count()) for m in ms])
    rows.append(["busy %"] + [_busy(m) for m in ms])
    bds = [m.breakdown for m in ms]
    pipe = [pipelined_busy_pct(b) if b else None for b in bds]
    if any(p is not None for p in pipe):
        rows.append(["busy % (pipelined)"] + [f"{p:.1f}%" if p is not None else "-" for p in pipe])
    replays = [replayed_count(b) if b else None for b in bds]
    if any(replays):
        rows.append(["CUDA graphs (replayed)"] + [f"{x[0]}/{x[1]}" if x else "-" for x in replays])
    if any(m.split() is not None for m in ms):
        rows.append(["outside graphs, ms"] + [_outside(m) for m in ms])
    rows.append(["graphs"] + [optional(m.breakdown.totals().graphs if m.breakdown else None) for m in ms])
    if any(b is not None and b.graph_breaks for b in bds):
        rows.append(["graph breaks"] + [optional(len(b.graph_breaks) if b else None) for b in bds])
    rows += roofline_rows(bds)
    for cat in _categories(result):
        rows.append([f"% {label(cat)}"] + [_share(m, cat) for m in ms])
    return rows


def _compile_phase_rows(ms: list[ModeResult]) -> list[list[str]]:
    """A row per compile phase that took a tenth of some column's compile (torch's own timers,
    ``core/compile_phases.py``)."""
    each = [compile_phases.of_compiles(m.breakdown.compiles) if m.breakdown else {} for m in ms]
    shown = [p for p in compile_phases.SHORT
             if any(ph.get(p, 0.0) >= 0.1 * sum(ph.values()) > 0 for ph in each)]
    return [[f"  compile: {compile_phases.SHORT[p]}",
             *(seconds(ph.get(p, 0.0)) if ph else "-" for ph in each)] for p in shown]


def _outside(m: ModeResult) -> str:
    if (ms := m.outside_ms()) is not None:
        return f"{ms:.3f}" + (" (!)" if outside_load(m) is not None else "")  # the notes' warning says why
    return "n/m" if m.split() is not None else "-"


def _busy(m: ModeResult) -> str:
    return f"{m.breakdown.totals().busy_pct:.1f}%" if m.breakdown else "-"


# ---- documents ------------------------------------------------------------------------------


def _title(result: CompareResult) -> str:
    step = "train step (forward + backward)" if result.train else "inference"
    dtype = result.dtype + (" autocast" if result.autocast else "")
    frozen = ", freezing" if result.freezing else ""
    batch = f", batch {result.batch_size}" if result.batch_size else ""
    return f"{result.model}: {step}, {dtype}{frozen}{batch}, on {_device_words(result)}"


def _device_words(result: CompareResult) -> str:
    """The device's name; asked ``--device auto`` where no worker got as far as choosing one
    (each stopped before: past --timeout, or failed), the parent, torch-free, cannot."""
    if result.device == AUTO and not result.device_name:
        return "--device auto: no worker got as far as choosing the device"
    return result.device_name or result.device


def _heading(result: CompareResult) -> str:
    """The page's heading: the model and the columns that ran, or the model files and the
    modes that ran; the columns that did not, by their status (why: in the notes)."""
    ran = [m for m in result.modes if m.ok]
    rest = ", ".join(f"{m.label} {m.status}" for m in result.modes if not m.ok)
    rest = f" ({rest})" if rest else ""
    if len(result.models) > 1:
        modes = ", ".join(dict.fromkeys(m.mode for m in ran)) or "nothing ran"
        return f"inductor-bench compare: {' vs '.join(result.models)}: {modes}{rest}"
    columns = " vs ".join(m.label for m in ran) or "nothing ran"
    return f"inductor-bench compare: {result.model}: {columns}{rest}"


def _rounds_words(result: CompareResult, rounds: int) -> str:
    """Which rounds' ratios a speedup is the median of, and why a column sat out the rest."""
    every = result.rounds_with_every_column()
    if every in (0, rounds):
        return "the rounds' ratios"
    stopped = (result.interleaved or {}).get("stopped") or {}
    early = [(m.label, rounds_run(m.paired_ms), stopped.get(m.label)) for m in result.modes
             if m.paired_ms and rounds_run(m.paired_ms) < rounds]
    why = "; ".join(f"{label} stopped after {n}{STOPPED_WORDS.get(reason, '')}"
                    for label, n, reason in early)
    return (f"the ratios of the rounds every column ran in ({every} of the "
            f"{rounds}" + (f": {why}, and sat out the rest" if why else "") + "), and each column's "
            "step time and samples come from those rounds too (compare.json keeps all its rounds)")


def _budget_words(result: CompareResult) -> str:
    """Each column's calls timed and what ended them: its time budget or its call limit."""
    stopped = (result.interleaved or {}).get("stopped") or {}
    ended = {Stop.CALL_LIMIT: "its call limit", Stop.TIME_BUDGET: "its time budget"}
    each = [f"{m.label} {sum(len(b) for b in m.paired_ms)} calls"
            + (f" ({ended[stopped[m.label]]})" if stopped.get(m.label) in ended else "")
            for m in result.modes if m.paired_ms]
    return (f"each column's steps were timed until {result.step_budget_s:g} s of them or its call limit, "
            f"whichever came first: {', '.join(each)}")


def _same_code_words(labels: list[str]) -> str:
    both = "both" if len(labels) == 2 else f"all {len(labels)}"
    return (f"{', '.join(labels[:-1])} and {labels[-1]} compiled the same code for every graph: the "
            f"kernels are the same, so where their rows from the breakdowns (busy %, % of peak, the % "
            f"rows) differ, the processes that profiled them differ, not the modes; the step row, "
            f"{both} timed in one process, compares them")


# Where the rows below the step's come from: a run of their own, apart from the step timing and
# from any other ``breakdown`` of the model (which profiles its own, and on a busy machine reads
# other kernel times and so another % of peak: 60.2% beside a column's 67.1% for one GPT-2).
PROFILED_ROWS = ("kernels, busy %, % of peak and the % rows (share of kernel time per category): from "
                 "each column's own breakdown, its graphs profiled after the compile in processes of their "
                 "own (its directory's report.txt gives them kernel by kernel), not from the steps timed "
                 "above nor from another breakdown run")


def beyond_floor_words(min_rel: float) -> str:
    """The significance floor as ``stats.beyond`` applies it to a speedup, both ways and strict:
    ``above 1.10x or below 1/1.1 = 0.909x`` (a 9.1% slowdown is beyond it; "at least 10%" read
    as if it were not, and as if 1.10x itself were)."""
    up = 1 + min_rel
    return f"above {up:.2f}x or below 1/{up:g} = {1 / up:.3f}x"


def _notes(result: CompareResult) -> list[str]:
    notes = [f"{m.label}: {m.status}: {m.reason}" for m in result.modes if m.reason]
    floor = beyond_floor_words(backend(result.device).min_rel_change)
    rounds = (result.interleaved or {}).get("rounds")
    if rounds:
        load = result.interleaved_load()
        notes.append(
            f"step time: every column timed in one process after compiling, their calls interleaved "
            f"in {rounds} rounds of blocks (the order reversed every other round), so that the "
            "machine's drift falls on all alike; a speedup is the median of "
            f"{_rounds_words(result, rounds)} with "
            f"its 95% interval, significant when the interval excludes 1.00x and the speedup is "
            f"{floor}"
            + (f"; warning: timed while {load.describe()}" if load is not None and load.disturbed else "")
        )
    notes += [_same_code_words(g) for g in result.same_code]
    notes += [
        PROFILED_ROWS,
        (
            "step time = the real model call, first call excluded: the mean over the steady calls "
            "(calls far slower than the median left out as disturbed: docs/statistics.md); spread "
            f"= {SPREAD} in % of the time"
            + (
                ""
                if rounds
                else f"; speedups show their 95% interval [low-high] and are significant when "
                f"{floor} and the two times' 97.5% intervals do not overlap, else within noise"
            )
        ),
    ]
    caches = {m.breakdown.compile_cache.shared for m in result.modes
              if m.breakdown is not None and m.breakdown.compile_cache is not None}
    if caches == {False}:
        notes.append("compile times are cold compiles: each mode compiled in a fresh cache")
    elif caches:
        notes.append("compile times may come from inductor-bench's warm cache (--warm-cache): "
                     "not cold compiles")
    if result.step_budget_s and rounds:
        notes.append(_budget_words(result))
    alone = [f"{m.label} ({len(m.step_samples_ms)} calls)" for m in unpaired(result)]
    if alone:
        why = f" (the interleaved timing failed: {failed})" if (failed := timing_failure(result)) else ""
        notes.append(f"steps timed in each column's compile worker, not interleaved{why}: {', '.join(alone)}")
    notes += [f"warning: {line}" for line in column_disturbances(result) + column_marks(result)]
    for m in result.modes:
        for line in disturbances(m.breakdown) if m.breakdown else []:
            notes.append(f"warning: {m.label}: {line}")
    # the threads and the cores are the machine's, not a column's: the first column's hint, once
    hint = next((f"hint: {m.label}: {h}" for m in result.modes
                 if m.breakdown and (h := oversubscribed(m.breakdown))), None)
    if hint:
        notes.append(hint)
    if lost := threads_lost(result):
        notes.append(f"hint: {lost.line()}")
    notes += _break_notes(result)
    if marked := step_marks_note(step_roofs([m.breakdown for m in result.modes])):
        notes.append(marked)
    splits = [s for s in (m.split() for m in result.modes) if s]
    if splits:
        how = ("its graphs' own calls, timed in turns with it in the process that timed the step"
               if all(s.rounds for s in splits) else "the sum of its graphs' times")
        notes.append(f"outside graphs = the share of a step not in {how} (guards, the AOT wrapper, eager "
                     "code between graphs), times the step time above; n/m: the graphs' own harnesses took "
                     "longer, or a stall met the step's or the graphs' turns alone")
    return notes


def _break_notes(result: CompareResult) -> list[str]:
    """Each distinct set of graph breaks once, and each recompile limit hit, with the columns
    that met it."""
    seen: dict[str, list[str]] = {}
    for m in result.modes:
        if m.breakdown is not None and m.breakdown.graph_breaks:
            seen.setdefault(breaks_line(m.breakdown), []).append(m.label)
        for line in compiles.limit_lines(m.breakdown) if m.breakdown is not None else []:
            seen.setdefault(line, []).append(m.label)
    return [f"{', '.join(cols)}: {line}" for line, cols in seen.items()]


def _interrupted_lines(result: CompareResult) -> list[str]:
    """What an interrupted compare lacks: the columns it did not finish, and the interleaved
    timing when it stopped before it."""
    lines = []
    stopped = [m for m in result.modes if m.status == Status.INTERRUPTED]
    cut = [m.label for m in stopped if m.reason in (None, NOT_RUN_INTERRUPTED)]
    if cut:
        lines.append(f"- not run: {', '.join(cut)}")
    # a column stopped as it was profiled says so (its compile and what it profiled are saved)
    lines += [f"- {m.label}: {m.reason}" for m in stopped if m.reason not in (None, NOT_RUN_INTERRUPTED)]
    alone = [m.label for m in unpaired(result)]
    if alone:
        lines.append(f"- not timed interleaved: {', '.join(alone)}: their step times and speedups come "
                     "from each column's own compile worker, separate processes (unpaired)")
    return lines


def render_compare(result: CompareResult, fmt_name: str = TEXT, threshold_pct: float | None = None) -> str:
    """The document; with ``threshold_pct`` (several model files), the gate's verdict first,
    then an interrupted run's status."""
    doc = new_doc(fmt_name)
    doc.headline(_heading(result))
    if threshold_pct is not None and len(result.models) > 1:
        doc.paragraph(gate_line(result, threshold_pct, doc))
    if Status.INTERRUPTED in result.errors:
        doc.paragraph(doc.alert(f"Status: {Status.INTERRUPTED}"), *_interrupted_lines(result))
    doc.paragraph(verdict_line(result, doc))
    models = model_verdicts(result)
    if models:
        doc.paragraph(*models)
    doc.paragraph(doc.byline("inductor-bench compare", _title(result)))
    if any(m.ok or m.breakdown is not None for m in result.modes):  # nothing measured: the notes say it all
        doc.table(_rows(result), [""] + [m.label for m in result.modes])
        for chart in (charts.compare_step, charts.compare_compile, charts.compare_categories):
            doc.chart(chart(result))
    doc.fine_print(*_notes(result))
    doc.links("Each mode's breakdown", charts.mode_pages(result))
    return doc.render()
