"""The statistics policy (core/steady.py) on hand-built samples, with exact expectations
computed here from the rule as docs/statistics.md states it."""

from __future__ import annotations

import random
import statistics

import pytest

from inductor_bench.core import steady
from inductor_bench.core.steady import (
    MIN_STEADY,
    TAIL_FLOOR,
    TAIL_SIGMAS,
    from_left_out,
    limit_of,
    steady_mean,
)


def rule_limit(xs: list[float]) -> float:
    """The rule, written out: median + max(3.5 x 1.4826 x MAD, 5% of the median)."""
    med = statistics.median(xs)
    mad = statistics.median([abs(x - med) for x in xs])
    return med + max(3.5 * 1.4826 * mad, 0.05 * med)


def test_constants_are_what_the_docs_state():
    assert (TAIL_SIGMAS, TAIL_FLOOR, MIN_STEADY) == (3.5, 0.05, 5)


def test_stalled_iterations_are_left_out_and_the_rest_averaged():
    # the densenet case: 0.20-0.28 ms iterations and three stalls of 24, 24 and 97 ms
    rng = random.Random(3)
    xs = [rng.uniform(0.20, 0.28) for _ in range(97)] + [24.0, 24.0, 97.0]
    rng.shuffle(xs)
    st = steady.steady(xs)
    assert st.limit == pytest.approx(rule_limit(xs))
    assert sorted(xs[i] for i in st.left_out) == [24.0, 24.0, 97.0]
    clean = [x for x in xs if x < 1.0]
    assert st.mean(xs) == pytest.approx(sum(clean) / len(clean))
    assert 0.20 < steady_mean(xs) < 0.28  # the plain mean is 1.69 ms


def test_a_quiet_set_keeps_every_sample():
    xs = [1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.03, 0.97]
    st = steady.steady(xs)
    assert st.left_out == () and st.kept == tuple(range(8))
    # the floor: 5% over the median is never left out, however tight the set
    assert limit_of([1.0] * 9 + [1.05]) == pytest.approx(1.05)
    assert steady.steady([1.0] * 9 + [1.05]).left_out == ()
    assert steady.steady([1.0] * 9 + [1.06]).left_out == (9,)


def test_only_slow_samples_are_left_out():
    xs = [10.0] * 10 + [0.5]  # nothing makes an iteration faster than its work: kept
    assert steady.steady(xs).left_out == ()


def test_below_min_steady_samples_everything_is_kept():
    xs = [1.0, 1.0, 1.0, 50.0]
    st = steady.steady(xs)
    assert st.limit is None and st.left_out == () and st.mean(xs) == 13.25


def test_series_aligned_with_the_set_share_its_kept_samples():
    walls = [1.0, 1.1, 0.9, 1.0, 30.0, 1.0]
    kernel = [0.5, 0.6, 0.4, 0.5, 29.0, 0.5]
    st = steady.steady(walls)
    assert st.left_out == (4,)
    assert st.pick(kernel) == [0.5, 0.6, 0.4, 0.5, 0.5]
    assert st.mean(kernel) == pytest.approx(0.5)


def test_a_saved_set_is_rebuilt_from_its_left_out_indices():
    st = from_left_out(6, [4], limit=1.5)
    assert st.kept == (0, 1, 2, 3, 5) and st.left_out == (4,) and st.limit == 1.5


def test_means_over_one_set_add_up_exactly():
    # two kernels per iteration; their steady means add to the steady mean of their sum
    rng = random.Random(11)
    a = [rng.uniform(0.1, 0.2) for _ in range(50)]
    b = [rng.uniform(1.0, 2.0) for _ in range(50)]
    walls = [x + y + 0.05 for x, y in zip(a, b, strict=True)]
    walls[7] += 40.0
    st = steady.steady(walls)
    assert 7 in st.left_out
    assert st.mean(a) + st.mean(b) == pytest.approx(st.mean([x + y for x, y in zip(a, b, strict=True)]))


def test_a_stall_inside_a_small_kernel_leaves_its_iteration_out_whatever_the_walls_spread():
    # walls spread widely (a busy machine), so the wall rule alone keeps every iteration; one
    # iteration's small kernel took 2 ms instead of 0.1: 20x its own median, 20% of the wall
    rng = random.Random(5)
    walls = [rng.uniform(8.0, 14.0) for _ in range(30)]
    small = [0.1 + rng.uniform(-0.005, 0.005) for _ in range(30)]
    big = [w - s - 1.0 for w, s in zip(walls, small, strict=True)]
    small[7] = 2.0
    assert steady.steady(walls).left_out == ()
    st = steady.steady_iterations(walls, [small, big])
    assert st.left_out == (7,)
    assert st.mean(small) == pytest.approx((sum(small) - 2.0) / 29)


def test_a_small_kernels_jitter_below_the_excess_floor_leaves_nothing_out():
    walls = [10.0 + 0.01 * (i % 3) for i in range(20)]
    tiny = [0.006] * 20
    tiny[3] = 0.012  # doubled, but 0.006 ms is 0.06% of a 10 ms iteration
    assert steady.steady_iterations(walls, [tiny]).left_out == ()
    tiny[3] = 0.006 + 0.49  # 4.9% of the 10.01 ms median wall: below the wall's own floor, kept
    assert steady.steady_iterations(walls, [tiny]).left_out == ()
    tiny[3] = 0.006 + 0.51  # 5.1%: left out
    assert steady.steady_iterations(walls, [tiny]).left_out == (3,)


def test_when_the_parts_would_leave_fewer_than_five_the_walls_decide():
    walls = [1.0] * 10
    parts = [[0.1] * 10 for _ in range(2)]
    parts[0][0] = parts[0][1] = parts[1][2] = 0.5  # three of ten iterations: seven stay
    assert steady.steady_iterations(walls, parts).left_out == (0, 1, 2)
    parts[1][3] = parts[1][4] = parts[1][5] = 0.5  # six of ten: four would stay, too few
    assert steady.steady_iterations(walls, parts).left_out == ()


def test_on_a_window_split_between_two_speeds_the_clocks_verdict_holds_for_the_trace():
    # synthetic, shaped like a CI window of models/mlp.py --train: 11 iterations at one speed
    # and 10 at another; each trace reading 0.1 ms over the clock's, and one fast iteration
    # preempted between its marker and its clock reading (+2.2 ms in the trace alone)
    clock = [2.80 + 0.01 * i for i in range(11)] + [5.00 + 0.01 * i for i in range(10)]
    walls = [c + 0.1 for c in clock]
    walls[3] += 2.2
    slow = tuple(range(11, 21))
    # the plain rule on each reading alone: the clock's median lies among the fast iterations
    # and leaves the slow ones out; the trace's lies among the slow ones and keeps every
    # iteration (the rule of other sets finds that median a stall: the slow ones and the
    # preempted one out)
    assert steady.steady(clock, steady.plain_limit_of).left_out == slow
    assert steady.steady(walls, steady.plain_limit_of).left_out == ()
    assert steady.steady(walls).left_out == (3, *slow)
    st = steady.steady_iterations(walls, [], clock)
    assert st.left_out == slow
    fast = [clock[i] + 0.1 for i in range(11) if i != 3] + [clock[3] + 2.3]
    assert st.mean(walls) == pytest.approx(sum(fast) / 11)
    assert steady.steady_iterations(walls, []).left_out == ()  # without the clock: as before
    assert steady.steady_iterations(walls, [], clock[:-1]).left_out == ()  # a clock not aligned: unused


def test_the_clocks_verdict_with_the_parts_cannot_leave_fewer_than_five():
    walls = [1.0] * 8
    part = [0.5] + [0.1] * 7  # iteration 0's kernel 0.4 ms over its median: left out
    clock = [1.0] * 5 + [9.0] * 3  # three slow by the clock
    assert steady.steady(clock).left_out == (5, 6, 7)
    assert steady.steady_iterations(walls, [part]).left_out == (0,)
    assert steady.steady_iterations(walls, [], clock).left_out == (5, 6, 7)
    assert steady.steady_iterations(walls, [part], clock).left_out == ()  # four would stay: the walls decide


def test_a_graph_whose_parts_rule_found_too_many_says_its_kernels_hold_the_stalls():
    """Synthetic: 20 iterations; one kernel stalls (+3 ms) in iterations 0-7, the other in 8-15.
    Each kernel's median is its quiet time, so the parts' rule finds 16 disturbed and 4 would be
    left, under MIN_STEADY: the walls alone decide (they spread too widely to leave any out),
    which the result keeps as ``abandoned`` and the report warns of, naming the count."""
    from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
    from inductor_bench.core.step import disturbances, parts_rule_abandoned

    a = [1.0 + (3.0 if i < 8 else 0.0) for i in range(20)]
    b = [1.0 + (3.0 if 8 <= i < 16 else 0.0) for i in range(20)]
    walls = [x + y + 0.2 for x, y in zip(a, b, strict=True)]
    busy = [x + y for x, y in zip(a, b, strict=True)]
    kept = steady.steady_iterations(walls, [a, b, [w - u for w, u in zip(walls, busy, strict=True)]])
    assert kept.abandoned == tuple(range(16)) and kept.kept == tuple(range(20))
    assert steady.steady_iterations(walls, [a, [1.0] * 20]).abandoned == ()  # 12 left: the rule holds
    g = GraphResult(id="0-forward", role="forward", frame_id=0, iterations=20, wall_samples_ms=walls,
                    busy_samples_ms=busy, kernels=[KernelStat(name="k_a", category="cpp_pointwise", calls=1,
                                                              ms=0.0, samples_ms=a),
                                                   KernelStat(name="k_b", category="cpp_pointwise", calls=1,
                                                              ms=0.0, samples_ms=b)])
    assert parts_rule_abandoned(g) == 16
    (line,) = disturbances(BreakdownResult(model="m", device="cpu", graphs=[g]))
    assert line.startswith("0-forward was measured while 16 of its 20 iterations had a kernel or an idle gap "
                           "far slower than its median, too many to leave out")


def test_a_loop_of_alternating_steps_keeps_both_kinds_a_repeated_call_does_not():
    """Synthetic: ten steps alternating 1 ms and 3 ms (an optimizer step every other micro-batch).
    As a loop's steps (analyze) both kinds are the loop's own work: all kept, a 2 ms typical step.
    As one call repeated (a step time), a slower half is a stall: the faster half is kept."""
    from inductor_bench.core.steady import mean, steady, steady_held

    walls = [1.0, 3.0] * 5
    kept = steady_held(walls, [True] * 10)
    assert kept == list(range(10)) and mean([walls[i] for i in kept]) == 2.0
    assert steady(walls).kept == (0, 2, 4, 6, 8)


def test_a_window_whose_iterations_mostly_stalled_keeps_its_fast_ones():
    """Shaped like a ViT's backward profiled on a loaded 2-core machine (timm vit_tiny, --train,
    one thread): 11 of 20 iterations ran at 2.3x (the core shared), one of them with a GEMM
    stalled 20 ms; 9 ran at full speed. The median wall lies among the stalled ones, so the
    median's own margin kept stalled iterations (there: the stalled GEMM, ranked first); the
    iterations of one graph repeat the same work, so the faster half's limit judges them."""
    fast = [12.0, 11.8, 11.7, 11.8, 11.9, 12.8, 13.2, 11.4, 10.4]
    slow = [37.0, 123.4, 29.6, 40.7, 29.7, 27.6, 26.3, 31.8, 27.3, 35.1, 43.1]
    walls = slow + fast
    gemm = [20.16] + [0.06] * 19  # the stall in iteration 0
    rest = [w - g - 1.0 for w, g in zip(walls, gemm, strict=True)]
    busy = [w - 1.0 for w in walls]
    st = steady.steady_profiled(walls, busy, [gemm, rest])
    assert st.kept == tuple(range(11, 20))
    assert st.mean(gemm) == pytest.approx(0.06)
    assert st.mean(walls) == pytest.approx(sum(fast) / 9)
    # the median's own margin (the rule for a loop's steps) keeps nine stalled iterations
    assert set(range(2, 11)) <= set(steady.steady_iterations(walls, [gemm, rest]).kept)
