"""Events the analysis leaves out because their times are not known; pure, no torch.

- **Unfinished**: a negative duration (kineto writes -1 for a CPU event still open when the
  profiler stopped: a step marker, an op). Its end is not known; a window or an op ending
  before it starts would count as negative time.
- **Untimed**: a device event (kernel, memcpy, memset) or a launch (``cuda_runtime``,
  ``cuda_driver``) at ts 0 with dur 0, where CUPTI lost its times (a profiler session exported
  after another had started: torch's "Profiler clears events at the end of each cycle"). At
  ts 0 it would stretch its step, or the whole trace's window, back to 1970. A synthetic
  trace's step at ts 0 lasts something: only an event at 0 that lasts nothing is untimed.
- **No dur**: a device event that writes no ``dur`` (read as ``NO_DUR``, a negative zero). Its
  time is not known: read as 0 ms, it would lower its device's busy time without a word.

Each is counted by name (``TraceColumns.unfinished``, ``.untimed``, ``.no_dur``) for the report.
"""

from __future__ import annotations

import math
from itertools import compress
from typing import Any

from .errors import TraceError
from .trace import DEVICE_CATEGORIES, LAUNCH_CATEGORIES

UNTIMED_CATEGORIES = DEVICE_CATEGORIES | LAUNCH_CATEGORIES


def finished(counts: dict[str, int], xs: list[Any], cats: list[str]) -> tuple[list[Any], list[str]]:
    """``xs`` and their ``cats`` less the events with a negative duration, counted by name in
    ``counts``."""
    return _without([x.dur < 0 for x in xs], counts, xs, cats)


def undurated(counts: dict[str, int], xs: list[Any], cats: list[str]) -> tuple[list[Any], list[str]]:
    """``xs`` and their ``cats`` less the device events that wrote no dur, counted by name in
    ``counts``."""
    return _without([no_dur(x.dur) and c in DEVICE_CATEGORIES
                     for x, c in zip(xs, cats, strict=True)], counts, xs, cats)


def no_dur(dur: float) -> bool:
    """A dur that was not written (``NO_DUR``, a negative zero), not a 0 that was."""
    return dur == 0 and math.copysign(1.0, dur) < 0


def refuse_undurated(path: str, events: list[Any]) -> None:
    """``TraceError`` where any of ``events`` (``Event``s) is a device event that wrote no dur,
    counted by name as the columns count them (``undurated``): a graph's kernel and busy time
    read from the others would be short of it without a word."""
    counts: dict[str, int] = {}
    undurated(counts, events, [e.cat for e in events])
    if counts:
        n = sum(counts.values())
        names = ", ".join(f"{name} x{k}" if k > 1 else name for name, k in counts.items())
        one = n == 1
        verb, time, them = ("writes", "its time is", "it") if one else ("write", "their times are", "them")
        raise TraceError(f"{path or 'trace'}: {n} device event{'' if one else 's'} (kernel, memcpy, memset) "
                         f"{verb} no dur: {time} not known, and the graph's kernel and busy times would be "
                         f"short of {them}: {names}")


def untimed(x: Any, cat: str) -> bool:
    """A device event or launch that carries no time."""
    return x.ts == 0 and x.dur == 0 and cat in UNTIMED_CATEGORIES


def timed(counts: dict[str, int], xs: list[Any], cats: list[str]) -> tuple[list[Any], list[str], int]:
    """``xs`` and their ``cats`` less the untimed device events and launches, counted by name
    in ``counts``; and how many of them were device events."""
    drop = [untimed(x, c) for x, c in zip(xs, cats, strict=True)]
    device = sum(c in DEVICE_CATEGORIES for c in compress(cats, drop))
    return (*_without(drop, counts, xs, cats), device)


def _without(drop: list[bool], counts: dict[str, int], xs: list[Any],
             cats: list[str]) -> tuple[list[Any], list[str]]:
    for x in compress(xs, drop):
        counts[x.name] = counts.get(x.name, 0) + 1
    keep = [not d for d in drop]
    return list(compress(xs, keep)), list(compress(cats, keep))
