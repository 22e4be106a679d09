"""A compare records whether it ran --freezing, as a breakdown does, so that a diff of two
compares (and ``sweep --baseline``, which diffs them) says when one side froze its weights and
the other did not; a compare.json saved before freezing was recorded reads as not known and
warns of nothing (synthetic results; the case seen on timm's resnet18 inference, 51.1 ms
without and 16.3 ms with --freezing, diffed as a plain 3x speedup)."""

from __future__ import annotations

import json
from pathlib import Path

from inductor_bench.core.compare import CompareResult, ModeResult
from inductor_bench.core.diff import diff_results
from inductor_bench.core.workload import WorkloadOptions
from inductor_bench.render.compare import render_compare
from inductor_bench.render.diff import render_diff
from inductor_bench.runner.compare import _header
from inductor_bench.runner.compare_timer import CompareRun

from .test_diff import base_result
from .test_diff_freezing import NOTE

MODELS = Path(__file__).resolve().parent.parent / "models"
STEP = [4.0, 4.1, 3.9, 4.0, 4.05, 3.95, 4.0, 4.1, 3.9, 4.0, 4.0, 4.02]


def _compare(freezing: bool | None) -> CompareResult:
    """One column, default, of ``base_result``'s breakdown (its own freezing as the compare's)."""
    bd = base_result()
    bd.freezing = bool(freezing)
    m = ModeResult(mode="default", compile_s=1.0, step_samples_ms=list(STEP), breakdown=bd)
    return CompareResult(model="mlp", device="cpu", device_name="Test CPU (2 cores)",
                         versions={"torch": "2.13.0"}, modes=[m], freezing=freezing)


def _saved(r: CompareResult) -> CompareResult:
    return CompareResult.from_dict(json.loads(r.to_json()))


def test_a_diff_of_two_compares_across_freezing_says_the_sides_froze_otherwise():
    d = diff_results(_compare(False), _compare(True))
    assert d.warnings == [NOTE]
    assert f"warning: {NOTE}" in render_diff(d)
    assert diff_results(_compare(True), _compare(False)).warnings == [
        NOTE.replace("base without it, head --freezing", "base --freezing, head without it")]
    assert diff_results(_compare(True), _compare(True)).warnings == []
    assert diff_results(_compare(False), _compare(False)).warnings == []


def test_a_compare_saves_and_reads_back_its_freezing():
    assert json.loads(_compare(True).to_json())["freezing"] is True
    assert _saved(_compare(True)).freezing is True
    assert _saved(_compare(False)).freezing is False
    assert diff_results(_saved(_compare(False)), _saved(_compare(True))).warnings == [NOTE]


def test_a_compare_saved_before_freezing_was_recorded_reads_as_not_known():
    d = json.loads(_compare(False).to_json())
    del d["freezing"]
    old = CompareResult.from_dict(d)
    assert old.freezing is None
    assert "freezing" not in json.loads(old.to_json())  # saved again, it stays not recorded
    assert diff_results(old, _compare(True)).warnings == []
    assert diff_results(_compare(True), old).warnings == []


def test_the_compare_run_records_the_freezing_it_was_given(tmp_path):
    for freezing in (False, True):
        opts = WorkloadOptions(path=str(MODELS / "mlp.py"), device="cpu", freezing=freezing)
        assert _header(opts, CompareRun(), tmp_path).freezing is freezing


def test_the_compare_report_names_freezing_in_its_title():
    assert "mlp: inference, float32, freezing, on Test CPU (2 cores)" in render_compare(_compare(True), "text")
    assert "mlp: inference, float32, on Test CPU (2 cores)" in render_compare(_compare(False), "text")
