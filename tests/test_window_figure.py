"""The figure the profiler windows are ranked by judges each window's iterations with their
parts, as the graph table judges the kept window's (synthetic samples)."""

from __future__ import annotations

import torch
from torch.profiler import profile, record_function

from inductor_bench.core.breakdown import MARKER
from inductor_bench.core.window_figure import iteration_parts, window_figure
from inductor_bench.runner.window_parts import session_parts
from inductor_bench.runner.window_plan import fastest_window

MS = 1_000_000  # the profiler's nanoseconds in a millisecond


def _stalled_window() -> tuple[list[float], list[list[float]]]:
    """Synthetic: 5 iterations at 2 ms, then 15 stalled at 14, 15 or 16 ms, each stall in one of
    5 kernels (0.3 ms each when not stalled): most of the window stalled, each kernel rarely."""
    clock = [2.0] * 5 + [14.0 + m % 3 for m in range(15)]
    kernels = [[0.3] * 20 for _ in range(5)]
    for m in range(15):
        kernels[m % 5][5 + m] = 0.3 + clock[5 + m] - 2.0
    return clock, kernels


def test_a_window_stalled_in_most_iterations_reads_its_steady_ones():
    clock, kernels = _stalled_window()
    # the clock alone: its median 14.5 ms and margin (MAD 1.0 ms, 5.19 ms) keep all 20
    assert window_figure(clock) == (5 * 2.0 + 5 * 14 + 5 * 15 + 5 * 16) / 20  # 11.75
    # with the parts, each stalled iteration has a kernel 12-14 ms over its median (0.3 ms)
    assert window_figure(clock, kernels) == 2.0


def test_windows_are_ranked_as_the_table_would_rank_them():
    clock, kernels = _stalled_window()
    even = [5.0] * 20  # synthetic: a window at 5 ms in every iteration
    assert fastest_window([window_figure(clock), window_figure(even)]) == 1  # ranked by the stalls
    assert fastest_window([window_figure(clock, kernels), window_figure(even, [[1.0] * 20])]) == 0


def test_parts_of_misaligned_length_are_not_used():
    clock, kernels = _stalled_window()
    assert window_figure(clock, [k[:19] for k in kernels]) == 11.75


def test_iteration_parts_by_name_and_idle():
    markers = [(0, 10 * MS), (20 * MS, 30 * MS)]
    ops = [
        ("a", 1 * MS, 3 * MS), ("b", int(1.5 * MS), 2 * MS),  # b inside a: not idle time twice
        ("c", 4 * MS, 5 * MS),
        ("restore", 12 * MS, 15 * MS),  # between the iterations: no part of either
        ("a", 21 * MS, 26 * MS), ("c", 27 * MS, 28 * MS), ("c", 28 * MS, 29 * MS),  # c twice: summed
    ]
    assert iteration_parts(markers, ops) == [[2.0, 5.0], [0.5, 0.0], [1.0, 2.0], [7.0, 3.0]]


def test_session_parts_read_from_a_real_profiler_session():
    x = torch.randn(64, 64)
    with profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for _ in range(3):
            torch.add(x, 1)  # outside the markers
            with record_function(MARKER):
                torch.mm(x, x)
    parts = session_parts(prof, 3)
    assert parts and all(len(p) == 3 for p in parts)
    assert all(v >= 0 for p in parts for v in p)
    assert session_parts(prof, 4) == []  # not one marker per iteration: the clock alone
