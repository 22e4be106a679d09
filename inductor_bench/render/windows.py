"""The windows line of a breakdown: how many profiler sessions each graph had, in how many
processes, the kept one's time and machine speed, and how much slower the others were."""

from __future__ import annotations

from ..core.load import SPEED_SLOW
from ..core.results import BreakdownResult, GraphResult
from ..core.window_figure import table_iterations_clock_ms
from . import format as fmt

# A window this much slower than the kept one has its cause named: the load on the machine
# while it ran, where that was disturbed, and its page faults, where they can account for
# FAULTS_SHARE of the slowdown or more at FAULT_MS each (docs/breakdown.md: about 256 faults,
# each a fresh page the kernel zeroes, made a session 0.5-0.8 ms slower per iteration).
WINDOW_SPREAD = 0.10
FAULT_MS = 0.003
FAULTS_SHARE = 0.10


def windows_note(r: BreakdownResult) -> str | None:
    """One line on the profiler windows: how many, in how many processes, the kept one's time
    (the table's, from the trace), and on the worker's clock, which ranks the windows (each
    window's own figure of its iterations), the kept one's time and how much slower the others
    were than it. The two clocks differ (0.576 ms in the table, 0.539 ms on the worker's
    clock), so the percentages name theirs and the figure they are relative to."""
    gs = [g for g in r.measured() if g.windows_ms and g.window is not None]
    if not gs:
        return None
    counts = sorted({len(g.windows_ms) for g in gs})
    n = str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
    if counts == [1]:
        return "windows: each graph was profiled in one profiler session (--windows 1)."
    procs = sorted({_processes(g) for g in gs})
    where = "" if procs == [1] else f" in {_span(procs)} fresh processes, one after the other,"
    parts = [_graph_windows(g) for g in gs]
    head = f"windows: each graph was profiled in {n} profiler sessions{where} and the fastest is reported"
    return f"{head} ({'; '.join(parts)}){_waited(gs)}{_ranked_legend(gs)}."


def _ranked_legend(gs: list[GraphResult]) -> str:
    """What ``ranked at`` is, where a graph's line names it (``_graph_windows``)."""
    if all(fmt.ms(_kept_clock(g)) == fmt.ms(g.windows_ms[g.window or 0]) for g in gs):
        return ""
    return ("; ranked at: the figure the worker ranked the windows by, each window's steady iterations"
            " on its clock as it judged them, by the parts of its own profiler records (every host op"
            " by name, and idle, not the table's kernels and call sites), which kept other iterations"
            " than the table (docs/statistics.md)")


def _waited(gs: list[GraphResult]) -> str:
    """How long the workers waited for the machine's full speed before windows (runner/speed.py)."""
    waited = sum(g.speed_waited_s for g in gs)
    if waited < 0.05:
        return ""
    return f"; {waited:.1f} s spent waiting for the machine's full speed before windows"


def _speed(g: GraphResult) -> str:
    """The kept window's machine speed where it was slow (fixed work took longer than the fastest)."""
    i = g.window or 0
    speed = g.window_speed[i] if i < len(g.window_speed) else None
    if speed is None or speed >= 1 - SPEED_SLOW:
        return ""
    return f" (the machine at {100 * speed:.0f}% of its full speed)"


def _processes(g: GraphResult) -> int:
    return len(set(g.window_process)) or 1


def _span(values: list[int]) -> str:
    return str(values[0]) if len(values) == 1 else f"{values[0]}-{values[-1]}"


def _graph_windows(g: GraphResult) -> str:
    """``0-forward 0.801 ms, on the worker's clock 0.783 ms and the others +1%, +3%``; with
    several processes, where each ran: ``0-forward 0.801 ms in process 2, on the worker's clock
    0.783 ms and the others +12%, +13% in process 1, +1% in process 2``. The first figure is
    the table's; the second the same iterations on the worker's clock (``_kept_clock``). The
    percentages are the other windows' ranking figures relative to the kept one's; where that
    reads otherwise than the second figure (its own records' parts kept other iterations than
    the table's), it is named: ``on the worker's clock 3.097 ms, ranked at 5.400 ms and the
    others +4%``."""
    kept = g.windows_ms[g.window or 0]
    others = {
        i: f"+{100 * (w / kept - 1):.0f}%" + _cause(g, i)
        for i, w in enumerate(g.windows_ms)
        if i != g.window and kept > 0
    }
    same = fmt.ms(_kept_clock(g))
    ranked = "" if fmt.ms(kept) == same else f", ranked at {fmt.ms(kept)} ms"
    clock = f"on the worker's clock {same} ms{ranked} and the others"
    if _processes(g) == 1 or len(g.window_process) != len(g.windows_ms):
        return f"{g.id} {fmt.ms(g.wall_ms)} ms{_speed(g)}, {clock} {', '.join(others.values())}"
    by_process = [
        ", ".join(v for i, v in others.items() if g.window_process[i] == p) + f" in process {p + 1}"
        for p in sorted(set(g.window_process))
        if any(g.window_process[i] == p for i in others)
    ]
    kept_in = g.window_process[g.window or 0] + 1
    head = f"{g.id} {fmt.ms(g.wall_ms)} ms in process {kept_in}{_speed(g)}"
    return f"{head}, {clock} {', '.join(by_process)}"


def _kept_clock(g: GraphResult) -> float:
    """The kept window on the worker's clock: the readings of the iterations the table kept
    (the window's ranking figure where the clock was not saved with the result)."""
    same = None
    if len(g.clock_samples_ms) == len(g.wall_samples_ms):
        same = table_iterations_clock_ms(g.clock_samples_ms, g.left_out)
    return g.windows_ms[g.window or 0] if same is None else same


def _cause(g: GraphResult, i: int) -> str:
    """What made a window far slower than the kept one: the load on the machine while it ran,
    where that was disturbed, and its page faults per iteration, where they are enough to
    account for FAULTS_SHARE of the slowdown (one or two faults are no cause of a 4x window)."""
    kept = g.windows_ms[g.window or 0]
    excess = g.windows_ms[i] - kept
    if kept <= 0 or excess <= kept * WINDOW_SPREAD:
        return ""
    load = g.window_load[i] if i < len(g.window_load) else None
    causes = [load.brief()] if load is not None and load.disturbed else []
    faults = g.window_faults[i] if i < len(g.window_faults) else None
    if faults and faults * FAULT_MS >= FAULTS_SHARE * excess:
        causes.append(_faults_per_iteration(faults))
    return f" ({'; '.join(causes)})" if causes else ""


def _faults_per_iteration(faults: float) -> str:
    """``250 page faults per iteration``; under 10, two figures (``0.29``, ``1.5``), as a short
    graph's window may be slowed by well under one an iteration, which whole numbers call 0."""
    count = f"{faults:.0f}" if faults >= 10 else f"{faults:.2g}"
    return f"{count} page fault{'' if count == '1' else 's'} per iteration"
