"""A diff of two runs whose model ran with other process-wide torch settings (float32 matmul
precision, TF32, threads: what each result records as it read them after the first step) says
which differ, for two breakdowns and for two compares (each column's breakdown records them);
a side that recorded none is not known to differ (synthetic results)."""

from __future__ import annotations

from inductor_bench.core.compare import CompareResult, ModeResult
from inductor_bench.core.diff import diff_results
from inductor_bench.core.run_extras import TorchSettings
from inductor_bench.render.diff import render_diff

from .test_diff import base_result

STEP = [4.0, 4.1, 3.9, 4.0, 4.05, 3.95, 4.0, 4.1, 3.9, 4.0, 4.0, 4.02]
WHY = " (read after the first step: they choose the kernels a matmul, a convolution or attention runs)"
HIGHEST = {"float32_matmul_precision": "highest", "backends.cuda.matmul.allow_tf32": False, "num_threads": 2}
HIGH = {"float32_matmul_precision": "high", "backends.cuda.matmul.allow_tf32": True, "num_threads": 2}


def _breakdown(values: dict | None):
    r = base_result()
    r.torch_settings = TorchSettings(values=dict(values)) if values is not None else None
    return r


def _compare(*columns: dict | None) -> CompareResult:
    modes = [ModeResult(mode=mode, compile_s=1.0, step_samples_ms=list(STEP), breakdown=_breakdown(v))
             for mode, v in zip(("default", "max-autotune"), columns, strict=False)]
    return CompareResult(model="mlp", device="cpu", device_name="Test CPU (2 cores)",
                         versions={"torch": "2.13.0"}, modes=modes)


def test_two_breakdowns_of_other_matmul_settings_say_which():
    d = diff_results(_breakdown(HIGHEST), _breakdown(HIGH))
    note = ("torch settings differ: float32_matmul_precision: base highest, head high; "
            "backends.cuda.matmul.allow_tf32: base False, head True" + WHY)
    assert d.warnings == [note]
    assert f"warning: {note}" in render_diff(d)
    assert diff_results(_breakdown(HIGH), _breakdown(HIGH)).warnings == []


def test_two_compares_of_other_matmul_settings_say_which():
    d = diff_results(_compare(HIGHEST, HIGHEST), _compare(HIGHEST, HIGH))
    assert d.warnings == ["torch settings differ: float32_matmul_precision: base highest, head highest and "
                          "high; backends.cuda.matmul.allow_tf32: base False, head False and True" + WHY]
    assert diff_results(_compare(HIGH, HIGH), _compare(HIGH, HIGH)).warnings == []


def test_a_side_that_recorded_no_settings_is_not_known_to_differ():
    assert diff_results(_breakdown(None), _breakdown(HIGH)).warnings == []
    assert diff_results(_compare(HIGHEST), _compare(None)).warnings == []
    threads = {**HIGH, "num_threads": 1}  # a key on one side only is not compared either
    del threads["backends.cuda.matmul.allow_tf32"]
    assert diff_results(_breakdown(HIGH), _breakdown(threads)).warnings == [
        "torch settings differ: num_threads: base 2, head 1" + WHY]
