"""Which statistics rules judged a saved result's graphs (``rules``: ``steady.RULES`` when its
graphs' profiled iterations were judged, whose verdicts it saves as ``left_out``; the step's
rounds and a compare's columns are judged when read, by the installed rules), in the one line
``report`` and ``diff`` say where that matters: a result judged by rules other than this
install's (``report``: ``report --reanalyze`` judges a breakdown run's graphs again), and two
results judged by different rules (``diff``: a graph's figures may then move by the rules
alone). A result without ``rules`` was saved before they were numbered: its rules are not
known, and are told apart from every numbered version. Verdicts are not changed; this only
says it.

Pure Python; no torch.
"""

from __future__ import annotations

from collections.abc import Callable

from . import steady
from .compare import CompareResult
from .rerun import tool_command
from .results import BreakdownResult

Result = BreakdownResult | CompareResult


def rules_words(rules: int | None) -> str:
    """How a line names the rules of a result: ``rules 1``, or for a result that records none,
    that they were not recorded."""
    if rules is None:
        return "unrecorded rules (saved before the rules were numbered)"
    return f"rules {rules}"


def other_rules(result: Result, run: str, reanalysable: Callable[[], list[str]]) -> str | None:
    """The line ``report`` says of a result whose graphs were not judged by this install's rules
    (``run``: the run directory; ``reanalysable()``: the breakdown runs whose re-analysis judges
    them all again, the run itself or a compare's columns: those that kept every graph's
    profile, looked for only where the line is said), or None."""
    if result.rules == steady.RULES:
        return None
    again = reanalysable()
    what = (f"note: {run}: its graphs' iterations were judged by the statistics policy's "
            f"{rules_words(result.rules)}; this inductor-bench's are rules {steady.RULES}")
    stand = "its graphs' figures stand as they were judged"
    if result.rules is not None and result.rules > steady.RULES:
        return f"{what} (a newer inductor-bench's rules judged them: {stand})"
    if not again:
        return f"{what}: {stand} (not every graph's profile was kept to judge them again)"
    if isinstance(result, CompareResult):
        columns = ", ".join(again)
        return (f"{what}: `inductor-bench report COLUMN --reanalyze` for each of its columns ({columns}) "
                "judges them again (docs/statistics.md)")
    return f"{what}: `{tool_command('report', run, '--reanalyze')}` judges them again (docs/statistics.md)"


def compare_rules(compare: CompareResult) -> int | None:
    """The rules of a compare whose columns' breakdowns were judged again: theirs where they all
    share them, else the compare's own as saved."""
    rules = {m.breakdown.rules for m in compare.modes if m.breakdown is not None}
    return rules.pop() if len(rules) == 1 else compare.rules


def rules_differ(base: Result, head: Result) -> list[str]:
    """The line ``diff`` says of two results whose graphs were judged by different rules, or none."""
    if base.rules == head.rules:
        return []
    again = (f"`inductor-bench report RUN --reanalyze` judges a breakdown run's graphs again by this "
             f"inductor-bench's, rules {steady.RULES}")
    sides = f"base by {rules_words(base.rules)}, head by {rules_words(head.rules)}"
    return [f"the sides' graphs were judged by different statistics rules: {sides}: a graph's figures may "
            f"differ by the rules alone ({again})"]
