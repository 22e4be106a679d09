"""A compare's ``compare.json`` made again from a column re-analysed inside it (`report COLUMN
--reanalyze`): the compare holds each column's breakdown as well, so its tables agree with the
column's own result only when both are rebuilt."""

from __future__ import annotations

from pathlib import Path

from ..core.compare import CompareResult
from ..core.errors import BenchError
from ..core.judged import compare_rules
from ..core.results import BreakdownResult
from ..core.rundir import BREAKDOWN_FILE, COMPARE_FILE, load_breakdown, load_compare
from ..runner.rundir import held
from .output import replace_result
from .progress import note

# A breakdown's own result, kept once where a re-analysis first replaced it.
KEPT_FILE = "breakdown.before-reanalysis.json"
# The compare's own result, kept once where a re-analysis of a column first rebuilt it.
KEPT_COMPARE_FILE = "compare.before-reanalysis.json"


def rebuild_compare(column: Path, result: BreakdownResult, lock: str) -> None:
    """Where ``column`` is a column of the compare in its parent directory, that compare's
    result saved again with ``result`` as the column's breakdown, and its reports; the result it
    replaces is kept once (``KEPT_COMPARE_FILE``). Re-analyses of two columns at once take turns
    on the compare's ``lock`` file. A compare that cannot be read is said, and left as it is."""
    if column.name in ("", ".."):  # "." or "..": named by where it is
        column = column.resolve()
    where = column.parent  # named as the column was: a relative path stays relative
    if not (where / COMPARE_FILE).is_file():
        return
    waiting = f"{where}: another re-analysis of this compare's columns is under way; waiting for it to end"
    with held(where / lock, lambda: note(waiting)):
        try:
            compare = load_compare(where)
        except BenchError as e:
            note(f"{where / COMPARE_FILE}: not rebuilt with this column's result: {e}")
            return
        if not _replaced(compare, column.name, result):
            return
        first = replace_result(where, COMPARE_FILE, KEPT_COMPARE_FILE, compare)
    kept = where / KEPT_COMPARE_FILE
    said = "the result it replaced" if first else "the compare's own result, before any re-analysis"
    note(f"{where / COMPARE_FILE} rebuilt with this column's result ({said}: {kept})")


def _replaced(compare: CompareResult, name: str, result: BreakdownResult) -> bool:
    """Whether ``compare`` had one column whose run directory is named ``name`` (the compare
    may have been moved since: its columns are the directories beside its result), now holding
    ``result``."""
    columns = [m for m in compare.modes if m.run_dir and Path(m.run_dir).name == name]
    if len(columns) != 1:
        return False
    columns[0].breakdown = result
    compare.rules = compare_rules(compare)  # the rules of its columns, where one rules all
    return True


def stale_columns_line(where: Path, compare: CompareResult) -> str | None:
    """The line that says which columns of ``compare`` (saved in ``where``) were re-analysed by
    an inductor-bench that did not rebuild the compare (it still holds the column's result from
    before: the one the column kept as ``KEPT_FILE``, no longer its ``breakdown.json``), and the
    command that rebuilds it; None where every column agrees or cannot be read."""
    names = [n for n, held in _held_columns(compare) if _stale(where / n, held)]
    if not names:
        return None
    fix = " and ".join(f"`inductor-bench report {where / n} --reanalyze`" for n in names)
    cols = f"column {names[0]} was" if len(names) == 1 else f"columns {', '.join(names)} were"
    return (f"note: {where / COMPARE_FILE}: its {cols} re-analysed after it was saved, and it still holds "
            f"their results from before; {fix} rebuilds it with their current ones")


def _held_columns(compare: CompareResult) -> list[tuple[str, BreakdownResult]]:
    """(column directory name, the breakdown the compare holds of it)."""
    named = [(Path(m.run_dir).name, m.breakdown) for m in compare.modes
             if m.run_dir and m.breakdown is not None]
    return [(n, b) for n, b in named if n not in ("", ".", "..")]


def _stale(column: Path, held: BreakdownResult) -> bool:
    """The compare's copy is the column's result from before its re-analysis, not its current
    (each read as a result; where it is, ``run_dir``, apart: a compare may have been moved)."""
    if not (column / KEPT_FILE).is_file():
        return False
    try:
        kept, now = (load_breakdown(column / n) for n in (KEPT_FILE, BREAKDOWN_FILE))
    except BenchError:
        return False
    figures = [{k: v for k, v in r.to_dict().items() if k != "run_dir"} for r in (held, kept, now)]
    return figures[0] == figures[1] != figures[2]
