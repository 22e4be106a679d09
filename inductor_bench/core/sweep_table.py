"""A sweep's table: models by modes, each cell's figures from its compare result, the
geometric-mean speedup per mode, and the gate against a baseline sweep (pure; no torch).

Speedup is over compare's eager column (the model run uncompiled in the same process, its
calls interleaved with the modes'), with compare's own rule (``core.compare.judge``): its
interval and verdict are compare's. A sweep run with ``--no-eager`` has no eager column: its
speedups are over the first mode listed instead, and the table says so.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from .arg_changes import arg_changes
from .comparable import comparability
from .compare import EAGER, CompareResult, ModeResult, judge, step_disturbances, timed
from .compare_summary import OWN_BLOCKS, ROUNDS_DISTURBED, few_steady, quiet_moments, too_disturbed
from .compare_threads import threads_lost
from .diff import diff_results
from .errors import UsageError
from .other_workload import workload_line
from .stats import MIN_SAMPLES, TOO_FEW
from .step import disturbances, oversubscribed
from .sweep import TABLE_SCHEMA, Sweep
from .unmeasured import BASE, HEAD
from .vocab import Status, StepSource

# The table a sweep prints (``--format json``, ``--json PATH``): its cells, geomeans and gate,
# with the sweep it was made from (``inductor-bench/sweep``) under ``sweep``.
TABLE_SCHEMA_VERSION = 1


@dataclass
class Figures:
    """One model in one mode."""

    model: str
    mode: str
    status: str  # the mode's status in the compare ("ok", "failed", ...), or the cell's when it has none
    reason: str | None = None
    step_ms: float | None = None
    speedup: float | None = None  # over the reference mode (eager), reference / this
    speedup_ci: tuple[float, float] | None = None
    # the interleaved rounds the speedup is the median of the ratios of (None: the two columns
    # were not timed in rounds, and the speedup is the ratio of their step times)
    speedup_rounds: int | None = None
    verdict: str | None = None  # compare's verdict on the speedup
    # why no speedup is given though both columns were timed: most of the interleaved rounds
    # it would be the median of were disturbed (``7 of 10 rounds disturbed``); out of the geomean
    no_speedup: str | None = None
    # why the speedup has no interval: enough of its rounds were disturbed to set the interval's
    # bounds (``compare_summary.few_steady``: "too few steady rounds for an interval")
    no_interval: str | None = None
    # the minimum relative change that verdict was judged by (the device's floor): the speedup
    # prints at the decimals compare gives it beside 1 + min_rel and its inverse
    min_rel: float | None = None
    busy_pct: float | None = None
    top_category: str | None = None  # the category with the most kernel time
    top_share_pct: float | None = None  # its share of kernel time
    compile_s: float | None = None
    graph_breaks: int | None = None  # distinct breaks Dynamo met compiling it (core/graph_breaks.py)
    # what disturbed its breakdown's profile (core/step.py: a graph measured on a busy machine,
    # its threads oversubscribed): busy % and the top category may then be off
    disturbed: list[str] = field(default_factory=list)


@dataclass
class Regression:
    model: str
    mode: str
    rel_pct: float  # step-time change against the baseline, percent
    ratio_ci: tuple[float, float] | None
    min_rel: float | None = None  # the significance floor: both print at the decimals diff gives them
    # the row the change is of (``diff``'s step time row): its two figures, ms, and where they come from
    base_ms: float = 0.0
    head_ms: float = 0.0
    step_source: str = StepSource.MODEL


@dataclass
class OtherWorkload:
    """A model the baseline sweep ran as another workload (``batch size 64 -> 128``): each
    mode's step time on both sides (mode, baseline ms, this sweep's ms), none judged."""

    model: str
    changes: list[str]
    steps: list[tuple[str, float, float]] = field(default_factory=list)

    def describe(self) -> str:
        return f"{self.model}: {workload_line(self.changes)}"


@dataclass
class Gate:
    """``--baseline OLD --fail-on-regression PCT``: every model and mode against the old sweep."""

    threshold_pct: float | None  # None: --baseline alone, a report judged at 0%, no gate
    regressions: list[Regression] = field(default_factory=list)
    unmeasured: list[str] = field(default_factory=list)  # what could not be judged, and why
    judged: int = 0  # model-mode pairs judged
    judged_eager: int = 0  # of them, eager columns (the sweep's modes do not count them)
    # the workload options the baseline sweep was given otherwise (``--batch-size 128 there, not
    # here``); a model whose results ran other work (their batch size, dtype, autocast) is in
    # ``other_workload``, not judged
    settings: list[str] = field(default_factory=list)
    other_workload: list[OtherWorkload] = field(default_factory=list)
    # model -> the warnings ``diff`` gives for its two compares, in diff's words ("base": the
    # baseline's, "head": this sweep's): torch settings, caches, freezing, sizes that differ...
    warnings: dict[str, list[str]] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not self.regressions and not self.unmeasured and not self.other_workload


@dataclass
class SweepTable:
    sweep: Sweep
    reference: str  # the mode speedups are over
    modes: list[str]  # the columns: the reference first
    rows: dict[str, dict[str, Figures]]  # model -> mode -> figures
    geomeans: dict[str, tuple[float | None, int]]  # mode -> (geomean speedup, models in it)
    # mode -> model -> why a model that ran to its end is out of the mode's geomean (no_speedup)
    geomean_left_out: dict[str, dict[str, str]] = field(default_factory=dict)
    gate: Gate | None = None
    # model -> what disturbed the timing of its steps (compare's warnings: a busy machine)
    step_disturbed: dict[str, list[str]] = field(default_factory=dict)
    # model -> compare's hint: speedups lost to disturbed rounds on more threads than the free cores
    threads_hints: dict[str, str] = field(default_factory=dict)
    measured: list[str] = field(default_factory=list)  # the models of which a column was measured
    # model -> the earlier attempt whose figures are shown (a cell whose last job did not run to
    # its end, where that attempt measured more columns than the last one)
    shown_from: dict[str, str] = field(default_factory=dict)

    def min_rel(self, mode: str) -> float | None:
        """The floor the mode's speedups were judged by (the device's: one per sweep), for its
        geomean to print as its cells do; None where none was judged."""
        return next((r[mode].min_rel for r in self.rows.values() if r[mode].min_rel is not None), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": TABLE_SCHEMA,
            "schema_version": TABLE_SCHEMA_VERSION,
            "sweep": self.sweep.to_dict(),
            "reference": self.reference,
            "cells": [asdict(f) for row in self.rows.values() for f in row.values()],
            "geomean_speedup": {m: {"geomean": g, "models": n, "left_out": self.geomean_left_out.get(m, {})}
                                for m, (g, n) in self.geomeans.items()},
            "gate": asdict(self.gate) if self.gate is not None else None,
            "step_disturbed": self.step_disturbed,
            "threads_hints": self.threads_hints,
            "shown_from": self.shown_from,
        }


def reference_mode(sweep: Sweep) -> str:
    """Eager, unless the sweep left it out (``--no-eager``): then the first mode."""
    return sweep.modes[0] if "--no-eager" in sweep.compare_args else EAGER


def mode_figures(result: CompareResult, model: str, mode: str, ref: str) -> Figures:
    m = result.mode(mode)
    if m is None:
        return Figures(model=model, mode=mode, status="not run", reason="not in the compare result")
    f = Figures(model=model, mode=mode, status=m.status, reason=m.reason, compile_s=m.compile_s)
    if timed(m):
        f.step_ms = result.step(m).ms
    _speedup(f, result, result.mode(ref), m)
    if m.breakdown is not None:
        t = m.breakdown.totals()
        f.busy_pct, f.graph_breaks = t.busy_pct, len(m.breakdown.graph_breaks)
        f.disturbed = disturbances(m.breakdown) + [h for h in [oversubscribed(m.breakdown)] if h]
        if t.categories and t.kernel_ms > 0:
            top = max(t.categories, key=lambda c: t.categories[c])
            f.top_category, f.top_share_pct = top, 100.0 * t.categories[top] / t.kernel_ms
    return f


def _speedup(f: Figures, result: CompareResult, ref: ModeResult | None, m: ModeResult) -> None:
    if ref is m:
        f.speedup = 1.0 if timed(m) else None
        return
    if not (timed(ref) and timed(m)):
        return
    ch = judge(result, ref, m)
    f.speedup_rounds = ch.paired.rounds if ch.paired is not None else None
    f.min_rel = ch.min_rel
    f.no_speedup = too_disturbed(result, ref, m)
    if f.no_speedup is not None:  # the median of mostly disturbed rounds is no figure
        return
    f.speedup, f.verdict = ch.speedup, ch.verdict
    if ch.verdict != TOO_FEW and min(ch.base.n, ch.head.n) >= MIN_SAMPLES:
        f.no_interval = few_steady(result, ref, m)
        f.speedup_ci = ch.speedup_ci if f.no_interval is None else None


def geomean(values: list[float]) -> float | None:
    """The geometric mean of positive values; None for none."""
    xs = [v for v in values if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in xs) / len(xs)) if xs else None


def build_table(
    sweep: Sweep, results: dict[str, CompareResult | None], shown_from: dict[str, str] | None = None
) -> SweepTable:
    """The table of ``sweep``; ``results``: each cell's loaded compare result (None where it
    has none); ``shown_from``: the cells whose result is an earlier attempt's, its run directory."""
    ref = reference_mode(sweep)
    modes = ([EAGER] if ref == EAGER else []) + [m for m in sweep.modes if m != EAGER]
    rows: dict[str, dict[str, Figures]] = {}
    for cell in sweep.cells:
        r = results.get(cell.model)
        if r is None:
            why = cell.reason or ("not run yet" if cell.status == "pending" else cell.status)
            rows[cell.model] = {m: Figures(cell.model, m, status=cell.status, reason=why) for m in modes}
        else:
            rows[cell.model] = {m: mode_figures(r, cell.model, m, ref) for m in modes}
            if not cell.comparable:
                for f in rows[cell.model].values():
                    _left_out(f, cell.status, reference=f.mode == ref)
    geo = {m: _geomean_of(rows, m) for m in modes if m != ref}
    left = {m: {model: f.no_speedup for model, r in rows.items()
                if (f := r[m]).status == Status.OK and f.no_speedup} for m in geo}
    load = {model: lines for model, r in results.items() if r is not None and (lines := step_disturbances(r))}
    hints = {model: lost.line() for model, r in results.items() if r and (lost := threads_lost(r))}
    measured = [c.model for c in sweep.cells if any(m.ok for m in getattr(results.get(c.model), "modes", []))]
    return SweepTable(
        sweep=sweep, reference=ref, modes=modes, rows=rows, geomeans=geo, step_disturbed=load,
        threads_hints=hints, geomean_left_out={m: d for m, d in left.items() if d},
        measured=measured, shown_from=dict(shown_from or {}),
    )


# the reason of a mode measured by a job that did not run to its end
LEFT_OUT = "left out of the geomean"


def _left_out(f: Figures, status: str, *, reference: bool) -> None:
    """A mode measured by a job that then did not end by itself (stopped, timed out, killed):
    its figures stay, marked with the cell's status, out of the geomean (where the reference,
    never in it, is marked alone, and has no speedup: its 1.0 is no figure where nothing ran to
    its end beside it; the status says why). A column the compare left ``interrupted`` as the
    sweep stopped its job past ``--job-timeout`` takes the cell's word too: the rows of one cell
    say one thing."""
    if reference:
        f.speedup = None
    if f.status == Status.OK:
        f.status, f.reason = status, None if reference else LEFT_OUT
    elif f.status == Status.INTERRUPTED:
        f.status = status


Results = dict[str, CompareResult | None]


def comparable_results(sweep: Sweep, results: Results) -> Results:
    """``results`` with None for each cell whose job did not run to its end (``Cell.comparable``):
    what the gate judges."""
    return {c.model: results.get(c.model) if c.comparable else None for c in sweep.cells}


def _geomean_of(rows: dict[str, dict[str, Figures]], mode: str) -> tuple[float | None, int]:
    """Over the models where the mode was timed by a job that ran to its end."""
    figs = [r[mode] for r in rows.values()]
    values = [f.speedup for f in figs if f.status == Status.OK and f.speedup is not None]
    return geomean(values), len(values)


# the compare options that change the workload timed (the others change how it is timed)
WORKLOAD_OPTIONS = ("--train", "--dtype", "--autocast", "--batch-size", "--freezing")


def workload_changes(old: Sweep, new: Sweep) -> list[str]:
    """The workload options the baseline sweep ``old`` ran with otherwise than ``new``."""
    changes = arg_changes(old.compare_args, new.compare_args)
    return [c.words() for c in changes if c.option in WORKLOAD_OPTIONS]


def gate(
    old: dict[str, CompareResult | None],
    new: dict[str, CompareResult | None],
    threshold_pct: float | None,
    unread: tuple[dict[str, str], dict[str, str]] = ({}, {}),
) -> Gate:
    """Every model of the new sweep against the same model in the old one, mode by mode, by
    ``diff``'s rule for two compare results (each mode's steps judged against noise with the
    device's floor): a significant slowdown above ``threshold_pct`` is a regression; a model or
    a mode measured on one side only cannot be judged, and is listed, as is a model whose
    baseline ran another workload (its step times kept side by side). ``threshold_pct`` None
    (``--baseline`` alone): every significant slowdown is listed, and there is no gate.
    ``unread``: why a model's result could not be read, in the old sweep and the new one."""
    g = Gate(threshold_pct=threshold_pct)
    for model, head in new.items():
        base = old.get(model)
        if base is None or head is None:
            side, why = ("the baseline", unread[0]) if base is None else ("this sweep", unread[1])
            cause = f": {why[model]}" if model in why else ""
            g.unmeasured.append(f"{model}: no result in {side}{cause}")
            continue
        problems, _ = comparability(base, head)
        if problems:  # as diff refuses them, without its --allow-mismatch: the sweep has none
            g.unmeasured.append(f"{model}: not comparable: {'; '.join(problems)}")
            continue
        try:
            d = diff_results(base, head)
        except UsageError as e:
            g.unmeasured.append(f"{model}: {e}")
            continue
        if d.warnings:
            g.warnings[model] = d.warnings
        if d.other_workload:  # as diff: the figures side by side, no verdict
            g.other_workload.append(OtherWorkload(model, d.other_workload, [
                (s.mode, s.step.base.ms, s.step.head.ms) for s in d.sections]))
        else:
            shaken = {s.mode: why for s in d.sections if (why := _mostly_disturbed(base, head, s.mode))}
            g.unmeasured += [f"{model}:{mode}: not comparable: {why}" for mode, why in shaken.items()]
            d.sections = [s for s in d.sections if s.mode not in shaken]  # no step time to judge
            judged = [s for s in d.sections if not s.unmeasured]  # named below, no verdict
            g.judged += len(judged)
            g.judged_eager += sum(s.mode == EAGER for s in judged)
        g.unmeasured += [f"{model}:{replace(u, side=_SWEEP_SIDES.get(u.side, u.side)).describe()}"
                         for u in d.unmeasured]
        for s in d.regressions(threshold_pct or 0.0):
            g.regressions.append(
                Regression(model=model, mode=s.mode, rel_pct=s.step.rel_pct or 0.0, ratio_ci=s.step.ratio_ci,
                           min_rel=s.step.min_rel, base_ms=s.step.base.ms, head_ms=s.step.head.ms,
                           step_source=s.step_source)
            )
    return g


# diff's sides as the gate's other reasons name them (``mlp:default: ... in this sweep``)
_SWEEP_SIDES = {BASE: "the baseline", HEAD: "this sweep"}


def _mostly_disturbed(base: CompareResult, head: CompareResult, label: str) -> str | None:
    """Why a column's step time is no figure to judge: most of its own interleaved blocks were
    disturbed on either side (``compare_summary.quiet_moments``, as ``diff`` words it, and whose
    blocks, as compare's column marks say: ``7 of 10 rounds disturbed in this sweep (its own
    blocks above its steady limit)``, not the table's count of rounds with either column's block
    disturbed); None where most were steady on both."""
    quiet = [(why, side) for result, side in ((base, "the baseline"), (head, "this sweep"))
             if (m := result.mode(label)) is not None and (why := quiet_moments(result, m))]
    if not quiet:
        return None
    (first, side), *rest = quiet
    return f"{first} in {side}" + "".join(f", {why.removesuffix(ROUNDS_DISTURBED)} in {later}"
                                          for why, later in rest) + OWN_BLOCKS
