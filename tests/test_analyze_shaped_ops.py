"""`analyze` of a trace recorded with ``record_shapes=True``: each GEMM op's calls by shape, their
FLOPs (2·M·N·K), the time of the work they ran and the TFLOP/s reached, with % of the datasheet
peak of the trace's GPU. Checked on hand-built traces worked out by hand (synthetic), on a real
A100 trace (HTA's test data) and a recorded CPU training loop (``tests/fixtures/cpu_memory``)
against an independent reading of the raw JSON."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from inductor_bench.core.analyze import analyze_file
from inductor_bench.core.peaks import FP8, FP16, FP32, INT8, TF32
from inductor_bench.core.shaped_ops import compute_type
from inductor_bench.core.typical_step import steady_shaped_ops
from inductor_bench.render.analyze import render_analyze

from .conftest import FIXTURES
from .test_analyze import run_cli
from .test_analyze_regions import _x
from .test_analyze_strides import shown

A100 = FIXTURES / "hta" / "negative_queue_length_values_check_rank0.json.gz"
CPU_LOOP = FIXTURES / "cpu_memory" / "train-torch-2.13.0.json.gz"
GEMMS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm")


def _op(name: str, ts: float, dur: float, dims: list, types: list, tid: int = 1) -> dict:
    return _x("cpu_op", name, ts, dur, tid=tid, **{"Input Dims": dims, "Input type": types})


def _launched(kernel: str, at: float, ts: float, dur: float, corr: int) -> list[dict]:
    return [_x("cuda_runtime", "cudaLaunchKernel", at, 1, correlation=corr),
            _x("kernel", kernel, ts, dur, tid=7, pid=0, correlation=corr)]


BF16 = ["c10::BFloat16"] * 3 + ["Scalar", "Scalar"]


def _step(t: float, gemm_us: float, corr: int) -> list[dict]:
    """Synthetic: one step at ``t``: a bf16 addmm (64x128 @ 128x256) whose GEMM kernel takes
    ``gemm_us`` and its split-K reduction 2 µs; an fp32 mm (64x128 @ 128x32) inside an
    aten::matmul, a layout copy of an operand of 1 µs then an sgemm of 4 µs; an elementwise kernel
    launched outside every GEMM."""
    return [
        _x("user_annotation", f"ProfilerStep#{corr}", t, 100),
        _op("aten::addmm", t + 10, 20, [[256], [64, 128], [128, 256], [], []], BF16),
        *_launched("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", t + 12, t + 40, gemm_us, corr * 10 + 1),
        *_launched("splitKreduce_kernel", t + 14, t + 40 + gemm_us, 2, corr * 10 + 2),
        _x("cpu_op", "aten::matmul", t + 35, 20),
        _op("aten::mm", t + 36, 15, [[64, 128], [128, 32]], ["float", "float"]),
        *_launched("elementwise_kernel<direct_copy_kernel_cuda>", t + 38, t + 55, 1, corr * 10 + 5),
        *_launched("ampere_sgemm_64x64_nn", t + 40, t + 60, 4, corr * 10 + 3),
        _x("cpu_op", "aten::add", t + 60, 5),
        *_launched("vectorized_elementwise_kernel", t + 61, t + 70, 3, corr * 10 + 4),
    ]


def synthetic(tmp_path: Path) -> Path:
    events = _step(0, 8, 1) + _step(1000, 10, 2)
    path = tmp_path / "gemms.json"
    path.write_text(json.dumps({"traceEvents": events, "deviceProperties": [
        {"id": 0, "name": "NVIDIA H100 80GB HBM3"}]}))
    return path


def test_gemms_worked_out_by_hand(tmp_path):
    r = analyze_file(synthetic(tmp_path))
    rows = {(g.op, g.shapes): g for g in r.shaped_ops}
    assert set(rows) == {("aten::addmm", "64x128 @ 128x256"), ("aten::mm", "64x128 @ 128x32")}
    addmm, mm = rows["aten::addmm", "64x128 @ 128x256"], rows["aten::mm", "64x128 @ 128x32"]
    assert (addmm.dtype, addmm.calls, addmm.flops) == ("bf16", [1, 1], 2 * 64 * 128 * 256)
    assert addmm.ms == pytest.approx([0.010, 0.012])  # the GEMM kernel and its reduction
    assert addmm.kernel == "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n"
    assert (mm.dtype, mm.flops, mm.ms) == ("fp32", 2 * 64 * 128 * 32, pytest.approx([0.005, 0.005]))
    assert mm.kernel == "ampere_sgemm_64x64_nn"  # the GEMM kernel, not the copy
    typical = {t.row.op: t for t in steady_shaped_ops(r)}
    t = typical["aten::addmm"]
    assert (t.calls, t.ms, t.compute, t.peak_tflops) == (1, pytest.approx(0.011), FP16, 989.0)
    assert t.tflops == pytest.approx(2 * 2 * 64 * 128 * 256 / 22e-6 / 1e12)
    assert t.pct == pytest.approx(100 * t.tflops / 989.0)
    assert t.other_pct == 0.0
    t = typical["aten::mm"]
    assert (t.compute, t.peak_tflops) == (FP32, 67.0)
    assert t.tflops == pytest.approx(2 * 64 * 128 * 32 / 5e-6 / 1e12)
    assert t.other_pct == pytest.approx(20.0)


def test_the_section_and_json(tmp_path, capsys):
    path = synthetic(tmp_path)
    text = render_analyze(analyze_file(path))
    section = text[text.index("GEMMs by shape: record_shapes (steady mean step)"):]
    addmm = next(line for line in section.splitlines() if "aten::addmm" in line)
    tflops = 2 * 2 * 64 * 128 * 256 / 22e-6 / 1e12
    assert f"{tflops:.3g}" in addmm and f"{100 * tflops / 989:.1f}%" in addmm
    assert "datasheet: H100 SXM" in section
    code, _, _ = run_cli(capsys, str(path), "--json", str(tmp_path / "r.json"))
    assert code == 0
    saved = json.loads((tmp_path / "r.json").read_text())["shaped_ops"]
    assert {(g["op"], g["shapes"], tuple(g["calls"])) for g in saved} == {
        ("aten::addmm", "64x128 @ 128x256", (1, 1)), ("aten::mm", "64x128 @ 128x32", (1, 1))}


def test_a_trace_without_shapes_says_the_section_needs_record_shapes(tmp_path):
    """Synthetic: the GEMMs' Input Dims removed; the section is one line naming their calls."""
    events = json.loads(synthetic(tmp_path).read_text())["traceEvents"]
    for e in events:
        e["args"].pop("Input Dims", None)
    want = {}
    for e in events:
        if e.get("cat") == "cpu_op" and e["name"] in ("aten::mm", "aten::addmm"):
            want[e["name"]] = want.get(e["name"], 0) + 1
    path = tmp_path / "plain.json"
    path.write_text(json.dumps({"traceEvents": events}))
    r = analyze_file(path)
    assert r.shaped_ops == [] and r.shapes_not_recorded == want == {"aten::addmm": 2, "aten::mm": 2}
    assert ("Shapes not recorded: the trace holds 2 aten::addmm, 2 aten::mm calls but no shapes "
            "(Input Dims); this section needs a trace from torch.profiler.profile(record_shapes=True)."
            ) in render_analyze(r)


def _shaped_calls(path: Path) -> dict[str, int]:
    """Op -> calls of the GEMM/convolution ops among the trace's cpu_op events, from the raw JSON."""
    out: dict[str, int] = {}
    with gzip.open(path) as f:
        events = json.load(f)["traceEvents"]
    for e in events:
        if e.get("cat") == "cpu_op" and e["name"] in ("aten::mm", "aten::addmm", "aten::convolution",
                                                      "aten::convolution_backward"):
            assert "Input Dims" not in e.get("args", {})
            out[e["name"]] = out.get(e["name"], 0) + 1
    return out


@pytest.mark.parametrize(("path", "want", "line"), [
    (FIXTURES / "cuda_h200_stack_loop" / "stack-loop.pt.trace.json.gz", {"aten::addmm": 8, "aten::mm": 12},
     "8 `aten::addmm`, 12 `aten::mm` calls"),
    (FIXTURES / "hta_small" / "cupti_profiler_benchmark_result_924719_1679055439_trace.json.gz",
     {"aten::addmm": 6, "aten::convolution": 10}, "6 `aten::addmm`, 10 `aten::convolution` calls"),
])
def test_a_real_gpu_trace_without_record_shapes_says_so(path, want, line):
    assert _shaped_calls(path) == want
    r = analyze_file(path)
    assert r.shaped_ops == [] and r.shapes_not_recorded == want
    assert json.loads(r.to_json())["shapes_not_recorded"] == want
    md = render_analyze(r, "markdown")
    assert f"Shapes not recorded: the trace holds {line} but no shapes" in md
    assert "`torch.profiler.profile(record_shapes=True)`" in md
    assert "record_shapes=True" in render_analyze(r, "html")


def test_a_trace_with_shapes_or_no_such_op_says_nothing_of_them():
    with_shapes = analyze_file(A100)
    assert with_shapes.shaped_ops and with_shapes.shapes_not_recorded == {}
    none = analyze_file(FIXTURES / "hta_small" / "event_sync_trace.json.gz")
    assert _shaped_calls(FIXTURES / "hta_small" / "event_sync_trace.json.gz") == {}
    assert none.shapes_not_recorded == {} and "by shape" not in render_analyze(none)


def test_on_the_host_each_gemm_is_its_own_time_and_a_nested_one_is_its_own(tmp_path):
    """Synthetic, CPU only: an addmm of 100 µs with an mm of 20 µs inside it (no GEMM does this;
    the rule is that neither counts the other's time)."""
    events = [_x("user_annotation", "ProfilerStep#1", 0, 200),
              _op("aten::addmm", 10, 100, [[8], [4, 16], [16, 8], [], []], ["float"] * 3 + ["Scalar"] * 2),
              _op("aten::mm", 30, 20, [[4, 16], [16, 8]], ["float", "float"])]
    path = tmp_path / "host.json"
    path.write_text(json.dumps({"traceEvents": events}))
    r = analyze_file(path)
    got = {g.op: (g.device, g.ms, g.flops, g.kernel) for g in r.shaped_ops}
    assert got == {"aten::addmm": ("CPU thread 1", [pytest.approx(0.080)], 2 * 4 * 16 * 8, None),
                   "aten::mm": ("CPU thread 1", [pytest.approx(0.020)], 2 * 4 * 16 * 8, None)}
    text = render_analyze(r)
    assert "GEMMs by shape" in text and "% peak" not in text[text.index("GEMMs by shape"):]


@pytest.mark.parametrize(("kernel", "dtype", "want"), [
    ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4>", "fp32", TF32),
    ("sm80_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x16", "fp32", TF32),
    ("ampere_sgemm_128x64_nn", "fp32", FP32),
    ("nvjet_tst_128x64_64x8_2x1_v_bz_TNN", "fp32", None),  # says neither: no peak
    ("nvjet_hsh_128x64_64x8_2x1_v_bz_TNN", "bf16", FP16),
    ("anything", "fp64", None),
])
def test_the_compute_type_a_gemm_is_held_against(kernel, dtype, want):
    assert compute_type(dtype, kernel) == want


def _raw(path: Path) -> dict:
    with gzip.open(path, "rt") as f:
        return json.load(f)


def _steps(events: list[dict]) -> list[tuple[float, float]]:
    return [(e["ts"], e["ts"] + e["dur"]) for e in events
            if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#")]


def _in_steps(ts: float, steps: list[tuple[float, float]]) -> bool:
    return any(a <= ts <= b for a, b in steps)


def test_the_a100_trace_against_its_raw_events():
    """Each GEMM op with shapes that started in a step: the kernels, memcpys and memsets whose
    launch (same correlation) was made on the op's thread while it was open, read from the raw
    JSON by hand."""
    events = _raw(A100)["traceEvents"]
    steps = _steps(events)
    launches = {e["args"]["correlation"]: e for e in events
                if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    kernels = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    want: dict[tuple[str, str], list[float]] = {}
    for op in events:
        if op.get("cat") != "cpu_op" or op["name"] not in GEMMS or not _in_steps(op["ts"], steps):
            continue
        dims = op["args"]["Input Dims"]
        a, b = (dims[0], dims[1]) if op["name"] in ("aten::mm", "aten::bmm") else (dims[1], dims[2])
        key = (op["name"], f"{'x'.join(map(str, a))} @ {'x'.join(map(str, b))}")
        us = sum(k["dur"] for k in kernels if (la := launches.get(k["args"].get("correlation")))
                 and la["tid"] == op["tid"] and op["ts"] <= la["ts"] <= op["ts"] + op["dur"])
        flops = 2.0 * a[0] * a[1] * b[1]
        got = want.setdefault(key, [0, 0.0, flops])
        got[0] += 1
        got[1] += us
    r = analyze_file(A100)
    assert want and {(g.op, g.shapes) for g in r.shaped_ops} == set(want)
    for g in r.shaped_ops:
        calls, us, flops = want[g.op, g.shapes]
        assert (sum(g.calls), g.flops) == (calls, flops)
        assert sum(g.ms) == pytest.approx(us / 1e3, rel=1e-12)
    sgemm = next(t for t in steady_shaped_ops(r) if t.row.kernel == "ampere_sgemm_128x64_nn")
    assert (sgemm.compute, sgemm.peak_tflops, sgemm.peak_source) == (FP32, 19.5, "datasheet: A100 SXM 80GB")


def test_the_recorded_cpu_loop_against_its_raw_events():
    """On the host each GEMM op is its own duration; FLOPs 2·M·N·K of the loop's own layers
    (Linear(256, 1024), Linear(1024, 256), batch 128)."""
    events = _raw(CPU_LOOP)["traceEvents"]
    steps = _steps(events)
    want: dict[tuple[str, str], float] = {}
    for op in events:
        if op.get("cat") == "cpu_op" and op["name"] in GEMMS and _in_steps(op["ts"], steps):
            dims, strides = op["args"]["Input Dims"], op["args"]["Input Strides"]
            at = (0, 1) if op["name"] == "aten::mm" else (1, 2)
            key = (op["name"], " @ ".join(shown(dims[i], strides[i]) for i in at))
            want[key] = want.get(key, 0.0) + op["dur"]
    r = analyze_file(CPU_LOOP)
    assert len(want) == 5 and {(g.op, g.shapes) for g in r.shaped_ops} == set(want)
    for g in r.shaped_ops:
        assert g.flops == 2 * 128 * 256 * 1024 and sum(g.calls) == 4
        assert sum(g.ms) == pytest.approx(want[g.op, g.shapes] / 1e3, rel=1e-12)


def test_int8_fp8_and_grouped_gemms():
    """Synthetic calls as torch 2.13's profiler records them (CPU): ``_int_mm`` of int8 ("signed
    char"), ``_scaled_mm`` of fp8 with its scales, ``_grouped_mm`` of 40 ragged rows by 4 experts'
    64x32 weights (each row meets one expert: 2 x 40 x 64 x 32)."""
    from inductor_bench.core.recorded_shapes import describe

    d = describe("aten::_int_mm", ((32, 64), (64, 32)), ("signed char",) * 2, ("", ""))
    assert (d.shapes, d.dtype, d.flops) == ("32x64 @ 64x32", "int8", 2 * 32 * 64 * 32)
    fp8 = ("c10::Float8_e4m3fn",) * 2 + ("float", "float", "", "", "Scalar", "Scalar")
    d = describe("aten::_scaled_mm", ((32, 64), (64, 32), (), (), (), (), (), ()), fp8, ("",) * 8)
    assert (d.shapes, d.dtype, d.flops) == ("32x64 @ 64x32", "fp8", 2 * 32 * 64 * 32)
    d = describe("aten::_grouped_mm", ((40, 64), (4, 64, 32), (4,), (), ()), (BF16[0],) * 2 + ("int", "", ""),
                 ("",) * 5)
    assert (d.shapes, d.dtype, d.flops) == ("40x64 @ 4x64x32", "bf16", 2 * 40 * 64 * 32)
    assert compute_type("fp8", "sm90_xmma_gemm_e4m3bf16_e4m3f32_f32_tn_n") == FP8
    assert compute_type("int8", None) == INT8


def test_an_fp8_gemm_is_held_against_the_fp8_peak(tmp_path):
    """Synthetic, H100: a _scaled_mm of 4096x4096 @ 4096x4096 in fp8 whose kernel takes 200 µs."""
    dims = [[4096, 4096], [4096, 4096], [], [], [], [], [], []]
    types = ["c10::Float8_e4m3fn"] * 2 + ["float", "float", "", "", "Scalar", "Scalar"]
    events = [_x("user_annotation", "ProfilerStep#1", 0, 400),
              _op("aten::_scaled_mm", 10, 20, dims, types),
              *_launched("sm90_xmma_gemm_e4m3bf16_e4m3f32_f32_tn_n", 12, 30, 200, 1)]
    path = tmp_path / "fp8.json"
    path.write_text(json.dumps({"traceEvents": events, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}]}))
    (t,) = steady_shaped_ops(analyze_file(path))
    assert (t.row.dtype, t.compute, t.peak_tflops) == ("fp8", FP8, 1979.0)
    assert t.tflops == pytest.approx(2 * 4096**3 / 200e-6 / 1e12) and t.pct == pytest.approx(100 * t.tflops / 1979)


def test_the_footer_names_each_peak_the_rows_are_of(capsys):
    """A100 SXM4 80GB datasheet: fp32 19.5 TFLOP/s (SIMT sgemm), tf32 156 (s1688 tensor-op GEMMs).
    The footer names the figures, and each row's % peak is its TFLOP/s over one of them."""
    code, out, err = run_cli(capsys, str(A100))
    assert code == 0, err
    section = out[out.index("GEMMs by shape: record_shapes"):]
    assert "Peaks used: fp32 19.5 TFLOP/s, tf32 156 TFLOP/s (datasheet: A100 SXM 80GB)." in section
    # calls, ms, ms a call, GFLOP a call, TFLOP/s, % peak, % other work, kernels a call, kernel
    row = re.compile(r"^0 .* fp32 +\d+ +[\d.]+ +[\d.]+ +[\d.]+ +([\d.]+) +([\d.]+)% +[\d.]+% +[\d.]+ +(\S+)$")
    rows = [m.groups() for line in section.splitlines() if (m := row.match(line))]
    assert len(rows) == 5
    kernels = [t.row.kernel for t in steady_shaped_ops(analyze_file(A100))]  # the rows' order
    for (tflops, pct, _), kernel in zip(rows, kernels, strict=True):
        peak = 156.0 if "s1688" in kernel else 19.5
        assert float(pct) == pytest.approx(100 * float(tflops) / peak, rel=0.01, abs=0.06), kernel


def _mm(ts: float, dur: float, dims: list) -> dict:
    return _x("cpu_op", "aten::mm", ts, dur, **{"Input Dims": dims, "Input type": ["float", "float"]})


def test_a_shape_only_in_a_step_left_out_is_named(tmp_path):
    """Synthetic CPU trace: six steps, each two 64x128 @ 128x96 products of 100 µs; the last
    step 50 times slower (left out of the steady mean) runs a 32x32 @ 32x32 one as well. The
    kept row reads 2 calls, 0.200 ms, 0.100 ms a call; the other is named with its step, as the
    kernels that ran only in left-out steps are, and its JSON ``ms_per_call`` is null."""
    events = []
    for k in range(6):
        t = k * 100_000
        events += [_x("user_annotation", f"ProfilerStep#{k}", t, 50_000 if k == 5 else 1_000),
                   _mm(t + 10, 100, [[64, 128], [128, 96]]), _mm(t + 200, 100, [[64, 128], [128, 96]])]
    events.append(_mm(500_400, 300, [[32, 32], [32, 32]]))
    path = tmp_path / "slow-step.json"
    path.write_text(json.dumps({"traceEvents": events}))
    r = analyze_file(path)
    d = json.loads(r.to_json())
    assert d["steady_steps"] == [f"ProfilerStep#{k}" for k in range(5)]
    assert {x["shapes"]: x["ms_per_call"] for x in d["shaped_ops"]} == {
        "64x128 @ 128x96": pytest.approx(0.1), "32x32 @ 32x32": None}
    out = render_analyze(r, "text", top=10)
    section = out[out.index("GEMMs by shape"):]
    row = next(line for line in section.splitlines() if "64x128 @ 128x96" in line)
    assert re.search(r"fp32 +2 +0\.200 +0\.100 ", row), row
    assert ("shapes that ran only in steps left out of the steady mean, so not in its figures: "
            "aten::mm 32x32 @ 32x32, fp32 (ProfilerStep#5)") in section


def test_a_gpu_trace_that_names_no_gpu_says_why_no_row_has_a_peak():
    """HTA's timeline trace: GEMMs by shape on device 0, and no deviceProperties in the file."""
    path = FIXTURES / "hta" / "timeline_analysis_sampled_rank-0.json.gz"
    with gzip.open(path) as f:
        assert "deviceProperties" not in json.load(f)
    r = analyze_file(path)
    rows = steady_shaped_ops(r)
    assert r.device_names == {} and len(rows) == 166 and {t.pct for t in rows} == {None}
    note = "the GPU is not in the table; this trace names no GPU (it holds no deviceProperties): no row has a peak)"
    assert note in render_analyze(r, "text", top=3)
    assert "names no GPU" not in render_analyze(analyze_file(A100), "text")  # it names its A100s


def test_a_gemm_on_cpu_tensors_in_a_gpu_trace_is_a_row_of_its_thread(tmp_path):
    """Synthetic: the GPU steps of ``synthetic`` plus, in each, an aten::mm of 30 µs on thread 1
    (32x64 @ 64x16) that launched nothing: before, it was in no row and no note."""
    events = json.loads(synthetic(tmp_path).read_text())
    for t in (0, 1000):
        events["traceEvents"].append(_op("aten::mm", t + 75, 30, [[32, 64], [64, 16]], ["float", "float"]))
    path = tmp_path / "cpu_mm.json"
    path.write_text(json.dumps(events))
    r = analyze_file(path)
    row = next(g for g in r.shaped_ops if g.shapes == "32x64 @ 64x16")
    assert (row.device, row.calls, row.ms, row.flops, row.kernel) == (
        "CPU thread 1", [1, 1], [pytest.approx(0.030)] * 2, 2 * 32 * 64 * 16, None)
    assert len(r.shaped_ops) == 3  # the GPU rows as before
    t = next(t for t in steady_shaped_ops(r) if t.row is row)
    assert (t.ms, t.pct, t.other_pct) == (pytest.approx(0.030), None, None)
    assert t.tflops == pytest.approx(2 * 32 * 64 * 16 / 30e-6 / 1e12)
    text = render_analyze(r)
    line = next(line for line in text.splitlines() if "32x64 @ 64x16" in line)
    assert line.startswith("CPU thread 1") and "0.030" in line
    assert "(a row on a CPU thread launched no device work, its tensors on the CPU: the op's own time)" in text
    assert "a row on a CPU thread" not in render_analyze(analyze_file(synthetic(tmp_path)))


def _a100_with_properties(tmp_path, keep):
    """HTA's A100 trace (GEMMs by shape on device 0) with its deviceProperties edited by ``keep``."""
    with gzip.open(A100) as f:
        doc = json.load(f)
    doc["deviceProperties"] = keep(doc["deviceProperties"])
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(doc))
    return analyze_file(path)


def test_a_trace_that_names_other_gpus_but_not_a_rows_says_which_device_it_did_not_name(tmp_path):
    """The trace names devices 1-7 (an A100-SXM4-80GB each), not device 0, where every row ran."""
    r = _a100_with_properties(tmp_path, lambda props: [p for p in props if p["id"] != 0])
    rows = steady_shaped_ops(r)
    assert sorted(r.device_names) == list("1234567") and {t.row.device for t in rows} == {"0"}
    assert {t.pct for t in rows} == {None}
    text = " ".join(render_analyze(r, "text", top=3).split())
    assert ("or the GPU is not in the table; device 0 ran rows here, and this trace does not name it "
            "(its deviceProperties name device 1, 2, 3, 4, 5, 6, 7 alone): its rows have no peak)") in text
    assert "names no GPU" not in text


def test_a_named_gpu_the_table_lacks_is_named_under_the_by_shape_table(tmp_path):
    r = _a100_with_properties(tmp_path, lambda props: [p | {"name": "Tesla K80"} for p in props])
    assert {t.pct for t in steady_shaped_ops(r)} == {None}
    text = " ".join(render_analyze(r, "text", top=3).split())
    assert "or the GPU is not in the table; device 0 is Tesla K80, not in the table)" in text
    assert "does not name" not in " ".join(render_analyze(analyze_file(A100), "text", top=3).split())
