"""Several model files compared: each later model's column judged against the first model's in the
same mode, and what keeps a pair from a verdict (the merge gate's two ways to fail)."""

from __future__ import annotations

from .compare import CompareResult, ModeResult
from .compare_summary import few_steady, judge, timed, too_disturbed
from .stats import Change
from .unmeasured import BASE, HEAD, Unmeasured, first_line, unmeasured_graphs
from .vocab import Status


def against_first(result: CompareResult) -> list[tuple[ModeResult, ModeResult, Change]]:
    """With several model files: (base, column, change) for each later model's column against
    the first model's column of the same mode, where both were timed and nothing of either
    was measured on one side only (``not_measured``)."""
    out = []
    if len(result.models) < 2:
        return out
    gaps = {u.section for u in not_measured(result)}
    for m in result.modes:
        base = result.mode(f"{result.models[0]}:{m.mode}")
        if (base is not None and base is not m and timed(base) and timed(m) and m.label not in gaps
                and not too_disturbed(result, base, m)):
            out.append((base, m, judge(result, base, m)))
    return out


def not_measured(result: CompareResult) -> list[Unmeasured]:
    """With several model files: what keeps a later model's column from being judged against
    the first model's in the same mode: a column that did not run (failed, timed out, or
    missing from an interrupted run), graphs of their breakdowns measured on one side only, or
    interleaved rounds mostly disturbed (``too_disturbed``) or enough to leave no interval
    (``few_steady``: no verdict without one).
    A mode skipped in both (one the device lacks) asks for no verdict."""
    if len(result.models) < 2:
        return []
    first, out = result.models[0], []
    for mode in dict.fromkeys(m.mode for m in result.modes):
        base = result.mode(f"{first}:{mode}")
        for model in result.models[1:]:
            column = result.mode(f"{model}:{mode}")
            out += unmeasured_columns(base, column, f"{model}:{mode}", (first, model))
            if timed(base) and timed(column) and (why := too_disturbed(result, base, column)
                                                  or few_steady(result, base, column)):
                out.append(Unmeasured(f"{model}:{mode}", f"{first} and {model}", why, what="a steady step"))
    return out


def unmeasured_columns(
    base: ModeResult | None, head: ModeResult | None, section: str, sides: tuple[str, str] = (BASE, HEAD)
) -> list[Unmeasured]:
    """What keeps two columns of a compare (one mode, two results or two model files) from
    being judged: a column that did not run on one side, and the graphs of their breakdowns
    measured on one side only. Two columns skipped alike (a mode this device lacks) or
    absent alike ask for no verdict: nothing."""
    if base is None and head is None:
        return []
    if base is not None and head is not None and base.status == head.status == Status.SKIPPED:
        return []
    graphs = []
    if base is not None and head is not None and base.breakdown and head.breakdown:
        graphs = unmeasured_graphs(base.breakdown, head.breakdown, section, sides)
    out = []
    for side, m in zip(sides, (base, head), strict=True):
        if m is None:
            out.append(Unmeasured(section=section, side=side, why="not run"))
        elif not m.ok and not any(u.side == side for u in graphs):
            why = f"{m.status}: {m.reason}" if m.reason else m.status
            out.append(Unmeasured(section=section, side=side, why=first_line(why)))
    return out + graphs


def regressions(result: CompareResult, threshold_pct: float) -> list[tuple[ModeResult, ModeResult, Change]]:
    """The later models' columns significantly slower than the first model's by more than
    ``threshold_pct`` percent (the merge gate's question; ``not_measured`` is its other
    way to fail)."""
    return [
        (b, m, ch) for b, m, ch in against_first(result)
        if ch.slower and ch.rel_pct is not None and ch.rel_pct > threshold_pct
    ]
