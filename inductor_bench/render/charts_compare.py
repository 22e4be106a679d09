"""The charts of ``compare`` (the modes side by side), ``diff`` (base against head, what changed
and whether it stands out of the noise) and ``kernel`` (modes, and every config)."""

from __future__ import annotations

import posixpath

from ..core.autotune import config_label
from ..core.categories import label
from ..core.compare import CompareResult, quiet_moments, timed
from ..core.diff import ADDED, REMOVED, KernelDiff, SectionDiff
from ..core.kernel_report import KernelReport, Timing
from ..core.rundir import HTML_REPORT_FILE
from ..core.stats import SIGNIFICANT, Change, Summary
from . import format as fmt
from .chart_model import Bar, Chart, Segment, Series
from .charts import category_segments, graph_labels
from .diff_kernel_labels import kernel_change

SIGMA = f"± {fmt.SPREAD}"
PER_STEP = "ms per step"  # the diff charts' unit


def _sigma(s: Summary, scale: float = 1.0) -> tuple[float, float] | None:
    if s.n < 2:
        return None
    return (max(s.ms - s.sigma, 0.0) * scale, (s.ms + s.sigma) * scale)


# ---- compare --------------------------------------------------------------------------------


def compare_step(result: CompareResult) -> Chart | None:
    bars = []
    for m in result.modes:
        if not timed(m):
            continue
        s = result.step(m)
        bars.append(
            Bar(
                m.label,
                [Segment(s.ms, m.label)],
                # as the table's cell: (!) where it is the mean of its quiet calls alone
                note=f"{fmt.ms_precise(s.ms)} ms {fmt.spread(s.spread_pct)}".strip()
                + (" (!)" if quiet_moments(result, m) else ""),
                spread=_sigma(s),
                tip=f"{s.n} samples, min {fmt.ms_precise(s.min)}, max {fmt.ms_precise(s.max)} ms",
            )
        )
    if not bars:
        return None
    return Chart("Step time per mode (steady mean)", "ms per step", bars, whisker=SIGMA,
                 value_format=fmt.ms_precise, note=_not_drawn(result, bars))


def compare_compile(result: CompareResult) -> Chart | None:
    bars = [
        Bar(m.label, [Segment(m.compile_s, m.label)], note=fmt.seconds(m.compile_s))
        for m in result.modes
        if m.compile_s is not None and (m.ok or m.compile_s)  # as the table: a failed mode's when timed
    ]
    if not any(b.segments[0].value > 0 for b in bars):
        return None
    return Chart("Compile time per mode (the first call, timed on its own)", "seconds", bars,
                 note=_not_drawn(result, bars))


def _not_drawn(result: CompareResult, bars: list[Bar]) -> str:
    """The columns that did not run, which a chart of the modes leaves out, and why: the table
    beside it has them, the chart alone read as a comparison of fewer modes."""
    drawn = {b.label for b in bars}
    gone = [f"{m.label} ({m.status})" for m in result.modes if not m.ok and m.label not in drawn]
    return f"Not drawn: {', '.join(gone)}." if gone else ""


def compare_categories(result: CompareResult) -> Chart | None:
    bars = []
    for m in result.modes:
        if m.breakdown is None:
            continue
        t = m.breakdown.totals()
        bars.append(Bar(m.label, category_segments(t.categories), note=f"{fmt.ms(t.kernel_ms)} ms"))
    if not bars:
        return None
    unit = "ms per step (kernel time, from each mode's breakdown)"
    return Chart("Kernel time by category per mode", unit, bars)


def mode_pages(result: CompareResult) -> list[tuple[str, str]]:
    """Each mode's breakdown page, relative to the comparison's run directory."""
    out = []
    for m in result.modes:
        if m.breakdown is None or not m.run_dir:
            continue
        rel = posixpath.relpath(m.run_dir, result.run_dir) if result.run_dir else m.run_dir
        out.append((f"{m.label}: {rel}/{HTML_REPORT_FILE}", f"{rel}/{HTML_REPORT_FILE}"))
    return out


# ---- diff -----------------------------------------------------------------------------------


def diff_step(s: SectionDiff) -> Chart:
    ch = s.step
    bars = [
        Bar(
            side,
            [Segment(x.ms, side)],
            note=f"{fmt.ms_precise(x.ms)} ms",
            spread=_sigma(x),
            tip=f"{x.n} samples",
        )
        for side, x in ((Series.BASE, ch.base), (Series.HEAD, ch.head))
    ]
    return Chart(
        f"{fmt.step_figure(s.step_source).capitalize()}, {s.mode}: {fmt.change_pct(ch)}, {ch.verdict}",
        fmt.step_axis(s.step_source),
        bars,
        whisker=SIGMA,
        value_format=fmt.ms_precise,
    )


def diff_categories(s: SectionDiff) -> Chart | None:
    """Head - base per category; a change within noise is drawn pale. Each bar reads its change
    as the table's row does: in ms the difference of the two figures shown, in % ``change_pct``."""
    bars = [
        Bar(
            label(c.category),
            [Segment(c.change.delta_ms, c.category, label(c.category),
                     f"{fmt.ms_between(c.change.base.ms, c.change.head.ms)} {PER_STEP}")],
            note=f"{_rel(c.change)} · {c.change.verdict}",
            faint=c.change.verdict != SIGNIFICANT,
            tip=f"{fmt.ms_precise(c.change.base.ms)} -> {fmt.ms_precise(c.change.head.ms)} ms",
        )
        for c in s.categories
    ]
    if not any(b.segments[0].value for b in bars):  # nothing changed: nothing to draw
        return None
    return Chart(
        f"Change per category, {s.mode} (head - base)",
        PER_STEP,
        bars,
        note="pale: within noise, too few samples to judge, the same code on both sides, or another "
        "workload on each side (not judged); the table above has the numbers.",
        value_format=fmt.signed_ms,
    )


def _rel(ch: Change) -> str:
    """A change in %, as the tables print it (more decimals where one would put it across the
    floor); ``new`` from nothing."""
    return "new" if ch.rel_pct is None else fmt.change_pct(ch)


def _kernel_note(k: KernelDiff) -> str:
    if k.status in (ADDED, REMOVED) or k.change is None:
        return k.status
    return f"{_rel(k.change)} {k.status}" + (", shapes changed" if k.other_work else "")


def kernel_sides(k: KernelDiff) -> tuple[str, str]:
    """A kernel's base and head ms as the diff's table prints them: "-" for the side it is
    missing from (added: no base; removed: no head)."""
    return (fmt.ms_precise(k.base_ms) if k.status != ADDED else fmt.DASH,
            fmt.ms_precise(k.head_ms) if k.status != REMOVED else fmt.DASH)


def diff_kernels(s: SectionDiff, top: int) -> Chart | None:
    """The biggest per-kernel changes, coloured by what they are: significantly slower or
    faster, added, removed, or within noise."""
    ks = sorted((k for k in s.kernels if k.delta_ms), key=lambda k: -abs(k.delta_ms))[:top]
    if not ks:
        return None
    labels = graph_labels(fmt.kernel_labels([k.name for k in ks]), [k.graph for k in ks])
    bars = [
        Bar(
            name,
            [Segment(k.delta_ms, k.status, k.status, f"{kernel_change(k)} {PER_STEP}")],
            full=k.name,
            note=_kernel_note(k),
            tip=f"graph {k.graph} · {label(k.category)} · {' -> '.join(kernel_sides(k))} ms",
        )
        for k, name in zip(ks, labels, strict=True)
    ]
    return Chart(
        f"The {len(ks)} biggest kernel changes, {s.mode} (head - base)",
        PER_STEP,
        bars,
        note="right of zero: slower in head; grey: within noise, too few samples to judge, the same "
        "code on both sides, or another workload on each side (not judged).",
        value_format=fmt.signed_ms,
    )


# ---- kernel ---------------------------------------------------------------------------------


def _time_unit(values: list[float]) -> tuple[str, float]:
    return ("µs", 1e3) if max(values, default=0.0) < 1 else ("ms", 1.0)


def _as_duration(v: float) -> str:
    """A kernel chart's value (in its unit, µs or ms) with the 4 significant digits the kernel
    table prints it with (``fmt.duration``): ``20.00``, not ``20``."""
    return fmt.sig_digits(v, 4)


def kernel_runs(r: KernelReport) -> Chart | None:
    if not r.runs:
        return None
    unit, scale = _time_unit([run.timing.ms for run in r.runs])
    bars = [
        Bar(
            run.mode,
            [Segment(run.timing.ms * scale, run.mode)],
            note=fmt.duration(run.timing.ms),
            spread=_sigma(run.timing.summary, scale),
            tip=f"config {config_label(run.timing.config)}",
        )
        for run in r.runs
    ]
    return Chart("Kernel time per mode (steady mean)", unit, bars, whisker=SIGMA,
                 value_format=_as_duration)


def kernel_configs(r: KernelReport) -> Chart | None:
    if not r.all_configs:
        return None
    ran = r.run(r.all_configs_mode or "")
    chosen = config_label(ran.timing.config) if ran else None
    ts = sorted(r.all_configs, key=lambda t: t.ms)
    unit, scale = _time_unit([t.ms for t in ts])

    def series(t: Timing) -> tuple[str, str]:
        if t is ts[0]:
            return Series.FASTEST, "fastest"
        if config_label(t.config) == chosen:
            return Series.PICKED, "autotuner's pick"
        return Series.CONFIG, "other config"

    bars = []
    for t in ts:
        key, name = series(t)
        picked = " · autotuner's pick" if config_label(t.config) == chosen else ""
        bars.append(
            Bar(
                config_label(t.config),
                [Segment(t.ms * scale, key, name)],
                note=fmt.duration(t.ms) + picked,
                spread=_sigma(t.summary, scale),
            )
        )
    return Chart(f"Time per config ({r.all_configs_mode} space)", unit, bars, whisker=SIGMA,
                 value_format=_as_duration)
