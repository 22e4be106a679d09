"""The significance rule of stats.py on hand-built samples, with exact expectations."""

from __future__ import annotations

import math
import statistics

import pytest

from inductor_bench.core import paired_rounds, stats
from inductor_bench.core.devices import backend
from inductor_bench.core.paired_rounds import PAIR_CONFIDENCE, median_ci_rank
from inductor_bench.core.stats import (
    MAD_TO_SIGMA,
    MIN_REL_CHANGE,
    MIN_SAMPLES,
    SIGNIFICANT,
    TOO_FEW,
    WITHIN_NOISE,
    compare_samples,
    judge,
)
from inductor_bench.core.summaries import (
    MEAN_CONFIDENCE,
    add,
    sum_samples,
    summarize,
    summarize_steady,
    t_quantile,
)

# Five samples around 10 ms: mean 10, sample sd sqrt(0.625).
SPREAD = [9.0, 9.5, 10.0, 10.5, 11.0]


def t_cdf(q: float, nu: int, steps: int = 20000) -> float:
    """Student-t CDF at q > 0: Simpson's rule over the density, written out here."""
    c = math.exp(math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2)) / math.sqrt(nu * math.pi)

    def f(t: float) -> float:
        return c * (1 + t * t / nu) ** (-(nu + 1) / 2)

    h = q / steps
    inner = sum((4 if i % 2 else 2) * f(i * h) for i in range(1, steps))
    return 0.5 + (f(0.0) + f(q) + inner) * h / 3


def shifted(samples: list[float], by: float) -> list[float]:
    return [x + by for x in samples]


def half_width(xs: list[float]) -> float:
    """The t interval's half-width, computed here from the definition and the table."""
    n = len(xs)
    m = sum(xs) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    q = t_quantile(0.9875, n - 1)
    assert t_cdf(q, n - 1) == pytest.approx(0.9875, abs=5e-5)  # the quantile checked independently
    return q * sd / math.sqrt(n)


def test_constants_are_what_the_docs_state():
    assert (MIN_SAMPLES, MEAN_CONFIDENCE, PAIR_CONFIDENCE, MIN_REL_CHANGE) == (5, 0.975, 0.95, 0.05)
    assert (backend("cpu").min_rel_change, backend("cuda").min_rel_change) == (0.10, 0.05)
    assert pytest.approx(1 / 0.6744897501960817, abs=1e-4) == MAD_TO_SIGMA


@pytest.mark.parametrize("df", [4, 5, 9, 19, 99])
def test_t_quantile_is_where_the_t_distribution_reaches_its_probability(df):
    assert t_cdf(t_quantile(0.9875, df), df) == pytest.approx(0.9875, abs=5e-5)
    assert t_cdf(t_quantile(0.975, df), df) == pytest.approx(0.975, abs=5e-5)


def test_summary_leaves_out_a_stall_and_averages_the_rest():
    # median 3, MAD 1 -> limit 3 + 3.5 * 1.4826 = 8.19: the 100 ms sample is left out
    s = summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert (s.n, s.ms, s.left_out, s.min, s.max) == (4, 2.5, 1, 1.0, 4.0)
    assert s.sigma == pytest.approx(1.4826 * statistics.median([1.5, 0.5, 0.5, 1.5]))
    assert s.spread_pct == pytest.approx(100 * s.sigma / 2.5)


def test_summary_interval_is_the_t_interval_of_the_mean():
    s = summarize(SPREAD)
    assert (s.n, s.ms, s.left_out) == (5, 10.0, 0)
    assert (s.low, s.high) == (pytest.approx(10 - half_width(SPREAD)), pytest.approx(10 + half_width(SPREAD)))


def test_summarize_steady_leaves_nothing_out_again():
    xs = [1.0, 2.0, 3.0, 4.0, 100.0]
    s = summarize_steady(xs, left_out=2)
    assert (s.n, s.ms, s.left_out) == (5, 22.0, 2)


def test_summary_of_no_samples_uses_the_fallback():
    s = summarize([], fallback=2.5)
    assert (s.n, s.ms, s.low, s.high) == (0, 2.5, 2.5, 2.5)
    assert summarize([]).ms == 0.0
    assert summarize([0.0] * 5).spread_pct is None


def test_add_sums_figures_exactly_and_half_widths_in_quadrature():
    a, b = summarize(SPREAD), summarize(shifted(SPREAD, 5.0))
    total = add([a, b])
    assert total.ms == 25.0 and total.n == 5 and total.left_out == 0
    h = math.sqrt(a.half_width**2 + b.half_width**2)
    assert (total.low, total.high) == (pytest.approx(25 - h), pytest.approx(25 + h))
    assert add([]).n == 0


def test_tight_samples_a_clear_change_is_significant():
    ch = compare_samples([10.0] * 5, [11.0] * 5)
    assert ch.verdict == SIGNIFICANT
    assert ch.slower and not ch.faster
    assert ch.delta_ms == 1.0
    assert ch.rel_pct == pytest.approx(10.0)
    assert ch.ratio_ci == (1.1, 1.1)
    assert ch.min_change_ms == pytest.approx(0.5)
    assert ch.speedup == pytest.approx(10 / 11)


def test_tight_samples_below_the_minimum_change_are_within_noise():
    assert compare_samples([10.0] * 5, [10.4] * 5).verdict == WITHIN_NOISE


def test_a_change_equal_to_the_minimum_is_not_significant():
    # 5% of 10 ms is 0.5 ms; the rule asks for strictly more.
    assert compare_samples([10.0] * 5, [10.5] * 5).verdict == WITHIN_NOISE
    assert compare_samples([10.0] * 5, [10.51] * 5).verdict == SIGNIFICANT


def test_overlapping_intervals_are_within_noise_whatever_the_figures():
    h = half_width(SPREAD)  # 0.9 * 4.1765 / sqrt(5) ~ 1.476... with sd sqrt(0.625)
    within = compare_samples(SPREAD, shifted(SPREAD, 1.9 * h))  # intervals overlap
    assert within.overlap and within.verdict == WITHIN_NOISE and not within.slower
    beyond = compare_samples(SPREAD, shifted(SPREAD, 2.1 * h))  # they clear each other
    assert not beyond.overlap and beyond.verdict == SIGNIFICANT and beyond.slower
    b_lo, b_hi, h_lo, h_hi = 10 - h, 10 + h, 10 + 1.1 * h, 10 + 3.1 * h
    assert beyond.ratio_ci == pytest.approx((h_lo / b_hi, h_hi / b_lo))
    assert beyond.speedup_ci == pytest.approx((b_lo / h_hi, b_hi / h_lo))


def binom_tail(n: int, k: int) -> float:
    """P(Binomial(n, 1/2) <= k), summed here from the definition."""
    return sum(math.comb(n, i) for i in range(k + 1)) / 2**n


@pytest.mark.parametrize("n", [5, 9, 10, 20, 30, 100, 200, 999])
def test_median_interval_rank_is_the_widest_binomial_tail_under_the_confidence(n):
    k = median_ci_rank(n, 0.975)
    tail = (1 - 0.975) / 2
    if k > 1 or binom_tail(n, 0) <= tail:
        assert binom_tail(n, k - 1) <= tail  # [x_(k), x_(n-k+1)] covers at least 97.5%
        assert binom_tail(n, k) > tail  # and one rank narrower would not
    else:
        assert binom_tail(n, 0) > tail  # too few samples: the whole range, below 97.5%


def test_median_interval_ranks_of_the_published_table():
    # Conover, Practical Nonparametric Statistics, table A3 (alpha = .025 per tail at n = 10,
    # 20, 30: k = 2, 6, 10 at 95% two-sided; at 97.5% two-sided one rank wider or the same).
    assert [median_ci_rank(n, 0.95) for n in (10, 20, 30)] == [2, 6, 10]
    assert [median_ci_rank(n, 0.975) for n in (10, 20, 30)] == [2, 5, 9]
    assert [median_ci_rank(n) for n in (10, 20, 30)] == [2, 6, 10]  # the default: PAIR_CONFIDENCE


def test_large_samples_use_the_normal_approximation_within_one_rank():
    exact = median_ci_rank.__wrapped__  # type: ignore[attr-defined]
    import inductor_bench.core.paired_rounds as st

    n = 1500
    approx_k = median_ci_rank(n)
    saved = st.EXACT_UP_TO
    try:
        st.EXACT_UP_TO = 10**6
        assert abs(exact(n) - approx_k) <= 1
    finally:
        st.EXACT_UP_TO = saved


def test_thirty_noisy_samples_call_a_49_percent_slowdown_significant():
    """The case that misled users: 30 calls per mode with a 10-16% spread and max-autotune
    1.49x slower, once called "within noise"."""
    import random

    rng = random.Random(7)
    base = [1.331 * (1 + rng.gauss(0, 0.13)) for _ in range(30)]
    head = [1.984 * (1 + rng.gauss(0, 0.13)) for _ in range(30)]
    ch = compare_samples(base, head, min_rel=0.10)
    assert ch.verdict == SIGNIFICANT and ch.slower
    lo, hi = ch.ratio_ci
    assert lo > 1.10 and lo < ch.head.ms / ch.base.ms < hi


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
    assert (ch.base.ms, ch.head.ms, ch.verdict) == (1.0, 2.0, TOO_FEW)


def test_min_rel_is_configurable():
    assert compare_samples([10.0] * 5, [10.2] * 5).verdict == WITHIN_NOISE
    assert compare_samples([10.0] * 5, [10.2] * 5, min_rel=0.01).verdict == SIGNIFICANT


def test_zero_base_has_no_relative_change():
    ch = judge(summarize([0.0] * 5), summarize([1.0] * 5))
    assert ch.rel_pct is None
    assert ch.verdict == SIGNIFICANT  # the floor is 0 and the change is 1 ms


def test_a_stall_is_left_out_and_does_not_widen_the_interval():
    # A 40 ms hiccup per side is left out: both figures and intervals are the other nine's.
    base = [10.0, 10.0, 10.1, 9.9, 40.0, 10.0, 10.0, 10.1, 9.9, 10.0]
    head = [12.0, 12.0, 12.1, 11.9, 40.0, 12.0, 12.0, 12.1, 11.9, 12.0]
    steady_base = [x for x in base if x < 40]
    s = summarize(base)
    assert (s.n, s.left_out) == (9, 1) and s.ms == pytest.approx(10.0)
    assert s.high - s.ms == pytest.approx(half_width(steady_base))
    ch = compare_samples(base, head)
    assert ch.base.ms == pytest.approx(10.0) and ch.head.ms == pytest.approx(12.0)
    assert ch.verdict == SIGNIFICANT


def test_sum_samples_adds_per_iteration_and_cuts_to_the_shortest():
    assert sum_samples([[1.0, 2.0, 3.0], [10.0, 20.0]]) == [11.0, 22.0]
    assert sum_samples([[1.0], []]) == []
    assert sum_samples([]) == []


def test_change_to_dict_keeps_the_numbers():
    d = compare_samples([10.0] * 5, [11.0] * 5).to_dict()
    assert d["verdict"] == SIGNIFICANT
    assert d["delta_ms"] == 1.0
    assert d["base"]["n"] == 5 and d["head"]["ms"] == 11.0 and d["head"]["left_out"] == 0


# ---- paired rounds (judge_paired) --------------------------------------------------------------


def _drifting_rounds(n: int, ratio: float, jitter: float = 0.01) -> tuple[list[list[float]], list[list[float]]]:
    """Rounds whose level drifts by up to 2x (a machine that changes speed between rounds);
    within a round the head's block is ``ratio`` times the base's, give or take ``jitter``."""
    base, head = [], []
    for r in range(n):
        level = 1.0 + (r % 5) * 0.25  # 1.0, 1.25, ... 2.0: the drift
        wobble = 1.0 + jitter * (1 if r % 2 else -1)
        base.append([level * x for x in (2.9, 3.0, 3.1)])
        head.append([level * ratio * wobble * x for x in (2.9, 3.0, 3.1)])
    return base, head


def test_round_ratios_are_the_blocks_figures_ratios():
    # blocks below five calls keep every call: 4 / 3 and 2 / 4
    assert paired_rounds.round_ratios([[1.0, 2.0, 9.0], [4.0]], [[4.0, 4.0, 4.0], [2.0]]) == [1.0, 0.5]
    # from five calls a stall is left out of its block: (2 + 2 + 2 + 2) / 4 over 1
    assert paired_rounds.round_ratios([[1.0] * 5], [[2.0, 2.0, 2.0, 2.0, 50.0]]) == [2.0]
    assert paired_rounds.round_ratios([[1.0], []], [[2.0], [5.0]]) == [2.0]  # a round one side missed


def test_paired_rounds_cancel_drift():
    base, head = _drifting_rounds(20, 1.25)
    ch = stats.judge_paired(base, head, min_rel=0.10)
    ratios = sorted(1.25 * (1 + 0.01 * (1 if r % 2 else -1)) for r in range(20))
    k = median_ci_rank(20, PAIR_CONFIDENCE)
    assert ch.verdict == stats.SIGNIFICANT and ch.slower and not ch.faster
    assert ch.paired.rounds == 20
    assert ch.paired.ratio == pytest.approx(math.sqrt(ratios[9] * ratios[10]))  # the middle two
    assert ch.ratio_ci == (pytest.approx(ratios[k - 1]), pytest.approx(ratios[20 - k]))
    mid = math.sqrt(ratios[9] * ratios[10])
    assert ch.rel_pct == pytest.approx(100 * (mid - 1)) and ch.speedup == pytest.approx(1 / mid)


def test_paired_identical_sides_are_within_noise_however_the_machine_drifts():
    base, head = _drifting_rounds(20, 1.0, jitter=0.02)
    ch = stats.judge_paired(base, head, min_rel=0.10)
    assert ch.verdict == stats.WITHIN_NOISE and ch.paired.low < 1.0 < ch.paired.high


def test_paired_tight_but_below_the_floor_is_within_noise():
    base, head = _drifting_rounds(20, 1.06, jitter=0.0)
    ch = stats.judge_paired(base, head, min_rel=0.10)
    assert ch.paired.low > 1.0 and ch.verdict == stats.WITHIN_NOISE


def test_paired_faster_and_too_few_rounds():
    base, head = _drifting_rounds(12, 0.5)
    ch = stats.judge_paired(base, head, min_rel=0.05)
    assert ch.faster and ch.speedup == pytest.approx(2.0, rel=0.02)
    few = stats.judge_paired(base[:4], head[:4], min_rel=0.05)
    assert few.verdict == stats.TOO_FEW and few.paired is None


def test_paired_change_to_dict_says_how_many_rounds():
    base, head = _drifting_rounds(10, 1.5, jitter=0.0)
    d = stats.judge_paired(base, head).to_dict()
    assert d["paired"] == {"rounds": 10, "ratio": pytest.approx(1.5)}
    assert d["ratio_ci"] == [pytest.approx(1.5), pytest.approx(1.5)] and d["rel_pct"] == pytest.approx(50.0)


def test_an_interval_that_excludes_one_never_prints_as_reaching_it():
    """A sweep printed ``0.83x [0.76x-1.00x] significant``: the upper bound was 0.998, which two
    decimals round to 1.00. Printed bounds keep the side of 1 the true bounds are on."""
    import random

    from inductor_bench.render.format import interval_pct, interval_x

    assert interval_x((0.76, 0.9981)) == "[0.76x-0.998x]"
    assert interval_x((1.0004, 1.2)) == "[1.0004x-1.20x]"
    assert interval_x((0.9, 1.0)) == "[0.90x-1.00x]"  # a bound at 1 itself stays 1.00
    assert interval_pct((0.9, 0.99996)) == "[-10.0%..-0.004%]"
    rng = random.Random(7)
    for _ in range(2000):
        hi = 1.0 - 10 ** rng.uniform(-5.5, -1)  # below 1 by a hair or more
        lo = rng.uniform(0.5, hi)
        low, high = (float(x) for x in interval_x((lo, hi))[1:-2].split("x-"))
        assert high < 1.0 and low <= high, (lo, hi)
        pct_hi = float(interval_pct((lo, hi)).split("..")[1].rstrip("%]"))
        assert pct_hi < 0, (lo, hi)


@pytest.mark.parametrize("ratio", [1.1076, 1.0 / 1.1076])
def test_the_verdict_is_the_same_whichever_side_is_the_base(ratio):
    """1.1076x one way is 0.9029x the other: 10.8% slower, or 9.7% less time. Both are one
    change beyond a 10% floor (a ratio above 1.10 or below 1/1.10), paired or not."""
    base, head = _drifting_rounds(20, ratio, jitter=0.0)
    forward = stats.judge_paired(base, head, min_rel=0.10)
    backward = stats.judge_paired(head, base, min_rel=0.10)
    assert forward.verdict == backward.verdict == stats.SIGNIFICANT
    assert forward.paired.ratio == pytest.approx(1.0 / backward.paired.ratio)
    a, b = [10.0] * 5, [10.0 * ratio] * 5
    assert compare_samples(a, b, min_rel=0.10).verdict == compare_samples(b, a, min_rel=0.10).verdict == SIGNIFICANT


def test_a_sides_speedup_over_the_other_is_one_over_the_others_with_an_even_number_of_rounds():
    """Ten rounds whose middle two ratios are 0.5 and 2.0: the median is their geometric mean,
    1.0 both ways (their arithmetic mean, 1.25, read each side 1.25x the other)."""
    base = [[1.0]] * 10
    head = [[r] for r in (0.1, 0.2, 0.3, 0.4, 0.5, 2.0, 3.0, 4.0, 5.0, 6.0)]
    forward, backward = stats.judge_paired(base, head), stats.judge_paired(head, base)
    assert forward.paired.ratio == pytest.approx(1.0) and backward.paired.ratio == pytest.approx(1.0)
    odd = stats.judge_paired(base[:9], head[:9])  # an odd number: the middle one, as before
    assert odd.paired.ratio == 0.5 and stats.judge_paired(head[:9], base[:9]).paired.ratio == 2.0


def test_a_compare_timed_on_a_loaded_machine_reads_the_same_speedup_either_way():
    """The recorded rounds of a compare timed while five other processes compiled: it read
    default 0.67x over eager and eager 1.19x over default (0.67 x 1.19 = 0.79). The speedups
    are now reciprocal, the median of the rounds' ratios taken on their logarithms."""
    import json

    from .conftest import FIXTURES

    rec = json.loads((FIXTURES / "results" / "loaded_paired_rounds.json").read_text())
    default_over_eager = stats.judge_paired(rec["eager"], rec["default"])  # base eager, head default
    eager_over_default = stats.judge_paired(rec["default"], rec["eager"])
    assert default_over_eager.speedup * eager_over_default.speedup == pytest.approx(1.0, rel=1e-12)
    logs = sorted(math.log(r) for r in paired_rounds.round_ratios(rec["eager"], rec["default"]))
    assert len(logs) == 10
    assert default_over_eager.speedup == pytest.approx(1.0 / math.exp((logs[4] + logs[5]) / 2), rel=1e-12)
    assert default_over_eager.verdict == eager_over_default.verdict == stats.WITHIN_NOISE


@pytest.mark.parametrize("ratio", [1.10, 1.09])
def test_a_ratio_within_the_floor_either_way_is_within_noise(ratio):
    """At or inside the floor in either direction (1.10 and 1/1.10; 1.09 and 1/1.09)."""
    for base, head in ((10.0, 10.0 * ratio), (10.0 * ratio, 10.0)):
        assert compare_samples([base] * 5, [head] * 5, min_rel=0.10).verdict == WITHIN_NOISE
        b, h = _drifting_rounds(20, head / base, jitter=0.0)
        assert stats.judge_paired(b, h, min_rel=0.10).verdict == stats.WITHIN_NOISE


def test_a_change_of_points_that_rounds_to_nothing_has_no_sign():
    from inductor_bench.render.format import points

    assert [points(d) for d in (-0.04, 0.0, 0.04, -1.26, 2.35)] == ["0.0 pp", "0.0 pp", "0.0 pp", "-1.3 pp", "+2.4 pp"]
