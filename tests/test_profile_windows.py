"""Profiler windows: how many are run, which one is kept, and how the report shows them.
Pure: no torch."""

from __future__ import annotations

import time

import pytest

from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.runner.profile import per_call_estimate
from inductor_bench.runner.window_plan import (
    AGREE_REL,
    AGREE_WINDOWS,
    DEFAULT_WINDOWS,
    MAX_WINDOWS_S,
    auto_iterations,
    fastest_window,
    plan_windows,
    replanned,
    windows_agree,
)


def test_a_first_window_much_faster_than_the_warm_up_calls_plans_the_windows_again():
    """Seen on a loaded machine: the fastest of three warm-up calls at 103.9 ms for a 0.43 ms
    graph planned 20 iterations; the first window's fastest, 0.42 ms, asks for 100 (at most).
    Not for a count the user fixed, nor where the first window is no more than twice as many."""
    assert auto_iterations(0.1039) == 20
    assert replanned(20, [0.103, 0.00042, 0.0005], fixed=False) == 100
    assert replanned(20, [0.00042], fixed=True) is None
    assert replanned(20, [0.02], fixed=False) is None  # 13 iterations: no more than planned
    assert replanned(20, [0.0065], fixed=False) is None  # ceil(0.25 / 0.0065) = 39 < 40
    assert replanned(20, [0.006], fixed=False) == 42
    assert replanned(20, [], fixed=False) is None


def test_fastest_window_is_the_lowest_median_and_the_first_on_a_tie():
    assert fastest_window([2.0, 1.5, 2.1, 1.5]) == 1
    assert fastest_window([1.0]) == 0
    with pytest.raises(ValueError):
        fastest_window([])


@pytest.mark.parametrize(
    ("requested", "iterations", "per_call_s", "expected"),
    [
        (5, 200, 0.0015, 5),  # 0.3 s per window: all five
        (5, 10, 1.0, 3),  # 10 s per window: three fit in 30 s
        (5, 10, 5.0, 1),  # 50 s per window: still one
        (0, 100, 0.001, 1),  # at least one
        (7, 100, 0.0, 7),  # no estimate: as asked
    ],
)
def test_plan_windows(requested, iterations, per_call_s, expected):
    assert plan_windows(requested, iterations, per_call_s) == expected


def test_window_budget_constants():
    assert DEFAULT_WINDOWS >= 3  # a majority of sessions must be able to outvote a slow one
    assert MAX_WINDOWS_S >= 10
    assert 3 <= AGREE_WINDOWS <= DEFAULT_WINDOWS and AGREE_REL <= 0.05


@pytest.mark.parametrize(
    ("medians", "agree"),
    [
        ([1.00, 1.02, 1.029], True),  # three within 3% of the fastest: enough
        ([1.00, 1.02], False),  # too few to tell
        ([1.00, 1.02, 1.40], False),  # one slow session (+40%, as page faults make them)
        ([1.00, 1.031, 1.00], False),  # just over 3%
        ([1.40, 1.00, 1.01, 1.02], False),  # the slow one stays in the set: all run
        ([0.0, 0.0, 0.0], False),
    ],
)
def test_windows_stop_early_only_when_they_agree(medians, agree):
    assert windows_agree(medians) is agree


def _result(windows_ms, faults, window):
    k = KernelStat(name="aten::mm", category="extern_gemm", calls=1, ms=1.0, samples_ms=[1.0] * 10)
    g = GraphResult(
        id="0-backward",
        role="backward",
        iterations=10,
        wall_ms=1.1,
        wall_samples_ms=[1.1] * 10,
        busy_ms=1.0,
        kernel_ms=1.0,
        categories={"extern_gemm": 1.0},
        kernels=[k],
        windows_ms=windows_ms,
        window_faults=faults,
        window=window,
    )
    return BreakdownResult(model="m", graphs=[g])


def test_report_names_the_slow_windows_left_out():
    text = render_breakdown(_result([1.5, 2.1, 1.45, 1.52, 1.6], [3, 250, 4, 2, 2], 2))
    assert "profiled in 5 profiler sessions and the fastest is reported" in text
    # the kept window's time is the table's (1.100 ms); the others relative to the kept one
    # on the worker's clock (1.5 / 1.45, 2.1 / 1.45, ...), page faults where over 10% slower and
    # enough to account for a tenth of it at 3 µs each (250: 0.75 ms of 0.65; 2: 6 µs of 150)
    assert (
        "(0-backward 1.100 ms, on the worker's clock 1.450 ms and the others +3%, +45% (250 page "
        "faults per iteration), +5%, +10%)" in text
    )


def test_a_slow_window_is_blamed_on_the_load_it_ran_under_not_on_a_fault_or_two():
    """Synthetic, after a loaded run: a window at 97.6 ms an iteration against the kept 0.424 ms,
    with 1.65 page faults per iteration (at about 3 µs each, no cause of 97 ms) while parallel
    work took 110x as long on all threads as on one: the load is named, the faults are not. A
    window as slow under a quiet machine, with 250 faults, has its faults named."""
    from inductor_bench.core.load import Load

    r = _result([97.6, 0.424], [1.65, 0.5], 1)
    busy = Load(others_cores=0.2, steal_pct=0.0, cores=2, parallel_x=109.99)
    r.graphs[0].window_load = [busy, None]
    text = render_breakdown(r)
    assert "the others +22919% (parallel work 110.0x slower on all threads than on one))" in text
    assert "page fault" not in text
    r = _result([1.9, 1.3], [250, 0], 1)
    r.graphs[0].window_load = [Load(others_cores=0.1, steal_pct=0.0, cores=2), None]
    assert "the others +46% (250 page faults per iteration))" in render_breakdown(r)


def test_the_kept_window_on_the_workers_clock_is_the_tables_iterations():
    """Synthetic: the worker ranks its window by the parts of its own records (every host op by
    name), which left out iteration 9 (an op at 0.07 ms against its 0.01, over the floor of 5%
    of the 1.0 ms median), whose clock reading 1.04 ms is inside the clock's limit (1.104 ms);
    the table's parts (kernels, call sites, idle) kept it. Each trace reading is 0.1 ms above
    its clock reading (the marker's own cost). The line showed the ranking figure, 1.000 ms,
    0.104 ms under the table's 1.104 ms over other iterations; it shows the table's iterations
    on the worker's clock, 10.04 / 10 = 1.004 ms, the marker's 0.1 ms under the table's, and
    names the ranking figure apart, the other window's +30% relative to it (1.3 / 1.0)."""
    from inductor_bench.core.window_figure import window_figure

    clock = [0.98, 1.0, 1.02] * 3 + [1.04]
    host_op = [0.01] * 9 + [0.07]
    ranked = window_figure(clock, [host_op])
    assert ranked == pytest.approx(9.0 / 9)  # iteration 9 left out by the worker's parts
    r = _result([ranked, 1.3], [None, None], 0)
    g = r.graphs[0]
    g.clock_samples_ms = clock
    g.wall_samples_ms = [c + 0.1 for c in clock]
    g.wall_ms = sum(g.wall_samples_ms) / 10  # 1.104: the table kept all 10
    g.left_out = []
    text = render_breakdown(r)
    assert "(0-backward 1.104 ms, on the worker's clock 1.004 ms, ranked at 1.000 ms and the others +30%)" in text
    assert "; ranked at: the figure the worker ranked the windows by, each window's steady iterations" in text


def test_report_says_how_close_the_other_windows_were():
    text = render_breakdown(_result([1.50, 1.52, 1.49], [None, None, None], 2))
    assert "(0-backward 1.100 ms, on the worker's clock 1.490 ms and the others +1%, +2%)" in text
    assert "page faults" not in text


@pytest.mark.parametrize(
    ("table_ms", "windows_ms"),
    [
        (0.576, [0.539, 0.569, 1.181]),  # mlp: a window 6% slower on its clock read 0.569 ms
        (2.230, [103.4, 226.4]),  # transformer_block --train under load: +119% meant 226 ms
    ],
)
def test_the_others_are_relative_to_the_kept_window_on_their_own_clock(table_ms, windows_ms):
    """Synthetic, with the figures of two runs (torch 2.13 CPU, 2026-12-07) whose table read
    the kept window from its trace and whose windows were timed on the worker's clock: the
    percentages were printed beside the table's figure alone, so "+6%" read as 0.611 ms where
    that window ran 0.569 ms, faster than the printed 0.576. The line gives the kept window's
    figure on the clock the percentages are on."""
    r = _result(windows_ms, [None] * len(windows_ms), 0)
    r.graphs[0].wall_ms = table_ms
    kept = windows_ms[0]
    others = ", ".join(f"+{100 * (w / kept - 1):.0f}%" for w in windows_ms[1:])
    assert others in ("+6%, +119%", "+119%")
    expected = f"(0-backward {table_ms:.3f} ms, on the worker's clock {kept:.3f} ms and the others {others})"
    assert expected in render_breakdown(r)


def test_results_without_windows_still_render():
    """Results saved before windows existed have none: no windows line, no error."""
    text = render_breakdown(_result([], [], None))
    assert "windows:" not in text
    assert "aten::mm" in text


def test_windows_round_trip_through_json():
    r = _result([1.5, 2.1], [3.0, None], 0)
    back = BreakdownResult.from_dict(r.to_dict())
    g = back.graphs[0]
    assert (g.windows_ms, g.window_faults, g.window) == ([1.5, 2.1], [3.0, None], 0)


def test_the_pace_that_sizes_the_windows_is_the_fastest_call():
    """Synthetic calls: two of three stalled by 60 ms sleeps, one by 1 ms. The pace is the fast
    call's, so a stall in the warm-up sizes neither the iterations nor the windows down (the
    median of the three, a stalled call, gave 20 iterations where 100 fit)."""
    sleeps = iter([0.06, 0.001, 0.06])
    pace = per_call_estimate(lambda: time.sleep(next(sleeps)), calls=3)
    assert 0.001 <= pace < 0.03
    assert auto_iterations(pace) > auto_iterations(0.06)


def test_a_fraction_of_a_page_fault_per_iteration_is_not_called_zero():
    """Seen on a loaded 2-core machine (torch 2.13 CPU, 2026-12-07), graph_break_script.py's
    0.010 ms graph: a window at +44% with 0.29 page faults per iteration (0.29 x 3 µs = 0.87 µs,
    over a tenth of its 4.4 µs slowdown) read ``0 page faults per iteration``."""
    r = _result([0.0146, 0.0101], [0.29, 0.31], 1)
    assert "the others +45% (0.29 page faults per iteration))" in render_breakdown(r)
    r = _result([0.0146, 0.0101], [1.0, 0.0], 1)
    assert "(1 page fault per iteration))" in render_breakdown(r)
    r = _result([0.0146, 0.0101], [1.46, 0.0], 1)
    assert "(1.5 page faults per iteration))" in render_breakdown(r)
