"""`inductor-bench diff BASE HEAD`: what changed between two results, judged against noise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ..core.compare import CompareResult
from ..core.devices import BACKENDS
from ..core.diff import Diff, diff_results
from ..core.errors import BenchError, NotComparable, RegressionFound, ResultError, UsageError
from ..core.other_workload import workload_line
from ..core.rundir import BREAKDOWN_FILE, COMPARE_FILE, Result, load_any
from ..core.unmeasured import no_verdict_line
from ..render.diff import DEFAULT_TOP, render_diff
from ..render.diff_verdict import gated_phrase, work_changed
from ..runner.rundir import being_written
from . import options as o
from .exit_status import failure_first
from .output import emit
from .progress import note
from .report_compare import stale_columns_line
from .run_state import IN_PROGRESS, not_yet_saved

_FLOORS = ", ".join(f"{100 * b.min_rel_change:g} on {b.name.upper()}" for b in reversed(BACKENDS))

Base = Annotated[
    Path,
    typer.Argument(parser=o.a_path, metavar="BASE",
                   help="Base result: breakdown.json / compare.json or a run directory."),
]
Head = Annotated[Path, typer.Argument(parser=o.a_path, metavar="HEAD",
                                      help="Head result, of the same kind as BASE.")]
FailOnRegression = Annotated[float | None, o.fail_on_regression(
    "HEAD's time (a breakdown's all-graphs row, a compare's step time, against BASE's)",
    ", or BASE ran another workload (batch size, dtype, autocast)")]
MinChange = Annotated[
    float | None,
    typer.Option(
        "--min-change",
        metavar="PCT",
        min=0.0,
        help=(
            "Smallest change (percent of the base median) that can count as significant "
            f"[default: {_FLOORS}]."
        ),
    ),
]
AllowMismatch = Annotated[
    bool, typer.Option("--allow-mismatch", help="Diff results from different devices or step kinds anyway.")
]


def _load(path: Path, side: str) -> Result:
    where = _where(path)
    try:
        none_yet = not any((where / n).exists() for n in (BREAKDOWN_FILE, COMPARE_FILE))
    except OSError:  # a directory that cannot be searched: load_any says so in one line
        return _load_any(path, side)
    if none_yet and (line := not_yet_saved(where, "diff")) is not None:
        raise UsageError(f"{side} {line}")
    if not o.exists(path):
        raise UsageError(f"{side} {path}: no such result file or run directory")
    result = _load_any(path, side)
    if isinstance(result, CompareResult) and (line := stale_columns_line(where, result)) is not None:
        note(f"{side} {line}")
    return result


def _load_any(path: Path, side: str) -> Result:
    """``load_any``, its one line of refusal led by the side it was given as (``HEAD torn.json:
    not readable as JSON ...``), as the lines above are."""
    try:
        return load_any(path)
    except (ResultError, UsageError) as e:
        raise type(e)(f"{side} {e}") from None


def _where(path: Path) -> Path:
    """The run directory a result was read from: its compiled modules are there."""
    return path if path.is_dir() else path.parent


def _in_progress(base: Path, head: Path) -> str | None:
    """BASE and/or HEAD, named, whose run a breakdown or compare still writes (its lock held by
    a live process: ``runner/rundir.py`` being_written, as `report` reads it), or None."""
    sides = [f"{side} {_where(p)}" for side, p in (("BASE", base), ("HEAD", head))
             if being_written(_where(p))]
    return " and ".join(sides) or None


def _one_result(base: Path, head: Path) -> bool:
    """BASE and HEAD name one result: the same run directory, or it and its result file."""
    if _where(base).resolve() != _where(head).resolve():
        return False
    return base.is_dir() or head.is_dir() or base.name == head.name


def _gate(diff: Diff, threshold: float | None) -> BenchError | None:
    """The gate's failing verdict: a regression above ``threshold`` %, or no verdict; None where
    it passed or none was asked."""
    if threshold is None:
        return None
    if diff.other_workload:  # its figures are of other work on each side: none is judged
        return NotComparable(f"not comparable, no verdict: {workload_line(diff.other_workload)}")
    bad = diff.regressions(threshold)
    if bad:
        # a call at other sizes still counts (a resize that was not meant is a regression too);
        # the line says the work changed, for a reader to judge whether it was meant
        what = "; ".join(gated_phrase(s) + (f" ({'; '.join(work)})" if (work := work_changed(s)) else "")
                         for s in bad)
        return RegressionFound(f"significant regression above {threshold:g}%: {what}")
    if diff.unmeasured:
        return NotComparable(no_verdict_line(diff.unmeasured))
    if why := diff.nothing_compared():
        return NotComparable(f"not comparable, no verdict: {why}")
    return None


def diff(
    base: Base,
    head: Head,
    fail_on_regression: FailOnRegression = None,
    fmt: o.FormatOpt = o.Format.text,
    json_out: o.JsonOut = None,
    min_change: MinChange = None,
    top: o.Top = DEFAULT_TOP,
    allow_mismatch: AllowMismatch = False,
    html_out: o.HtmlOut = None,
) -> None:
    """Compare two results of the same model (two breakdowns, or two compares, mode by mode).

    Exit status: 0, or with --fail-on-regression 1 when a significant regression of the
    all-graphs row (two breakdowns) or a step time (two compares) exceeds PCT, and 5 when a
    graph or a mode was measured on one side only (failed, timed out, or missing from an
    interrupted or partial run), two compares have no column in both, or a step reads slower on
    a side measured on a busy or slow machine while no kernel changed its code, or a compare
    column's step is of its quiet calls alone (most of its interleaved rounds disturbed), or BASE ran
    another workload (its batch size, dtype or autocast: the figures are shown side by side,
    none judged) (not comparable, no verdict); 2 for unreadable or
    incomparable results, or a gate asked of a run still being written (its result is not final).
    A --json or --html file that cannot be written (a full disk) exits 74, but after a gate's
    regression (1) or no verdict (5) with that status, its line naming the file too.
    """
    o.one_stdout(fmt, json_out, html_out)
    writing = _in_progress(base, head)
    if writing and fail_on_regression is not None:  # no pass or fail on figures not yet final
        raise UsageError(f"{writing}: {IN_PROGRESS}: --fail-on-regression gives no verdict on a result that "
                         "is not final; run it once that command has ended")
    base_result, head_result = _load(base, "BASE"), _load(head, "HEAD")
    if writing:
        note(f"note: {writing}: {IN_PROGRESS}: its figures are the result saved so far, not the final ones")
    if _one_result(base, head):  # said once both read as results
        note(f"note: BASE and HEAD are one result ({_where(base)}): each figure is diffed against itself, "
             "so every change is zero; diff two runs, or time one model twice with compare")
    d = diff_results(
        base_result,
        head_result,
        min_rel=None if min_change is None else min_change / 100.0,
        allow_mismatch=allow_mismatch,
        base_label=str(base),
        head_label=str(head),
        code_dirs=(_where(base), _where(head)),
    )
    verdict = _gate(d, fail_on_regression)
    with failure_first(verdict, fail_on_regression):  # a write failing after it: said with it
        emit(
            json.dumps(d.to_dict(), indent=1),
            lambda f: render_diff(d, f, threshold_pct=fail_on_regression, top=top),
            fmt,
            json_out,
            html_out,
        )
    if verdict is not None:
        raise verdict
