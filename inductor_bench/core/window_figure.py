"""The figure the profiler windows are ranked by: the worker's clock reading of each iteration,
judged as the graph table judges the kept window's iterations (``steady_iterations`` with the
iteration's parts, ``core/steady.py``), so the window kept is the one whose steady iterations
were fastest by the rule the table's figure is the mean of.

The walls alone are not enough on a loaded machine: where most iterations of a window were
stalled, the median and its margin keep them all (a window of 10 iterations of
``models/transformer_block.py``'s forward, 2.05-103.6 ms, read 17.3 ms), while the parts
rule leaves out each iteration with a part far beyond that part's own median, and the table
read the mean of the few left, 2.2 ms: the windows were ranked by a figure the stalls decided.

The parts are the profiler's own records of the session: each op's time in each iteration,
by its name (an op called several times in an iteration: their sum), and the time between the
iteration's outermost ops. Pure Python; no torch.
"""

from __future__ import annotations

from collections.abc import Sequence

from .steady import limit_of, mean, steady_iterations

# (start, end) of one record, in the profiler's nanoseconds
Span = tuple[int, int]


def iteration_parts(markers: Sequence[Span], ops: Sequence[tuple[str, int, int]]) -> list[list[float]]:
    """One series per op name (ms, aligned with ``markers``, the iterations in order) and
    last the idle time of each iteration: its span less its outermost ops'. ``ops``: (name,
    start, end) of every record inside the session but the iterations' markers."""
    by_name: dict[str, list[float]] = {}
    busy = [0] * len(markers)
    outer_end = [m0 for m0, _ in markers]
    i = 0
    for name, s, e in sorted(ops, key=lambda o: (o[1], -o[2])):
        while i < len(markers) and markers[i][1] <= s:  # the iterations that end before it starts
            i += 1
        if i == len(markers):
            break
        if s < markers[i][0] or e > markers[i][1]:  # between iterations, or around one
            continue
        by_name.setdefault(name, [0.0] * len(markers))[i] += (e - s) / 1e6
        if s >= outer_end[i]:  # an outermost op: not inside the one before
            busy[i] += e - s
            outer_end[i] = e
    idle = [(m1 - m0 - b) / 1e6 for (m0, m1), b in zip(markers, busy, strict=True)]
    return [*by_name.values(), idle]


def window_figure(clock_ms: Sequence[float], parts: Sequence[Sequence[float]] = ()) -> float:
    """The mean of a window's steady iterations on the worker's clock, judged by the clock and
    the parts (none: the clock alone), as the table's figure is judged."""
    kept = steady_iterations(clock_ms, [p for p in parts if len(p) == len(clock_ms)], limit=limit_of)
    return mean(kept.pick(clock_ms))


def table_iterations_clock_ms(clock_ms: Sequence[float], left_out: Sequence[int]) -> float | None:
    """The kept window's figure on the worker's clock as the windows line shows it: the mean of
    the clock readings of the iterations the graph table kept (all but ``left_out``), so it
    and the table's figure are the same iterations on two clocks. The worker ranked the window
    by its own records' parts (``window_figure``), which are not the table's (its kernels, call
    sites and idle time, ``core/parts.py``), and may have kept other iterations. None where the
    clock was not recorded."""
    out = set(left_out)
    kept = [c for i, c in enumerate(clock_ms) if i not in out]
    return mean(kept) if kept else None
