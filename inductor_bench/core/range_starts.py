"""The start of a ``record_function`` range that a trace recorded with ``with_stack=True``
wrote at its end; pure, no torch.

Under the Python tracer, torch 2.5 writes each ``ProfilerStep#N`` range (``prof.step()``'s,
opened at the end of one ``step()`` call and closed in the next, or a ``record_function`` of
that name) with the start of the Python call that closed it. The range then covers that call
alone (a step of 5 ms reads 70 µs), and everything that ran in the step falls between steps.
The loop's other ranges, opened and closed the same way, are written right (seen on torch
2.5.1: ``tests/fixtures/cpu_loop/stack-torch-2.5.1.json.gz``); the rule below does not lean on
the name.

Such a range is known by its start: it is the start of a call of the profiler's own Python
(``torch/profiler/``, ``torch/autograd/profiler``), to the nanosecond, and that call holds
the whole range. A range opened inside a call cannot start there: it starts inside the
built-in ``_record_function_enter_new`` that opened it, after the call began.

Its start is given back from that built-in: each range the trace wrote correctly starts
inside the built-in that opened it, which is so claimed; the built-ins on the thread that no
range claims are the opening calls of the ranges written at their end, paired with them as
ranges nest (the latest opened is the first closed). The start is the built-in's, a few µs
before the range's own (the built-in's time to create it).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from itertools import compress

from .column_types import Events, Table
from .trace import COMPILED_CALL

# the built-in that opens a range, as the columns name it (apart from the other built-ins)
RANGE_ENTER = "<built-in: _record_function_enter>"
SAME_TIME_US = 0.005  # two clocks' readings of one moment, as the trace writes them (ns)
PROFILER_FILES = ("torch/profiler/", "torch/autograd/profiler")  # the profiler's own Python


@dataclass
class Ranges:
    """What of a trace's columns (``columns.TraceColumns``) the restoring reads and mends."""

    names: Table
    python: Events
    op: Events
    markers: list[tuple[str, float, float, int]]  # mended in place
    regions: list[tuple[int, float, float, int]]  # mended in place


def restore_range_starts(c: Ranges) -> list[str]:
    """Give every range of ``c`` (its markers and regions) written at its end the start of
    the call that opened it. Returns the names of those it did, by start."""
    if not len(c.python) or not (c.markers or c.regions):
        return []
    ranges = [(m[1], m[2], m[3]) for m in c.markers] + [(r[1], r[2], r[3]) for r in c.regions]
    late = _written_at_end(c, ranges)
    if not late:
        return []
    starts = {}
    for thread in {ranges[i][2] for i in late}:
        starts.update(_opened(c, ranges, [i for i in late if ranges[i][2] == thread], thread))
    n, names = len(c.markers), []
    for i, start in sorted(starts.items(), key=lambda item: item[1]):
        if i < n:
            name, _, end, thread = c.markers[i]
            c.markers[i] = (name, start, end, thread)
        else:
            name_id, _, end, thread = c.regions[i - n]
            c.regions[i - n] = (name_id, start, end, thread)
            name = c.names.values[name_id]
        names.append(name)
    return names


def _written_at_end(c: Ranges, ranges: list[tuple[float, float, int]]) -> list[int]:
    """The indices of the ranges that start with a call of the profiler's Python that holds them."""
    values = c.names.values
    own = {i for i, name in enumerate(values) if isinstance(name, str) and _profilers(name)}
    py = c.python
    picked = list(compress(range(len(py)), map(own.__contains__, py.name)))
    calls: dict[int, list[tuple[float, float]]] = {}
    for j in picked:
        calls.setdefault(py.where[j], []).append((py.ts[j], py.ts[j] + py.dur[j]))
    for held in calls.values():
        held.sort()
    late = []
    for i, (start, end, thread) in enumerate(ranges):
        held = calls.get(thread, [])
        k = bisect_left(held, (start - SAME_TIME_US,))
        while k < len(held) and held[k][0] <= start + SAME_TIME_US:
            if held[k][1] >= end - SAME_TIME_US:
                late.append(i)
                break
            k += 1
    return late


def _profilers(name: str) -> bool:
    """Whether a Python call's name is a frame of the profiler's own Python (a path as the
    tracer writes it: relative to ``sys.path``, or absolute)."""
    file = name.split("(", 1)[0].replace("\\", "/")
    return not name.startswith("<") and any(("/" + part) in ("/" + file) for part in PROFILER_FILES)


def _opened(c: Ranges, ranges: list[tuple[float, float, int]], late: list[int],
            thread: int) -> dict[int, float]:
    """Range index -> the start of the built-in that opened it, for the ``late`` ranges of
    ``thread``: the built-ins no other range starts in, paired as ranges nest."""
    py, enter = c.python, c.names.get(RANGE_ENTER)
    if enter is None:
        return {}
    on = [j for j in compress(range(len(py)), map(enter.__eq__, py.name)) if py.where[j] == thread]
    enters = sorted((py.ts[j], py.ts[j] + py.dur[j]) for j in on)
    late_set = set(late)
    begun = sorted(s for i, (s, _, t) in enumerate(ranges) if t == thread and i not in late_set)
    begun += _compiled_call_starts(c, thread)
    begun.sort()
    free = [b for b in enters if bisect_right(begun, b[1]) == bisect_left(begun, b[0])]
    moments = sorted([(b[0], 0, -1) for b in free] + [(ranges[i][1], 1, i) for i in late])
    stack: list[float] = []
    out: dict[int, float] = {}
    for t, closes, i in moments:
        if not closes:
            stack.append(t)
        elif stack:
            out[i] = stack.pop()
    return out


def _compiled_call_starts(c: Ranges, thread: int) -> list[float]:
    """The starts of the compiled graphs' call records on ``thread`` that a trace wrote as
    ranges and the columns keep as ops (a ``record_function`` of Inductor's)."""
    values = c.names.values
    calls = {i for i, name in enumerate(values) if isinstance(name, str) and COMPILED_CALL.match(name)}
    if not calls:
        return []
    op = c.op
    picked = compress(range(len(op)), map(calls.__contains__, op.name))
    return [op.ts[j] for j in picked if op.where[j] == thread]
