"""The spread `kernel` shows (and every Summary's sigma): where more than half the kept
repetitions are equal and the rest are not, the MAD is 0, and the spread read ±0.0% of
samples that differ. Synthetic samples, shaped as CUDA event times on a clock's ticks."""

from __future__ import annotations

import statistics

from inductor_bench.core.kernel_report import build_report
from inductor_bench.core.kernelfile import read_kernel_file
from inductor_bench.core.peaks import Peak
from inductor_bench.core.summaries import summarize
from inductor_bench.render.kernel import render_kernel

from .test_kernel_cli import RED, canned_response

TICKS = [0.010] * 60 + [0.01024] * 40  # 60 of 100 repetitions equal: a MAD of 0


def test_equal_majority_has_a_spread():
    s = summarize(TICKS)
    assert s.n == 100 and s.left_out == 0  # 2.4% above the median: steady
    mean_ad = (40 * 0.00024) / 100  # from the median, 0.010
    assert abs(s.sigma - 1.2533 * mean_ad) < 1e-12
    assert round(s.spread_pct, 2) == round(100 * 1.2533 * mean_ad / 0.010096, 2) == 1.19


def test_robust_sigma_where_the_mad_is_not_zero_and_zero_where_all_equal():
    xs = [0.0200, 0.0202, 0.0198, 0.0200, 0.0201, 0.0199]
    mad = statistics.median(abs(x - 0.0200) for x in xs)  # 0.0001
    assert abs(summarize(xs).sigma - 1.4826 * mad) < 1e-12
    assert summarize([0.012] * 6).sigma == 0.0


def test_kernel_table_spread_cell():
    resp = canned_response(False)
    resp["runs"][0]["samples_ms"] = TICKS
    text = render_kernel(build_report(read_kernel_file(RED), resp, Peak(2000.0, None, "x")))
    row = next(ln.split() for ln in text.splitlines() if ln.startswith("baseline "))
    assert "±1.2%" in row  # it read ±0.0%
    assert ("spread: robust sigma (1.4826 x MAD; where over half the repetitions are equal, 1.2533 x "
            "their mean absolute deviation from the median) in % of the time") in " ".join(text.split())
