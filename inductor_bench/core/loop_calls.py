"""Where a ``while_loop`` runs the calls of ``call()`` (pure text; no torch).

Inductor writes a ``while_loop``'s condition and body as subgraph functions called from a
Python ``while`` of ``call`` (or of a partition, or of a ``cond``'s branch)::

    (buf2_cond_result,) = while_loop_cond_graph_0(while_loop_cond_graph_0_args)
    ...
    while should_loop:
        (buf2[0], buf2[1]) = while_loop_body_graph_0(while_loop_body_graph_0_args)
        (buf2_cond_result,) = while_loop_cond_graph_0(while_loop_cond_graph_0_args)

so an iteration of the graph runs the condition's calls once before the loop, then in each
trip the body's calls and the condition's again. ``run_order`` (``core/modparse.py``) puts each
function in once, at its first call; ``order`` lays a kernel's (or an op's) calls out as they
run for a number of trips, and ``trips`` finds that number from how many events of it an
iteration has, so that the k-th event is the call that made it (``core/site_events.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .callsites import Call
from .loop_work import loop_lines
from .modparse import SUBGRAPH_CALL, WHILE, function_body, partition_names

_DEF = re.compile(r"^def (?P<fn>\w+)\(")


@dataclass(frozen=True)
class Loop:
    """One ``while`` that runs a ``while_loop``: its functions called once before it (the
    condition) and those called in each trip, in the order a trip calls them."""

    at: int  # the ``while`` line's index in the module
    entry: tuple[str, ...]
    trip: tuple[str, ...]
    owner: str = "call"  # the function whose line it is


@dataclass(frozen=True)
class Place:
    """Where a call of ``call()`` runs: in ``fn``, a function of ``loop``."""

    loop: Loop
    fn: str


@dataclass(frozen=True)
class Branch:
    """A call in ``fn``, a subgraph function no loop runs (a ``cond``'s branch), which runs
    or not as the model's values decide: with a loop's calls, only one of ``fn``'s own loops."""

    fn: str


UNPLACED = "unplaced"  # a call in a function a loop's function calls, or in a loop in a loop


def while_loops(lines: list[str]) -> list[Loop]:
    """Every ``while`` of ``call``, a partition or a subgraph function they call that calls
    subgraph functions, in the order met."""
    out: list[Loop] = []
    owners = ["call", *partition_names("\n".join(lines))]
    seen = set(owners)
    for owner in owners:  # grows as it goes
        body = list(function_body(lines, owner))
        for n, i in enumerate(body):
            if (m := SUBGRAPH_CALL.match(lines[i])) is not None and m["fn"] not in seen and len(owners) < 64:
                seen.add(m["fn"])
                owners.append(m["fn"])
            if (w := WHILE.match(lines[i])) is not None:
                out += _loop(lines, body[:n], i, body[n + 1:], len(w["indent"]), owner)
    return out


def _loop(lines: list[str], before: list[int], at: int, after: list[int], indent: int,
          owner: str) -> list[Loop]:
    block = []
    for j in after:
        if lines[j].strip() and len(lines[j]) - len(lines[j].lstrip()) <= indent:
            break
        block.append(j)
    trip = [m["fn"] for j in block if (m := SUBGRAPH_CALL.match(lines[j])) is not None]
    if not trip:
        return []
    called = {m["fn"] for j in before if (m := SUBGRAPH_CALL.match(lines[j])) is not None}
    return [Loop(at, tuple(fn for fn in trip if fn in called), tuple(trip), owner)]


def places(text: str, calls: list[Call]) -> list[Place | Branch | str | None]:
    """Per call (by position in ``calls``): the loop function whose own line makes it; None
    for a call of ``call()`` (or a partition) itself; a ``Branch`` for one in another subgraph
    function no loop runs; ``UNPLACED`` for one in a function a loop's function calls (its runs
    per trip are not known here) or in a loop inside another loop."""
    lines = text.splitlines()
    loops = while_loops(lines)
    owner = {fn: loop for loop in loops for fn in loop.trip}
    own = {i: fn for fn in owner for i in function_body(lines, fn)}
    reached = loop_lines(lines, list(owner))
    out: list[Place | Branch | str | None] = []
    for c in calls:
        if c.line is None or (c.via is None and c.line not in reached):
            out.append(None)
        elif c.line not in reached:
            out.append(Branch(_function_of(lines, c.line)))
        elif c.line in own and owner[own[c.line]].at not in reached:
            out.append(Place(owner[own[c.line]], own[c.line]))
        else:
            out.append(UNPLACED)
    return out


def _function_of(lines: list[str], i: int) -> str:
    """The name of the module-level function whose body holds line ``i``."""
    for j in range(i, -1, -1):
        if (m := _DEF.match(lines[j])) is not None:
            return m["fn"]
    return ""


def order(where: list[Place | None], trips: int) -> list[int]:
    """The positions of a key's calls (``where``: each one's place, at most one loop among
    them) in the order an iteration of ``trips`` trips runs them: its calls outside the loop
    where they are, the loop's condition's once before its trips and each trip's calls."""
    out: list[int] = []
    loop_done = False
    for j, p in enumerate(where):
        if p is None:
            out.append(j)
            continue
        if loop_done:
            continue
        loop_done = True
        mine = [(k, q) for k, q in enumerate(where) if q is not None]
        out += [k for k, q in mine if q.fn in p.loop.entry]
        for _ in range(trips):
            out += [k for fn in p.loop.trip for k, q in mine if q.fn == fn]
    return out


def trips(where: list[Place | None], events: int) -> int | None:
    """The trips of the loop that make ``events`` events of a key with calls at ``where``
    (``order``): the events left over from the calls that run once, over those a trip runs;
    None where no whole number of trips (0 or more) makes them."""
    once, per_trip = len(order(where, 0)), len(order(where, 1)) - len(order(where, 0))
    if per_trip == 0:
        return 0 if events == once else None
    t, rest = divmod(events - once, per_trip)
    return t if t >= 0 and rest == 0 else None
