"""A breakdown or a compare result: which of the two it is, and the breakdowns it holds."""

from __future__ import annotations

from .compare import CompareResult
from .results import BreakdownResult

Result = BreakdownResult | CompareResult


def named_breakdowns(r: Result) -> list[tuple[str, BreakdownResult]]:
    """A result's breakdowns, each with what names it in a line: a compare's column label
    (``"default: "``), nothing for a breakdown result."""
    if isinstance(r, CompareResult):
        return [(f"{m.label}: ", m.breakdown) for m in r.modes if m.breakdown is not None]
    return [("", r)]


def breakdowns(r: Result) -> list[BreakdownResult]:
    """A result's breakdowns: a compare's columns' that ran, else the result itself."""
    return [b for _, b in named_breakdowns(r)]


def kind(r: Result) -> str:
    return "compare" if isinstance(r, CompareResult) else "breakdown"
