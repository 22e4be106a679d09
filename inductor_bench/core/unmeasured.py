"""What was measured on one side of a comparison and not on the other: a graph that failed,
timed out, or is missing from a run that did not finish. No step is judged against a step
that lacks one (``diff.py``, the gate of ``compare_gate.py``). Pure; no torch."""

from __future__ import annotations

from dataclasses import dataclass

from . import step_totals
from .rerun import breakdown_again
from .results import BreakdownResult
from .vocab import Status

BASE, HEAD = "base", "head"
_RUN_WORDS = {Status.RUNNING: "unfinished"}  # how a run's status reads after "the"


@dataclass(frozen=True)
class Unmeasured:
    """A graph (or a whole column of a compare) measured on one side and not on the other:
    no step can be judged against a step that lacks it."""

    section: str  # the section or column it belongs to ("default", "head:default")
    side: str  # the side that lacks it: base | head, or a model's name
    why: str  # "failed: ...", "timeout", "missing from the interrupted run", "not run"
    graph: str | None = None  # None: the whole column was not measured
    what: str | None = None  # what was not measured, where not a graph or the step
    # measured, but on a busy or slow machine, and it reads slower there (``why`` says how)
    disturbed: bool = False

    def describe(self) -> str:
        if self.disturbed:
            return (f"{self.section}: {self._what()} read slower in {self.side}, measured on a busy or slow "
                    f"machine ({self.why}): measure again, or time both sides in one process (compare)")
        return f"{self.section}: {self.missing()}"

    def missing(self) -> str:
        """What was not measured, where and why, less the section (a cell of that section's)."""
        return f"{self._what()} not measured in {self.side} ({self.why})"

    def _what(self) -> str:
        return self.what or (f"graph {self.graph}" if self.graph else "the step")

    def to_dict(self) -> dict[str, str | bool | None]:
        d = {"section": self.section, "graph": self.graph, "side": self.side, "why": self.why}
        d |= {"what": self.what} if self.what else {}
        return d | ({"disturbed": True} if self.disturbed else {})


def unmeasured_graphs(
    base: BreakdownResult, head: BreakdownResult, section: str, sides: tuple[str, str] = (BASE, HEAD)
) -> list[Unmeasured]:
    """The graphs of either side that the other did not measure: those recorded as failed or
    timed out, and those missing from a run that did not finish (interrupted, partial, failed,
    running) or that its own step timing names. A run that finished without a graph the other
    has compiled differently: that graph was added or removed, not left unmeasured."""
    if not (_graph_ids(base) or _graph_ids(head)):  # neither run has a graph: two failed runs
        return [Unmeasured(section=section, side=side, what="the model's graphs", why=_why_none(r))
                for side, r in zip(sides, (base, head), strict=True)]
    out = []
    for gid in _graph_ids(base) + [g for g in _graph_ids(head) if g not in _graph_ids(base)]:
        for side, r in zip(sides, (base, head), strict=True):
            why = _why_unmeasured(r, gid)
            if why is not None:
                out.append(Unmeasured(section=section, side=side, why=why, graph=gid))
    return out


def uncounted_calls(base: BreakdownResult, head: BreakdownResult, section: str,
                    sides: tuple[str, str] = (BASE, HEAD)) -> list[Unmeasured]:
    """The side whose graphs' calls were not counted where the other's were: its step adds
    each graph once, the other's each as often as it was called (``step_totals.py``). A side
    that measured no graph has no calls to count: its graphs are listed as unmeasured."""
    if not (base.measured() and head.measured()):
        return []
    counted = [step_totals.counted(r.measured()) for r in (base, head)]
    if counted[0] == counted[1]:
        return []
    side = sides[counted.index(False)]
    return [Unmeasured(section=section, side=side, what="the calls of each graph",
                       why=_why_uncounted((base, head)[counted.index(False)], side))]


def _why_uncounted(r: BreakdownResult, side: str) -> str:
    """Why a run's graphs' calls were not counted, and where measuring it again counts them (an
    older run: this version's breakdown of the same model)."""
    if any(g.cuda_graphs and g.calls is None for g in r.measured()):
        return "CUDA-graph replays, whose calls are not counted: its step adds each graph once"
    return (f"an older run: its step adds each graph once; measure {side} again with this version, "
            f"`{breakdown_again(r)}` on {side}'s code")


def calls_changed(base: BreakdownResult, head: BreakdownResult) -> list[tuple[str, float, float]]:
    """(graph id, base calls, head calls) of each graph measured on both sides, its calls
    counted on both, that the model called a different number of times."""
    b = {g.id: g.calls for g in base.measured() if g.calls is not None}
    h = {g.id: g.calls for g in head.measured() if g.calls is not None}
    return [(gid, b[gid], h[gid]) for gid in b if gid in h and not step_totals.same_calls(b[gid], h[gid])]


def measured_on_both(base: BreakdownResult, head: BreakdownResult) -> set[str]:
    """The ids of the graphs measured in both runs."""
    return {g.id for g in base.measured()} & {g.id for g in head.measured()}


def _graph_ids(r: BreakdownResult) -> list[str]:
    ids = [g.id for g in r.graphs]
    named = r.step_turns.graphs if r.step_turns is not None else []
    return ids + [g for g in named if g not in ids]


def _why_unmeasured(r: BreakdownResult, graph_id: str) -> str | None:
    g = next((x for x in r.graphs if x.id == graph_id), None)
    if g is not None:
        return None if g.ok else first_line(f"{g.status}: {g.error}" if g.error else g.status)
    named = r.step_turns is not None and graph_id in r.step_turns.graphs
    if r.status != Status.OK or named:
        return f"missing from the {_RUN_WORDS.get(r.status, r.status)} run"
    return None


def _why_none(r: BreakdownResult) -> str:
    """Why a run holds no graph: its first error, else its status."""
    return first_line(r.errors[0]) if r.errors else f"the {_RUN_WORDS.get(r.status, r.status)} run"


def first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else text


def no_verdict_line(unmeasured: list[Unmeasured]) -> str:
    """The gate's one line when something was measured on one side only."""
    return "not comparable, no verdict: " + "; ".join(u.describe() for u in unmeasured)
