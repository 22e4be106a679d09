"""Profiled events onto the calls of ``call()`` that made them (pure; no torch).

In every iteration the k-th event of an extern op or a generated kernel is its k-th call in
``call()``, where each iteration has exactly as many events of it as ``call()`` has calls of it
(``core/attribution.py``). A ``while_loop`` runs its condition's and body's calls as many times
as the model's values decide: where some of an op's calls are a loop's, its events of an
iteration are laid out as the loop ran them (``core/loop_calls.py``), its trips being those
that make as many events, and each call gets the time of its own events (a body's call, all of
its trips'). A call of a loop that made no trips in any iteration ran none: it is left out,
with a note.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .breakdown import US_PER_MS
from .callsites import Call
from .loop_calls import UNPLACED, Branch, Place, order, trips
from .results import GraphResult
from .sources import CallSite

Runs = tuple[list[float], list[int]]  # a call's time (ms) in each iteration, and its events there


def events_by_key(
    per_iter: list[list[tuple[int, Any]]], key_of: Callable[[str], str | None], keys: dict[str, Any]
) -> dict[str, list[list[float]]]:
    """Per key (an op, a kernel), per iteration: the durations (µs) of its events, in order.
    ``key_of`` is asked once per distinct event name."""
    out: dict[str, list[list[float]]] = {k: [] for k in keys}
    key_by_name: dict[str, str | None] = {}
    for evs in per_iter:
        seen: dict[str, list[float]] = {k: [] for k in keys}
        for _, ev in evs:
            if ev.name not in key_by_name:
                key_by_name[ev.name] = key_of(ev.name)
            key = key_by_name[ev.name]
            if key in seen:
                seen[key].append(ev.dur)
        for k, durs in seen.items():
            out[k].append(durs)
    return out


def match_sites(
    calls: dict[str, list[tuple[int, Call]]],
    events: dict[str, list[list[float]]],
    graph: GraphResult,
    iterations: int,
    fields: Callable[[str, int, int, Call], dict[str, Any]],
    where: list[Place | Branch | str | None] | None = None,
) -> tuple[list[CallSite], list[str]]:
    """Each iteration's events of each key onto its calls, in the order they ran (see the
    module doc); a note for each key where they cannot be. ``fields``: the site's own fields,
    from its key, its place among the key's calls, its index in ``call()`` and the call;
    ``where``: each call's place (``loop_calls.places``, by index in ``call()``; None: no call
    is a loop's)."""
    sites: list[CallSite] = []
    notes: list[str] = []
    n = max(iterations, 1)
    for key, cs in calls.items():
        at = [None if where is None else where[i] for i, _ in cs]
        per_call = _per_call(at, events[key])
        if per_call is None:
            notes.append(_unsplit(key, cs, events[key]))
            continue
        ran = [j for j, (_, counts) in enumerate(per_call) if any(counts)]
        if len(ran) < len(cs):
            calls_word = "call" if len(cs) - len(ran) == 1 else "calls"
            notes.append(f"{key}: its {len(cs) - len(ran)} {calls_word} in a while_loop ran none (no trips)")
        for j in ran:
            i, c = cs[j]
            samples, counts = per_call[j]
            sites.append(CallSite(
                **fields(key, j, i, c),
                calls=sum(counts) / n,
                ms=graph.steady().mean(samples),  # as every figure: its graph's steady iterations
                samples_ms=samples,
            ))
    return sites, notes


def _per_call(at: list[Place | Branch | str | None], events: list[list[float]]) -> list[Runs] | None:
    """Per call of a key (``at``: each one's place): its time (ms) and its events in each
    iteration, the events laid out as the calls ran (``loop_calls.order``); None where no
    iteration is known, a call's runs are not (one in a function a loop's body calls, calls in
    two loops, beside a loop's a call in a ``cond``'s branch that does not hold the loop), or an
    iteration's events are no whole number of trips."""
    loops = {p.loop for p in at if isinstance(p, Place)}
    if not events or UNPLACED in at or len(loops) > 1 or any(
            isinstance(p, Branch) and p.fn != loop.owner for p in at for loop in loops):
        return None  # how many times some call ran is not known: any split could be wrong
    placed = [p if isinstance(p, Place) else None for p in at]
    out: list[Runs] = [([], []) for _ in at]
    for d in events:
        t = trips(placed, len(d))
        if t is None:
            return None
        ms, counts = [0.0] * len(at), [0] * len(at)
        for j, dur in zip(order(placed, t), d, strict=True):
            ms[j] += dur / US_PER_MS
            counts[j] += 1
        for j, (samples, runs) in enumerate(out):
            samples.append(ms[j])
            runs.append(counts[j])
    return out


def _unsplit(key: str, cs: list[tuple[int, Call]], events: list[list[float]]) -> str:
    counts = sorted({len(d) for d in events})
    got = "/".join(str(c) for c in counts) or "0"
    events_word = "event" if counts == [1] else "events"
    branch = (" (some in subgraph functions, a torch.cond's branches or a loop's body, which run "
              "as the model's values decide)") if any(c.via for _, c in cs) else ""
    return f"{key}: {got} {events_word} per iteration for {len(cs)} calls{branch}, not split by call site"
