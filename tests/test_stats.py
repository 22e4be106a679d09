"""The significance rule of stats.py on hand-built samples, with exact expectations."""

from __future__ import annotations

import math

import pytest

from inductor_bench.core.devices import backend
from inductor_bench.core.stats import (
    MAD_TO_SIGMA,
    MIN_REL_CHANGE,
    MIN_SAMPLES,
    NOISE_K,
    SIGNIFICANT,
    TOO_FEW,
    WITHIN_NOISE,
    compare_samples,
    judge,
    sum_samples,
    summarize,
)

# Five samples around 10 ms: median 10, deviations 1, .5, 0, .5, 1 -> MAD 0.5.
SPREAD = [9.0, 9.5, 10.0, 10.5, 11.0]


def shifted(samples: list[float], by: float) -> list[float]:
    return [x + by for x in samples]


def test_constants_are_what_the_docs_state():
    assert (MIN_SAMPLES, NOISE_K, MIN_REL_CHANGE) == (5, 3.0, 0.05)
    assert (backend("cpu").min_rel_change, backend("cuda").min_rel_change) == (0.10, 0.05)
    assert pytest.approx(1 / 0.6744897501960817, abs=1e-4) == MAD_TO_SIGMA


def test_summary_is_robust_to_an_outlier():
    s = summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert (s.n, s.median, s.mad, s.min, s.max) == (5, 3.0, 1.0, 1.0, 100.0)
    assert s.sigma == pytest.approx(1.4826)
    assert s.spread_pct == pytest.approx(100 * 1.4826 / 3.0)


def test_summary_of_no_samples_uses_the_fallback():
    s = summarize([], fallback=2.5)
    assert (s.n, s.median, s.mad) == (0, 2.5, 0.0)
    assert summarize([]).median == 0.0
    assert summarize([0.0] * 5).spread_pct is None


def test_tight_samples_a_clear_change_is_significant():
    ch = compare_samples([10.0] * 5, [11.0] * 5)
    assert ch.verdict == SIGNIFICANT
    assert ch.slower and not ch.faster
    assert ch.delta_ms == 1.0
    assert ch.rel_pct == pytest.approx(10.0)
    assert ch.noise_ms == 0.0
    assert ch.min_change_ms == pytest.approx(0.5)
    assert ch.speedup == pytest.approx(10 / 11)


def test_tight_samples_below_the_minimum_change_are_within_noise():
    assert compare_samples([10.0] * 5, [10.4] * 5).verdict == WITHIN_NOISE


def test_a_change_equal_to_the_minimum_is_not_significant():
    # 5% of 10 ms is 0.5 ms; the rule asks for strictly more.
    assert compare_samples([10.0] * 5, [10.5] * 5).verdict == WITHIN_NOISE
    assert compare_samples([10.0] * 5, [10.51] * 5).verdict == SIGNIFICANT


def test_the_spread_sets_the_floor_when_it_is_larger_than_the_minimum():
    sigma = MAD_TO_SIGMA * 0.5
    floor = NOISE_K * math.hypot(sigma, sigma)  # 3.1451 ms
    within = compare_samples(SPREAD, shifted(SPREAD, 3.1))  # +31%, yet inside the scatter
    assert within.noise_ms == pytest.approx(floor)
    assert floor == pytest.approx(3.14507, abs=1e-5)
    assert within.verdict == WITHIN_NOISE
    assert not within.slower
    beyond = compare_samples(SPREAD, shifted(SPREAD, 3.2))
    assert beyond.verdict == SIGNIFICANT and beyond.slower


def test_faster_is_a_significant_decrease():
    ch = compare_samples([10.0] * 5, [8.0] * 5)
    assert ch.faster and not ch.slower
    assert ch.rel_pct == pytest.approx(-20.0)


def test_fewer_than_min_samples_is_never_significant():
    ch = compare_samples([10.0] * 4, [50.0] * 4)
    assert ch.verdict == TOO_FEW
    assert not ch.significant and not ch.slower
    assert compare_samples([10.0] * 5, [50.0] * 4).verdict == TOO_FEW
    assert compare_samples([10.0] * 5, [50.0] * 5).verdict == SIGNIFICANT


def test_empty_samples_use_fallbacks_and_are_too_few():
    ch = compare_samples([], [], base_fallback=1.0, head_fallback=2.0)
    assert (ch.base.median, ch.head.median, ch.verdict) == (1.0, 2.0, TOO_FEW)


def test_min_rel_is_configurable():
    assert compare_samples([10.0] * 5, [10.2] * 5).verdict == WITHIN_NOISE
    assert compare_samples([10.0] * 5, [10.2] * 5, min_rel=0.01).verdict == SIGNIFICANT


def test_zero_base_has_no_relative_change():
    ch = judge(summarize([0.0] * 5), summarize([1.0] * 5))
    assert ch.rel_pct is None
    assert ch.verdict == SIGNIFICANT  # the floor is 0 and the change is 1 ms


def test_outliers_do_not_widen_the_floor():
    # One 40 ms hiccup per side leaves the MAD (and so the floor) where it was.
    base = [10.0, 10.0, 10.1, 9.9, 40.0, 10.0]
    head = [12.0, 12.0, 12.1, 11.9, 40.0, 12.0]
    ch = compare_samples(base, head)
    assert ch.base.median == 10.0 and ch.head.median == 12.0
    assert ch.verdict == SIGNIFICANT


def test_sum_samples_adds_per_iteration_and_cuts_to_the_shortest():
    assert sum_samples([[1.0, 2.0, 3.0], [10.0, 20.0]]) == [11.0, 22.0]
    assert sum_samples([[1.0], []]) == []
    assert sum_samples([]) == []


def test_change_to_dict_keeps_the_numbers():
    d = compare_samples([10.0] * 5, [11.0] * 5).to_dict()
    assert d["verdict"] == SIGNIFICANT
    assert d["delta_ms"] == 1.0
    assert d["base"]["n"] == 5 and d["head"]["median"] == 11.0
