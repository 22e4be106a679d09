"""`inductor-bench report RUN`: re-render a saved run (no torch, no GPU)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ..core.analysis import every_graph_profiled, no_profile_line, none_profiled, reanalyze
from ..core.compare import CompareResult
from ..core.errors import ResultError, UsageError
from ..core.judged import other_rules
from ..core.result_json import result_json
from ..core.results import BreakdownResult
from ..core.rundir import (
    BREAKDOWN_FILE,
    COMPARE_FILE,
    DIGESTS_FILE,
    META_FILE,
    STEP_TRACE_FILE,
    load_any,
    load_breakdown,
)
from ..core.steady import RULES
from ..core.vocab import Status
from ..render.breakdown import DEFAULT_TOP
from ..runner.rundir import being_written, held
from . import options as o
from .exit_status import failure_first
from .output import emit, render_result, replace_result, terminal_width
from .progress import note
from .report_compare import KEPT_FILE, rebuild_compare, stale_columns_line
from .run_state import IN_PROGRESS, ended_unsaved, not_yet_saved

Reanalyze = Annotated[
    bool,
    typer.Option(
        "--reanalyze",
        help="Analyse a breakdown run again from its saved profiles, traces and modules (no torch) "
        "and rebuild its breakdown.json and reports; the one replaced is kept beside it.",
    ),
]
# Held by a re-analysis from reading the run to its last file written: a second one on the
# same run waits for it, and then reads the run as the first left it.
LOCK_FILE = ".reanalysis.lock"

Run = Annotated[
    Path,
    typer.Argument(
        parser=o.a_path, metavar="RUN_DIR",
        help="A run directory of breakdown or compare, or its breakdown.json / compare.json."
    ),
]


def report(
    run: Run,
    fmt: o.FormatOpt = o.Format.text,
    top: o.Top = DEFAULT_TOP,
    summary: o.Summary = False,
    html_out: o.HtmlOut = None,
    by: o.ByOpt = o.View.kernel,
    module_depth: o.ModuleDepth = None,
    again: Reanalyze = False,
) -> None:
    """Re-render a saved breakdown or comparison without torch or a GPU."""
    o.one_stdout(fmt, None, html_out)  # before a re-analysis, which rewrites the run's files
    if not o.exists(run):
        raise UsageError(f"{run}: no such run directory or file")
    result = reanalyzed(run) if again else saved(run)
    if isinstance(result, CompareResult):
        views(run, by, module_depth)
        kw = {}
    else:
        o.check_views(by, module_depth, fmt)
        kw = {"top": top, "details": not summary, "by": by.value, "depth": module_depth,
              "width": terminal_width()}
    run_dir = run if run.is_dir() else run.parent
    if (line := other_rules(result, str(run_dir), lambda: reanalysable(run_dir, result))) is not None:
        note(line)
    with failure_first(None):  # a stop or a full disk as it is written: said as every command says it
        emit(result_json(result), lambda f: render_result(result, f, **kw), fmt, None, html_out,
             links=run_dir)


def reanalysable(run_dir: Path, result: BreakdownResult | CompareResult) -> list[str]:
    """The breakdown runs ``report --reanalyze`` judges again whole: the run, where it kept every
    measured graph's profile; of a compare, its columns' directories that did (beside its
    result), of those not judged by this install's rules."""
    if isinstance(result, BreakdownResult):
        return [str(run_dir)] if every_graph_profiled(run_dir, result) else []
    columns = [(run_dir / Path(m.run_dir).name, m.breakdown) for m in result.modes if m.run_dir]
    return [str(d) for d, b in columns if b is not None and b.rules != RULES and every_graph_profiled(d, b)]


def saved(run: Path) -> BreakdownResult | CompareResult:
    """The result saved in ``run``; of a run still being written, the one saved so far, said
    on stderr (and none yet said as such)."""
    where = run if run.is_dir() else run.parent
    try:
        none_yet = run.is_dir() and not any((run / n).exists() for n in (BREAKDOWN_FILE, COMPARE_FILE))
    except OSError:  # a directory that cannot be searched: load_any says so in one line
        return load_any(run)
    if none_yet:
        if (line := not_yet_saved(run, "report")) is not None:
            raise UsageError(line)
        _ended_unsaved(run)
    elif being_written(where):
        note(f"{where}: {IN_PROGRESS}: this is the result saved so far, not the final one")
    result = load_any(run)
    if isinstance(result, CompareResult) and (line := stale_columns_line(where, result)) is not None:
        note(line)
    return result


def _ended_unsaved(run: Path) -> None:
    """Refuse ``run``, a directory holding no result and held by no writer, where its
    ``META_FILE`` still says its run is under way: the command ended without saving anything."""
    try:
        meta = json.loads((run / META_FILE).read_text())
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return
    if isinstance(meta, dict) and meta.get("status") in (Status.RUNNING, "claimed"):
        raise UsageError(ended_unsaved(run, meta))


def views(run: Path, by: o.View, module_depth: int | None) -> None:
    """Refuse the views of a breakdown (--by, --module-depth) asked of a compare run."""
    asked = [f"--by {by.value}"] if by != o.View.kernel else []
    asked += [f"--module-depth {module_depth}"] if module_depth is not None else []
    if not asked:
        return
    raise UsageError(f"{' and '.join(asked)}: the views apply to breakdown runs, and {run} is a compare run: "
                     f"report one of its columns' breakdown directories instead{_a_column(run)}")


def _a_column(run: Path) -> str:
    """One of a compare run's columns, as an example: `` (RUN/default)``, or nothing."""
    where = run if run.is_dir() else run.parent
    columns = sorted(p for p in where.iterdir() if (p / BREAKDOWN_FILE).is_file())
    return f" ({columns[0]})" if columns else ""


def reanalyzed(run: Path) -> BreakdownResult:
    """The run analysed again (``core/analysis.py``), saved over its derived files: the result
    and its reports; the result it replaces is kept once as ``KEPT_FILE``. Two at once on one
    run take turns (``LOCK_FILE``): each reads the run whole and writes its files whole."""
    if being_written(run):  # its result is not the run's yet: it would be kept as the run's own
        raise UsageError(f"{run}: {IN_PROGRESS}: --reanalyze refused; run it once that command has ended")
    try:
        present = (run / BREAKDOWN_FILE).exists()
    except OSError as e:  # a directory that cannot be searched
        raise UsageError(f"{run}: cannot read ({e.strerror or e})") from None
    if run.is_dir() and not present and (run / COMPARE_FILE).exists():  # a compare run, its columns inside
        raise UsageError(f"{run}: a compare run: --reanalyze takes a breakdown run directory, as one of its "
                         f"columns{_a_column(run)}, whose re-analysis rebuilds {COMPARE_FILE} too")
    if run.is_dir() and not present:
        _ended_unsaved(run)
    if not run.is_dir() or not present:
        raise UsageError(f"{run}: --reanalyze takes a breakdown run directory (with {BREAKDOWN_FILE})")
    read = _identity(run / BREAKDOWN_FILE)
    loaded = load_breakdown(run)  # read once: the document judged here is the one re-analysed
    if none_profiled(run, loaded):  # refused before its lock is made in the run
        raise ResultError(no_profile_line(run))
    waiting = f"{run}: another re-analysis of this run is under way; waiting for it to end"
    with held(run / LOCK_FILE, lambda: note(waiting)):
        if _identity(run / BREAKDOWN_FILE) != read:  # rebuilt by the one waited for: read as it left it
            loaded = load_breakdown(run)
        return _reanalyzed(run, loaded)


def _identity(path: Path) -> tuple[int, int, int] | None:
    """Which file ``path`` is, and its version: a result saved again is a new file (written
    aside and renamed over it), so another inode, size or time of change; None: not there."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _reanalyzed(run: Path, loaded: BreakdownResult) -> BreakdownResult:
    result, done = reanalyze(run, loaded)
    result.run_dir = str(run.absolute())  # as the run saved it: read from anywhere, it names the run
    kept = run / KEPT_FILE
    first = replace_result(run, BREAKDOWN_FILE, KEPT_FILE, result)
    where = "the result it replaced" if first else "the run's own result, before any re-analysis"
    note(f"re-analysed {len(done)} graph(s) from their saved profiles; {run / BREAKDOWN_FILE} rebuilt "
         f"({where}: {kept})")
    rebuild_compare(run, result, LOCK_FILE)  # a compare's column: the compare's result too
    if not (run / DIGESTS_FILE).exists():  # a run from before they were recorded, or one that lost them
        note(f"{run}: no {DIGESTS_FILE}: the graphs' modules were analysed as they are, unchecked against "
             "what the run wrote")
    if result.outside is not None and not (run / STEP_TRACE_FILE).exists():
        note(f"the time outside the graphs kept as saved: no {STEP_TRACE_FILE} to split again"
             + ("" if result.outside.graphs_uncovered_ms is not None
                else " (the graphs' wrappers' time, which the saved result lacks, left out: null)"))
    return result
