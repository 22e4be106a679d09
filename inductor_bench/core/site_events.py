"""Profiled events onto the calls of ``call()`` that made them (pure; no torch).

In every iteration the k-th event of an extern op or a generated kernel is its k-th call in
``call()``, where each iteration has exactly as many events of it as ``call()`` has calls of it
(``core/attribution.py``). A ``while_loop``'s body runs as many times as the model's values
decide: where it made no trips, an op called both in ``call()`` itself and in the loop's
functions has one event per iteration for each of its calls outside the loop, which are
then its calls (``untripped``); its calls in the loop ran none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .breakdown import US_PER_MS
from .callsites import Call
from .modparse import SUBGRAPH_CALL, function_body, loop_functions, partition_names
from .results import GraphResult
from .sources import CallSite


def loop_vias(text: str) -> set[str]:
    """What each call of a ``while_loop``'s condition or body in ``call()`` (or a partition)
    returns into (``buf2`` of ``(buf2[0], buf2[1]) = while_loop_body_graph_0(...)``): the
    ``Call.via`` of the calls those functions make."""
    lines, names = text.splitlines(), partition_names(text)
    loops = set(loop_functions(lines, names))
    out: set[str] = set()
    for owner in ("call", *names):
        for i in function_body(lines, owner):
            if (m := SUBGRAPH_CALL.match(lines[i])) is not None and m["fn"] in loops:
                out.add(m["into"] or m["first"])
    return out


def untripped(calls: dict[str, list[tuple[int, Call]]], events: dict[str, list[list[float]]],
              vias: set[str]) -> tuple[dict[str, list[tuple[int, Call]]], list[str]]:
    """``calls`` (key -> its calls) less, for each key all of whose calls are in ``call()``
    itself or in a loop's functions (``vias``, ``loop_vias``) and whose every iteration has one
    event per call outside the loop, its calls in the loop, which ran none; a note for each."""
    out = dict(calls)
    notes: list[str] = []
    for key, cs in calls.items():
        outside = [(i, c) for i, c in cs if c.via is None]
        if not 0 < len(outside) < len(cs) or any(c.via not in vias for _, c in cs if c.via is not None):
            continue
        if {len(d) for d in events[key]} == {len(outside)}:
            out[key] = outside
            n = len(cs) - len(outside)
            calls_word = "call" if n == 1 else "calls"
            notes.append(f"{key}: its {n} {calls_word} in a while_loop ran none (no trips)")
    return out, notes


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
) -> tuple[list[CallSite], list[str]]:
    """The k-th event of each iteration onto the k-th call, where every iteration has one
    event per call; a note for each key where not. ``fields``: the site's own fields, from its
    key, its place among the key's calls, its index in ``call()`` and the call."""
    sites: list[CallSite] = []
    notes: list[str] = []
    n = max(iterations, 1)
    for key, cs in calls.items():
        counts = sorted({len(d) for d in events[key]})
        if counts != [len(cs)]:
            got = "/".join(str(c) for c in counts) or "0"
            events_word = "event" if counts == [1] else "events"
            branch = (" (some in subgraph functions, a torch.cond's branches or a loop's body, which run "
                      "as the model's values decide)") if any(c.via for _, c in cs) else ""
            notes.append(f"{key}: {got} {events_word} per iteration for {len(cs)} calls{branch}, "
                         "not split by call site")
            continue
        for j, (i, c) in enumerate(cs):
            samples = [d[j] / US_PER_MS for d in events[key]]
            sites.append(CallSite(
                **fields(key, j, i, c),
                calls=len(samples) / n,
                ms=graph.steady().mean(samples),  # as every figure: its graph's steady iterations
                samples_ms=samples,
            ))
    return sites, notes
