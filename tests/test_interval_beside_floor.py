"""A change near the verdict's floor gets the decimals that keep it on its side (``1.097x``
under a 1.10x floor, ``+9.97%`` under 10%); the bounds of its interval get them too, so that
the printed interval holds the printed figure: it had read ``1.097x [1.10x-1.22x]`` (the low
bound 1.0962) and ``+9.97% [+10.0%..+10.0%]``, a figure outside its own interval, whose
bounds read as past the floor the figure is short of. Synthetic: samples built by hand."""

from __future__ import annotations

import math

from inductor_bench.core.diff import Diff, SectionDiff
from inductor_bench.core.stats import WITHIN_NOISE, interval_x_text, judge, judge_paired
from inductor_bench.core.summaries import summarize
from inductor_bench.core.vocab import StepSource
from inductor_bench.render.diff import render_diff
from inductor_bench.render.diff_verdict import change_cell
from inductor_bench.render.format import interval_x, speedup_x

# head / base, one per round: the median of the middle two is 1/1.0970, the 95% interval of
# 10 rounds [x_(2), x_(9)] is [0.82, 0.91224]: a speedup of 1.0970 in [1.0962, 1.2195]
RATIOS = [0.80, 0.82, 0.85, 0.88, 0.9115, 0.91166, 0.9118, 0.912, 0.91224, 0.95]


def near_floor_rounds():
    return judge_paired([[1.0] * 5 for _ in RATIOS], [[r] * 5 for r in RATIOS], min_rel=0.10)


def test_a_speedup_under_the_floor_reads_inside_its_interval() -> None:
    ch = near_floor_rounds()
    assert ch.verdict == WITHIN_NOISE
    assert math.isclose(ch.speedup, 1.0970, abs_tol=5e-5)
    assert f"{speedup_x(ch)} {interval_x(ch.speedup_ci, ch.min_rel)}" == "1.097x [1.096x-1.22x]"
    assert interval_x_text(ch.speedup_ci, 0.10) == "[1.096x-1.22x]"
    assert interval_x(ch.speedup_ci) == "[1.10x-1.22x]"  # no floor given: two decimals


def test_a_change_under_the_floor_reads_inside_its_interval() -> None:
    ch = judge(summarize([20.0] * 6), summarize([21.994] * 6), 0.10)
    assert change_cell(ch) == "+9.97% [+9.97%..+9.97%]"
    diff = Diff(kind="breakdown", base_model="m", head_model="m", device="cpu", min_rel=0.10,
                sections=[SectionDiff(mode="default", step=ch, step_source=StepSource.HARNESS)])
    for fmt in ("text", "markdown", "html"):
        out = render_diff(diff, fmt)
        assert "+9.97% [+9.97%..+9.97%]" in out and "+10.0%" not in out


def test_bounds_away_from_the_floor_keep_their_decimals() -> None:
    ch = judge(summarize([20.0] * 6), summarize([24.0] * 6), 0.10)
    assert change_cell(ch) == "+20.0% [+20.0%..+20.0%]"
    assert interval_x_text((0.7512, 0.998), 0.10) == "[0.75x-0.998x]"  # 1x: beside_mark's decimals
