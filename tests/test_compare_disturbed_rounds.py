"""compare's own report and JSON on interleaved rounds most of which were disturbed: no speedup,
the reason in its cell, the headline and the JSON, as the sweep's cell reads; with several model
files, no regression verdict on such a pair, which keeps the merge gate from passing
(hand-built rounds, synthetic)."""

from __future__ import annotations

import copy
import json
import statistics

import pytest

from inductor_bench.core.compare import CompareResult
from inductor_bench.core.compare_gate import regressions
from inductor_bench.render.compare import gate_line, render_compare, verdict_line
from inductor_bench.render.doc import new_doc

from .test_sweep_disturbed_rounds import FIXTURE, _result, _stalled_rounds

WHY = "7 of 10 rounds disturbed"


def _row(text: str, name: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(name))


def test_a_speedup_over_mostly_disturbed_rounds_reads_n_m_with_its_reason():
    result = _result(*_stalled_rounds(7))
    text = render_compare(result)
    assert f"n/m ({WHY})" in _row(text, "speedup vs eager")
    assert "no speedup over " in verdict_line(result, new_doc("text")) and WHY in verdict_line(result, new_doc("text"))
    pair = next(s for s in result.to_dict()["summary"]["speedups"] if s["column"] == "default" and s["over"] == "eager")
    assert pair["speedup"] is None and pair["interval"] is None
    assert pair["verdict"] == "no speedup" and pair["no_speedup"] == WHY


def test_half_the_rounds_disturbed_keeps_the_figure():
    """5 of 10: not most; the cell is the median of the rounds' ratios (the steady middle),
    computed here from the blocks' means."""
    eager, mode = _stalled_rounds(5)
    result = _result(eager, mode)
    ratios = sorted(statistics.fmean(e) / statistics.fmean(m) for e, m in zip(eager, mode, strict=True))
    want = (ratios[4] * ratios[5]) ** 0.5
    pair = next(s for s in result.to_dict()["summary"]["speedups"] if s["column"] == "default")
    assert "no_speedup" not in pair and pair["speedup"] == pytest.approx(want, rel=1e-9)
    assert "n/m" not in _row(render_compare(result), "speedup vs eager")


def _two_models(disturbed: int) -> CompareResult:
    """Two model files, each timed in default alone; b's blocks stalled in ``disturbed`` rounds
    and its steady calls 1.5x a's: a regression where most rounds are steady."""
    d = json.loads(FIXTURE.read_text())
    a, mode = d["modes"][1], _stalled_rounds(disturbed)[1]
    a["model"], a["paired_ms"] = "a", [[1.85] * 6 for _ in range(10)]
    b = copy.deepcopy(a)
    b["model"], b["paired_ms"] = "b", [[x * 1.5 if x < 2 else x for x in blk] for blk in mode]
    d["models"], d["modes"] = ["a", "b"], [a, b]
    return CompareResult.from_dict(d)


def test_the_merge_gate_judges_no_pair_of_mostly_disturbed_rounds():
    steady = _two_models(0)
    assert [m.label for _, m, _ in regressions(steady, 10.0)] == ["b:default"]
    stalled = _two_models(7)
    assert regressions(stalled, 10.0) == []
    line = gate_line(stalled, 10.0, new_doc("text"))
    assert line.startswith("NOT COMPARABLE, so the 10% gate fails")
    assert f"b:default: a steady step not measured in a and b ({WHY})" in line
