"""A compare's ``compare.json`` made again from a column re-analysed inside it (`report COLUMN
--reanalyze`): the compare holds each column's breakdown as well, so its tables agree with the
column's own result only when both are rebuilt."""

from __future__ import annotations

from pathlib import Path

from ..core.compare import CompareResult
from ..core.errors import BenchError
from ..core.judged import compare_rules
from ..core.results import BreakdownResult
from ..core.rundir import COMPARE_FILE, load_compare
from ..runner.rundir import held
from .output import replace_result
from .progress import note

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
