"""compare's JSON carries the figures its report shows (``summary``): a script reads each
column's step time and every speedup with its interval and verdict instead of redoing the
statistics. Checked against the rule written out again (tests/steady_rule.py) on a recorded
compare, and against the report's own cells."""

from __future__ import annotations

import json
import statistics

import pytest

from inductor_bench.core.compare import CompareResult
from inductor_bench.render.compare import render_compare

from .conftest import FIXTURES
from .steady_rule import limit

# recorded on this project's CPU machine: compare of models/mlp.py, eager, default and
# max-autotune, each column's samples its compile worker's (not interleaved)
RECORDED = FIXTURES / "results" / "cpu_mlp_compare" / "compare.json"


@pytest.fixture(scope="module")
def recorded():
    result = CompareResult.from_dict(json.loads(RECORDED.read_text()))
    return result, json.loads(result.to_json())


def _steady_mean(samples: list[float]) -> float:
    return statistics.fmean([x for x in samples if x <= limit(samples)])


def test_each_column_s_step_time_is_the_policy_s_figure(recorded):
    result, data = recorded
    steps = data["summary"]["step_ms"]
    assert sorted(steps) == ["default", "eager", "max-autotune"]  # reduce-overhead: not timed
    for m in result.modes:
        if m.label in steps:
            assert steps[m.label]["ms"] == pytest.approx(_steady_mean(m.step_samples_ms), rel=1e-12)
            assert steps[m.label]["n"] == sum(x <= limit(m.step_samples_ms) for x in m.step_samples_ms)


def test_each_speedup_is_the_ratio_of_the_step_times_with_the_report_s_verdict(recorded):
    result, data = recorded
    s = data["summary"]
    pairs = {(x["column"], x["over"]): x for x in s["speedups"]}
    assert set(pairs) == {("eager", "default"), ("default", "eager"), ("max-autotune", "eager"),
                          ("max-autotune", "default")}
    text = " ".join(render_compare(result).split())
    for (col, over), x in pairs.items():
        want = s["step_ms"][over]["ms"] / s["step_ms"][col]["ms"]
        assert x["speedup"] == pytest.approx(want, rel=1e-12)
        lo, hi = x["interval"]
        assert lo < x["speedup"] < hi
        assert f"{x['speedup']:.2f}x" in text and x["verdict"] in text
    assert s["fastest"] == min(s["step_ms"], key=lambda k: s["step_ms"][k]["ms"]) == "eager"


def test_the_summary_is_derived_on_writing_never_read_back(recorded):
    result, data = recorded
    data["summary"]["fastest"] = "max-autotune"  # a hand-edited summary changes nothing
    again = CompareResult.from_dict(data)
    assert json.loads(again.to_json())["summary"]["fastest"] == "eager"


def test_each_column_s_time_outside_the_graphs_is_the_report_s_row(recorded):
    result, data = recorded
    outside = data["summary"]["outside_ms"]
    text = render_compare(result)
    row = next(ln for ln in text.splitlines() if ln.startswith("outside graphs, ms"))
    assert outside and all(f"{v:.3f}" in row for v in outside.values())
    assert outside == {m.label: m.outside_ms() for m in result.modes if m.outside_ms() is not None}
