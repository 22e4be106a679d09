"""Extern calls of ATen ops other than GEMMs, convolutions and attention. The copy Inductor
writes as a method of its destination (``buf3.copy_(buf4, False)``, into a complex tensor) is an
extern call like the others, with its call site, source line, module and bytes; FFT calls count
their FLOPs by the FFT benchmarks' convention; views move no data and get no % of a limit; an
int8 GEMM counts its operations and is held against no float ceiling (core/modparse.extern_line,
core/other_ops.py, core/ceilings.py). On the real modules torch 2.13.0+cpu wrote for
tests/fixtures/other_ops/ (its README), and a real CPU run of the FFT model
(tests/fixtures/runs/cpu_fft_inference: its breakdown.json as the analysis of that day wrote it,
before copies were read as calls) analysed again from its saved trace."""

from __future__ import annotations

import json
import math
import shutil

import pytest

from inductor_bench.core.analysis import reanalyze
from inductor_bench.core.attribution import call_origins
from inductor_bench.core.buffers import CallArgs, Tensor
from inductor_bench.core.callsites import parse_calls
from inductor_bench.core.ceilings import NO_CEILING, NO_DATA, Ceilings, kernel_roof
from inductor_bench.core.graph_work import call_work
from inductor_bench.core.modparse import COPY_CALLEE, extern_line, parse_module
from inductor_bench.core.other_ops import typed_alike
from inductor_bench.core.peaks import INT8
from inductor_bench.core.results import KernelStat
from inductor_bench.render.roofline_marks import bound_words

from .conftest import FIXTURES

HERE = FIXTURES / "other_ops"
RUN = FIXTURES / "runs" / "cpu_fft_inference"
FFT_GRAPH = RUN / "graphs" / "0-inference"  # the FFT model's module and lowering record
MODULE = FFT_GRAPH / "module.py"
B, S, D = 16, 64, 128  # the model's input: batch, rows, features (fft_model.py)
COMPLEX64, FP32, INT32 = 8, 4, 4
CEIL = Ceilings("test device", gbps=15.8, tflops={"fp32": 0.08})


def _module():
    text = MODULE.read_text()
    return text, parse_module(text)


def test_a_copy_written_as_a_method_is_an_extern_call_writing_its_destination():
    text, module = _module()
    calls = parse_calls(text, module)
    externs = [(c.name, c.written) for c in calls if c.extern]
    assert externs[:4] == [
        (COPY_CALLEE, ["buf3"]), ("torch.ops.aten._fft_c2c.default", ["buf6"]),
        ("torch.ops.aten.view_as_real.default", ["buf8"]), ("extern_kernels.mm", ["buf11"]),
    ]
    assert [c.callee for c in module.externs].count(COPY_CALLEE) == 2  # one per block
    assert [c.index for c in calls if c.extern] == list(range(8))


@pytest.mark.parametrize("line, args", [
    ("        buf3.copy_(buf4, False)", "buf3, buf4, False)"),  # torch 2.6 and later
    ("        buf3.copy_(buf4)", "buf3, buf4)"),  # torch 2.5
])
def test_both_spellings_of_the_copy_are_read(line, args):
    e = extern_line(line)
    assert e is not None and (e.callee, e.into, e.lhs, e.args) == (COPY_CALLEE, "buf3", None, args)


def test_other_extern_lines_keep_their_result_and_arguments():
    e = extern_line("        buf6 = torch.ops.aten._fft_c2c.default(buf3, [1, 2], 0, True)")
    assert e is not None and (e.callee, e.lhs, e.into) == ("torch.ops.aten._fft_c2c.default", "buf6", None)
    assert extern_line("        buf3 = buf2; del buf2  # reuse") is None
    assert extern_line("        cpp_fused_native_layer_norm_0(buf1, arg2_1)") is None


def test_the_copy_takes_the_conversion_s_line_and_module_not_the_layer_norm_s():
    """The record lists the copy's origins as every node back to the last realized buffer (the
    layer norm's too) and names no node of its own op: it takes the conversion alone, the
    ``.to(torch.complex64)`` of block 0 and of block 1, both on the model's line 11."""
    text, module = _module()
    calls = parse_calls(text, module)
    record = json.loads((FFT_GRAPH / "sources.json").read_text())
    origins, shapes = call_origins(calls, record)
    copies = [i for i, c in enumerate(calls) if c.name == COPY_CALLEE]
    got = [(origins[i].modules, [ln.line for ln in origins[i].lines]) for i in copies]
    assert got == [(["0"], [11]), (["1"], [11])]
    assert [shapes[i] for i in copies] == [[f"{B}x{S}x{D}"] * 2] * 2


def test_the_copy_moves_its_source_and_its_complex_destination():
    text, module = _module()
    copies = [w for c, w in call_work(module, text) if c.name == COPY_CALLEE]
    assert [w.bytes for w in copies] == [B * S * D * (FP32 + COMPLEX64)] * 2
    assert all(w.flops is None for w in copies)


def test_an_fft_counts_five_n_log_n_per_transform_and_reads_and_writes_complex():
    """``fft2`` over the last two dimensions of (16, 64, 128): 16 transforms of 64·128 points,
    5·N·log₂N FLOPs each; it reads its complex input and writes a complex result of its shape."""
    text, module = _module()
    ffts = [w for c, w in call_work(module, text) if "_fft_c2c" in c.name]
    n = S * D
    assert [w.flops for w in ffts] == [pytest.approx(B * 5 * n * math.log2(n))] * 2
    assert [w.bytes for w in ffts] == [2 * B * S * D * COMPLEX64] * 2
    assert {w.compute for w in ffts} == {"fp32"}


def test_a_view_moves_no_data_and_is_not_judged():
    text, module = _module()
    views = [w for c, w in call_work(module, text) if "view_as_real" in c.name]
    assert [(w.bytes, w.flops) for w in views] == [(0.0, None)] * 2
    k = KernelStat("aten::view_as_real", "extern_other", 2.0, 0.03, bytes=0.0)
    roof = kernel_roof(k, CEIL, "cpu")
    assert (roof.pct, roof.bound, roof.gbps) == (None, NO_DATA, None)
    assert bound_words(roof) == "- (a view: moves no data)"


def test_real_and_inverse_ffts_count_half_the_work_and_return_their_own_type():
    """``rfft`` of (8, 1024) float32: 2.5·N·log₂N per row, returning a one-sided complex64
    spectrum (8, 513); ``irfft`` back to 1024 points from it: the real output's size counts (its
    argument), and it returns float32. Each result counted at its own type, not its input's."""
    text = (HERE / "rfft_inference.py").read_text()
    work = {c.name.split(".")[-2]: w for c, w in call_work(parse_module(text), text)}
    rows, n, half = 8, 1024, 513
    assert work["_fft_r2c"].flops == work["_fft_c2r"].flops == pytest.approx(rows * 2.5 * n * 10)
    assert work["_fft_r2c"].bytes == rows * n * FP32 + rows * half * COMPLEX64
    assert work["_fft_c2r"].bytes == rows * half * COMPLEX64 + rows * n * FP32
    assert work["mul"].bytes == 2 * rows * half * COMPLEX64 + half * FP32  # complex times real weights


def test_an_fft_of_a_dimension_it_does_not_have_is_not_counted():
    from inductor_bench.core.buffers import CallArgs, Tensor
    from inductor_bench.core.other_ops import fft_flops

    call = CallArgs("x", True, ["buf0", "[5]", "0", "True"], {}, tensors=[Tensor((8, 1024), "complex64")])
    assert fft_flops("_fft_c2c", call) is None


def test_a_result_s_type_is_its_out_dtype_where_the_call_names_one():
    from inductor_bench.core.buffers import CallArgs, Tensor
    from inductor_bench.core.module_calls import result_dtype

    fp8 = [Tensor((64, 256), "float8_e4m3fn"), Tensor((256, 256), "float8_e4m3fn")]
    named = CallArgs("torch.ops.aten._scaled_mm.default", True, ["a", "b"], {"out_dtype": "torch.bfloat16"},
                     tensors=fp8)
    assert result_dtype(named) == "bfloat16"
    assert result_dtype(CallArgs("torch.ops.aten._grouped_mm.default", True, ["a", "b"], {"out_dtype": "None"},
                                 tensors=[Tensor((64, 128), "bfloat16")])) == "bfloat16"


def test_an_int8_gemm_counts_2mnk_operations_held_against_the_int8_ceiling_only():
    """``_int_mm`` of an int8 (64, 256) by an int8 (256, 256) into int32: 2·M·N·K integer
    operations, held against the measured int8 ceiling; held against the fp32 ceiling, or judged
    on its bytes, it would be called 0.2% of a limit it does not have, so without an int8
    ceiling it gets no %."""
    text = (HERE / "int8_inference.py").read_text()
    module = parse_module(text)
    gemms = [w for c, w in call_work(module, text) if c.name == "extern_kernels._int_mm"]
    m, k, n = 64, 256, 256
    assert [(w.flops, w.compute) for w in gemms] == [(2.0 * m * n * k, INT8)] * 2
    assert [w.bytes for w in gemms] == [m * k + k * n + m * n * INT32] * 2  # int8 in, int32 out
    stat = KernelStat("aten::_int_mm", "extern_gemm", 1.0, 4.2, bytes=gemms[0].bytes,
                      flops=gemms[0].flops, compute=INT8)
    roof = kernel_roof(stat, CEIL, "cpu")
    assert (roof.pct, roof.bound) == (None, NO_CEILING)
    assert roof.tflops == pytest.approx(2.0 * m * n * k / 4.2e-3 / 1e12)
    assert bound_words(roof) == "- (no ceiling for its compute type)"
    int8 = Ceilings("test device", gbps=15.8, tflops={"fp32": 0.08, "int8": 0.8})
    roof = kernel_roof(stat, int8, "cpu")
    intensity = 2.0 * m * n * k / (m * k + k * n + m * n * INT32)
    assert intensity * 15.8 / 1e3 > 0.8  # past the ridge: the int8 ceiling is its roof
    assert roof.pct == pytest.approx(100.0 * (2.0 * m * n * k / 4.2e-3 / 1e12) / 0.8)
    assert roof.bound == "compute"


def test_a_quantized_onednn_linear_counts_2mnk_integer_operations_from_its_input_and_result():
    """PT2E's int8 linear on CPU (``onednn.qlinear_pointwise``): M·K from its uint8 input, N from
    the result the module asserts (the packed weight's own shape is oneDNN's), held against the
    int8 ceiling: before, it had bytes alone and was called "12%, memory"."""
    gemms = _gemms("qlinear_inference.py", "torch.ops.onednn.qlinear_pointwise.tensor")
    assert [(w.flops, w.compute) for w in gemms] == [(2.0 * 64 * 512 * 1024, INT8), (2.0 * 64 * 1024 * 512, INT8)]
    # the first: a uint8 (64, 512) in, its float32 scale and int32 zero point (0-d), the packed
    # int8 (512, 1024), the weight's 1024 float32 scales and int32 zero points, a float32 bias;
    # a uint8 (64, 1024) out
    assert gemms[0].bytes == 64 * 512 + 4 + 4 + 512 * 1024 + 1024 * (4 + 4 + 4) + 64 * 1024
    stat = KernelStat("onednn::qlinear_pointwise", "extern_gemm", 1.0, 0.133, bytes=gemms[0].bytes,
                      flops=gemms[0].flops, compute=INT8)
    roof = kernel_roof(stat, Ceilings("test device", gbps=39.0, tflops={"fp32": 0.218, "int8": 0.828}), "cpu")
    assert roof.pct == pytest.approx(100.0 * (2.0 * 64 * 512 * 1024 / 0.133e-3 / 1e12) / 0.828)
    assert roof.bound == "compute"


def test_an_int8_cpp_gemm_template_is_held_against_the_int8_ceiling_not_its_scales_fp32():
    """Under max-autotune Inductor writes its own C++ GEMM for PT2E's int8 linear, ``X`` uint8 by
    ``W`` int8 with float32 scales and bias after them: its operands' type is int8, where the
    widest input (float32) would have held it against the fp32 ceiling, at 360-400%."""
    text = (HERE / "qlinear_template_inference.py").read_text()
    work = {c.name: w for c, w in call_work(parse_module(text), text)}
    templates = [w for name, w in work.items() if name.startswith("cpp_fused") and w.flops]
    assert sorted((w.flops, w.compute) for w in templates) == [(2.0 * 64 * 1024 * 512, INT8)] * 2


def test_a_quantized_onednn_convolution_counts_its_integer_operations_per_output_element():
    """``onednn.qconv_pointwise``: 2·(output elements)·(C_in/groups·kh·kw), from the asserted
    result and the packed weight's logical shape; the second convolution has 4 groups."""
    convs = _gemms("qconv_inference.py", "torch.ops.onednn.qconv_pointwise.tensor")
    out = 8 * 32 * 28 * 28
    assert [(w.flops, w.compute) for w in convs] == [(2.0 * out * 16 * 3 * 3, INT8), (2.0 * out * 8 * 3 * 3, INT8)]


def test_a_weight_only_int8_gemm_is_a_gemm_of_its_activations_type():
    """torchao's int8 weight-only linear (``_weight_int8pack_mm``): 2·M·N·K, held against the
    bfloat16 ceiling of its activations; before, "other ATen" with bytes alone."""
    from inductor_bench.core.classify import classify

    gemms = _gemms("weight_int8_inference.py", "extern_kernels._weight_int8pack_mm")
    assert [(w.flops, w.compute) for w in gemms] == [(2.0 * 16 * 512 * 1024, "fp16/bf16")] * 2
    # bf16 (16, 512) in, int8 (1024, 512) weight, 1024 bf16 scales, bf16 (16, 1024) out
    assert gemms[0].bytes == 16 * 512 * 2 + 1024 * 512 + 1024 * 2 + 16 * 1024 * 2
    assert classify("aten::_weight_int8pack_mm") == classify("aten::_weight_int4pack_mm_for_cpu") == "extern_gemm"


@pytest.mark.parametrize("callee, op", [
    ("extern_kernels.addmm", "addmm"), ("aten.convolution_backward.default", "convolution_backward"),
    ("aten.copy_", "copy_"), ("aten.view.dtype", "view"), ("torch.ops.aten._fft_c2c.default", "_fft_c2c"),
    ("torch.ops.mkldnn._linear_pointwise.binary", "_linear_pointwise"),
    ("torch.ops.aten.view_as_real", "view_as_real"),
])
def test_the_op_of_an_extern_callee_whatever_its_overload(callee, op):
    from inductor_bench.core.extern_work import extern_op

    assert extern_op(callee) == op


def _gemms(module_file: str, callee: str):
    text = (HERE / module_file).read_text()
    return [w for c, w in call_work(parse_module(text), text) if c.name == callee]


def test_an_fp8_scaled_gemm_counts_2mnk_held_against_the_fp8_ceiling_not_its_scales():
    """``_scaled_mm`` of a (64, 256) by a (256, 256) float8_e4m3fn with two float32 scales, into
    bfloat16: its type is its operands' (fp8), not the scales' float32 (the widest input), so on
    a device with an fp8 ceiling it is held against that one, and here, with none, gets no %."""
    gemms = _gemms("fp8_inference.py", "extern_kernels._scaled_mm")
    m, k, n = 64, 256, 256
    assert [(w.flops, w.compute) for w in gemms] == [(2.0 * m * n * k, "fp8")] * 2
    assert [w.bytes for w in gemms] == [m * k + k * n + 2 * FP32 + m * n * 2] * 2  # fp8, scales, bf16 out
    stat = KernelStat("aten::_scaled_mm", "extern_gemm", 1.0, 0.85, bytes=gemms[0].bytes,
                      flops=gemms[0].flops, compute="fp8")
    assert kernel_roof(stat, CEIL, "cpu").bound == NO_CEILING
    fp8 = Ceilings("test device", gbps=15.8, tflops={"fp32": 0.08, "fp8": 0.2})
    roof = kernel_roof(stat, fp8, "cpu")
    assert roof.pct == pytest.approx(100.0 * (2.0 * m * n * k / 0.85e-3 / 1e12) / 0.2)
    assert roof.bound == "compute"


def test_a_grouped_gemm_counts_every_token_once_whatever_the_offsets():
    """A mixture of experts' ``_grouped_mm``: 64 tokens (64, 128) sorted by expert, each group
    multiplied by its expert's (128, 96) of a (4, 128, 96): 2·64·128·96 however the offsets
    split the tokens; it reads the tokens, every expert's weight and the 4 offsets, and writes
    (64, 96) bfloat16."""
    (w,) = _gemms("grouped_inference.py", "extern_kernels._grouped_mm")
    assert (w.flops, w.compute) == (2.0 * 64 * 128 * 96, "fp16/bf16")
    assert w.bytes == 2 * (64 * 128 + 4 * 128 * 96 + 64 * 96) + 4 * 4


@pytest.mark.parametrize("a, b, flops", [
    ((64, 128), (4, 128, 96), 2 * 64 * 128 * 96),  # tokens sorted by expert
    ((4, 16, 128), (4, 128, 96), 2 * 4 * 16 * 128 * 96),  # a batch per group
    ((64, 512), (512, 96), 2 * 64 * 512 * 96),  # groups along K
    ((4, 16, 128), (128, 384), 2 * 16 * 128 * 384),  # groups along N
])
def test_each_form_of_a_grouped_gemm(a, b, flops):
    from inductor_bench.core.buffers import Tensor
    from inductor_bench.core.other_ops import gemm_flops

    assert gemm_flops("_grouped_mm", [Tensor(a, "bfloat16"), Tensor(b, "bfloat16")]) == flops
    same_rank = flops if len(a) == len(b) else None  # mm and bmm take only those
    assert gemm_flops("mm", [Tensor(a, "float32"), Tensor(b, "float32")]) == same_rank


def test_a_fused_encoder_layer_counts_its_gemms_and_attention():
    """``nn.TransformerEncoderLayer``'s fast path in inference, one call per layer: on 8 x 64
    tokens of width 128 with 4 heads and a feed-forward of 256, the QKV projection 2·T·E·3E,
    the output projection 2·T·E·E, the feed-forward 2·(2·T·E·F) and attention 4·B·L·L·E (T =
    B·L tokens). Its bytes alone had called it 2% of the bandwidth."""
    layers = _gemms("encoder_inference.py", "torch.ops.aten._transformer_encoder_layer_fwd.default")
    b, length, e, f = 8, 64, 128, 256
    t = b * length
    expected = 2 * t * e * 3 * e + 2 * t * e * e + 2 * (2 * t * e * f) + 4 * b * length * length * e
    assert [(w.flops, w.compute) for w in layers] == [(float(expected), "fp32")] * 2


def test_a_fused_attention_of_a_query_over_a_longer_key():
    """``_native_multi_head_attention`` (``nn.MultiheadAttention``'s fast path) of 32 queries
    over 96 keys, batch 8, width 128: Q projected for the queries, K and V for the keys, the
    two products over all heads, and the output projection."""
    from inductor_bench.core.buffers import CallArgs, Tensor
    from inductor_bench.core.other_ops import other_flops

    ts = [Tensor((8, 32, 128), "float32"), Tensor((8, 96, 128), "float32"), Tensor((8, 96, 128), "float32"),
          None, None, Tensor((384, 128), "float32"), Tensor((384,), "float32"), Tensor((128, 128), "float32")]
    call = CallArgs("torch.ops.aten._native_multi_head_attention.default", True, ["x"] * 8, {}, tensors=ts)
    b, lq, s, e = 8, 32, 96, 128
    expected = 2 * b * lq * e * e + 2 * b * s * e * 2 * e + 4 * b * lq * s * e + 2 * b * lq * e * e
    assert other_flops("_native_multi_head_attention", call) == expected


def test_the_fp8_gemm_count_is_what_torchs_flop_counter_counts():
    """The independent measurement: torch's own ``FlopCounterMode`` over the same ``_scaled_mm``
    (the fixture's shapes, on meta tensors: the count needs only shapes, and torch 2.5 has no
    CPU ``_scaled_mm``)."""
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode, flop_registry

    if torch.ops.aten._scaled_mm not in flop_registry:
        pytest.skip(f"torch {torch.__version__}'s FlopCounterMode does not count _scaled_mm")
    a = torch.randn(64, 256, device="meta").to(torch.float8_e4m3fn)
    b = torch.randn(256, 256, device="meta").to(torch.float8_e4m3fn).t().contiguous().t()  # column-major
    one = torch.tensor(1.0, device="meta")
    with FlopCounterMode(display=False) as counter:
        torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    (first, _) = _gemms("fp8_inference.py", "extern_kernels._scaled_mm")
    assert first.flops == counter.get_total_flops() == 2 * 64 * 256 * 256



def test_a_saved_run_analysed_again_splits_the_copies_by_call_site(tmp_path):
    """The run's recorded analysis left its two copies one row with no source; analysed again
    from the same trace each is a call site of its own block's line 11, the two sites add up to
    the op's row, and the views get 0 bytes and no %."""
    before = json.loads((RUN / "breakdown.json").read_text())["graphs"][0]
    (copy_row,) = [k for k in before["kernels"] if k["name"] == "aten::copy_"]
    assert "not one of its calls" in copy_row["origin"]["missing"]
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    result, done = reanalyze(run)
    assert done == ["0-inference"]
    g = result.graphs[0]
    copies = [s for s in g.sites if s.kernel == "aten::copy_"]
    assert [(s.index, s.origin.modules, [ln.line for ln in s.origin.lines]) for s in copies] == [
        (0, ["0"], [11]), (4, ["1"], [11])]
    (row,) = [k for k in g.kernels if k.name == "aten::copy_"]
    assert sum(s.ms for s in copies) == pytest.approx(row.ms) and row.calls == 2
    (views,) = [k for k in g.kernels if k.name == "aten::view_as_real"]
    assert views.bytes == 0.0 and kernel_roof(views, CEIL, "cpu").bound == NO_DATA


def test_a_linear_solve_counts_its_factorisation_and_substitutions():
    """``torch.linalg.solve`` of a (256, 256) matrix against (256, 64): LU (2/3)·n³ and the two
    triangular solves 2·n²·k, LAPACK's counts; judged on its bytes it was 1% of the bandwidth."""
    (w,) = _gemms("solve_inference.py", "torch.ops.aten._linalg_solve_ex.default")
    n, k = 256, 64
    assert w.flops == pytest.approx(2 / 3 * n**3 + 2 * n * n * k) and w.compute == "fp32"
    # the matrix and the right-hand sides it reads, and the solution it returns: the first
    # element of its tuple result (``buf11 = buf10[0]``, asserted (256, 64)); its info, the
    # fourth, is of no stated type, and its LU and pivots the module never takes
    assert w.bytes == (n * n + n * k + n * k) * FP32


@pytest.mark.parametrize("op, a, b, kwargs, flops", [
    ("linalg_cholesky_ex", (4, 128, 128), None, {}, 4 * 128**3 / 3),
    ("linalg_lu_factor_ex", (128, 128), None, {}, 2 * 128**3 / 3),
    ("linalg_solve_triangular", (128, 128), (128, 16), {}, 128 * 128 * 16),
    ("_linalg_solve_ex", (128, 128), (128,), {}, 2 * 128**3 / 3 + 2 * 128 * 128),  # one vector
    ("_linalg_solve_ex", (128, 128), (16, 128), {"left": "False"}, 2 * 128**3 / 3 + 2 * 128 * 128 * 16),
    ("_linalg_solve_ex", (128, 64), (128, 16), {}, None),  # not square: not a solve it counts
])
def test_each_linear_algebra_count(op, a, b, kwargs, flops):
    from inductor_bench.core.buffers import CallArgs, Tensor
    from inductor_bench.core.other_ops import other_flops

    ts = [Tensor(a, "float32")] + ([Tensor(b, "float32")] if b else [])
    call = CallArgs(f"torch.ops.aten.{op}.default", True, ["x"] * len(ts), kwargs, tensors=ts)
    got = other_flops(op, call)
    assert got == (pytest.approx(flops) if flops is not None else None)


def test_an_inverse_and_a_determinant_count_their_lu():
    from inductor_bench.core.buffers import CallArgs, Tensor
    from inductor_bench.core.other_ops import other_flops

    a = [Tensor((2, 64, 64), "float32")]
    assert other_flops("linalg_inv_ex", CallArgs("x", True, ["a"], {}, tensors=a)) == 2 * 2 * 64**3
    assert other_flops("_linalg_det", CallArgs("x", True, ["a"], {}, tensors=a)) == pytest.approx(2 * 2 * 64**3 / 3)


def test_an_svd_is_arithmetic_not_counted_not_a_memory_verdict():
    """An SVD's work has no fixed count: on its bytes it would be called memory-bound far below
    the bandwidth. It keeps its GB/s and gets no %; an ATen op that is a pass over its tensors
    (an index) keeps its memory verdict."""
    from inductor_bench.core.ceilings import ARITHMETIC

    svd = KernelStat("aten::_linalg_svd", "extern_other", 1.0, 2.0, bytes=1e6)
    roof = kernel_roof(svd, CEIL, "cpu")
    assert (roof.pct, roof.bound, roof.gbps) == (None, ARITHMETIC, pytest.approx(1e6 / 2e-3 / 1e9))
    assert bound_words(roof) == "- (its arithmetic: FLOPs not counted)"
    index = KernelStat("aten::index", "extern_other", 1.0, 2.0, bytes=1e6)
    assert kernel_roof(index, CEIL, "cpu").bound == "memory"


# Synthetic, in the layout torch writes for an extern op with a tuple result (a fallback's
# elements taken as ``buf[i]`` and asserted one by one): torch 2.14+'s typed asserts, then
# torch 2.13's untyped ones.
TOPK_MODULE = '''# AOT ID: ['0_inference']
class Runner:
    def call(self, args):
        arg0_1, = args
        assert_size_stride(arg0_1, (64, 1024), (1024, 1), 'input')
        buf0 = torch.ops.aten.topk.default(arg0_1, 8)
        buf1 = buf0[0]
        %(assert)s(buf1, (64, 8), (8, 1)%(values)s'torch.ops.aten.topk.default')
        buf2 = buf0[1]
        %(assert)s(buf2, (64, 8), (8, 1)%(indices)s'torch.ops.aten.topk.default')
        del buf0
        return (buf1, buf2, )

def get_args():
    from torch._dynamo.testing import rand_strided
    arg0_1 = rand_strided((64, 1024), (1024, 1), device='cpu', dtype=torch.float32)
    return [arg0_1]
'''


@pytest.mark.parametrize("asserts, returned", [
    ({"assert": "assert_tensor_metadata", "values": ", torch.float32, ", "indices": ", torch.int64, "},
     64 * 8 * FP32 + 64 * 8 * 8),  # both elements, each of its stated type
    ({"assert": "assert_size_stride", "values": ", ", "indices": ", "},
     64 * 8 * FP32),  # the first element is of the call's type; the indices' type is unsaid
])
def test_a_tuple_result_counts_the_elements_the_module_takes(asserts, returned):
    """``topk`` of a (64, 1024) float32 tensor returns its values and indices as a tuple; each is
    taken as ``buf0[i]`` and asserted. The call's bytes are its input and those elements (before,
    a tuple result added nothing)."""
    text = TOPK_MODULE % asserts
    ((call, work),) = call_work(parse_module(text), text)
    assert sorted(call.returned_items) == [0, 1] and call.returned is None
    assert work.bytes == 64 * 1024 * FP32 + returned


def test_an_embedding_bag_reads_the_rows_its_indices_pick_not_its_table():
    """Two ``nn.EmbeddingBag`` lookups of 5,120 indices (256 bags of 20) in 10,000 x 64 float32
    tables: each reads 5,120 rows of 64 floats (1.31 MB, not the 2.56 MB table: counted whole,
    it read as "150% of the bandwidth"), its int64 indices and offsets, and writes its (256, 64)
    output, the first element of its tuple result."""
    bags = _gemms("bag_inference.py", "torch.ops.aten._embedding_bag.default")
    lookups, rows, dim, batch = 5120, 10000, 64, 256
    expected = lookups * dim * FP32 + lookups * 8 + batch * 8 + batch * dim * FP32
    assert lookups * dim < rows * dim
    assert [w.bytes for w in bags] == [expected] * 2 and [w.flops for w in bags] == [None] * 2


@pytest.mark.parametrize("table, indices, read", [
    ((10000, 64), (5120,), 5120 * 64 * FP32),  # fewer lookups than rows: one row each
    ((100, 64), (5120,), 100 * 64 * FP32),  # more lookups than rows: at most the table
    ((10000, 64), (8, 20), 160 * 64 * FP32),  # 2-D indices (fixed-size bags): all of them
    ((10000, 64), None, None),  # indices of unknown shape: not counted
])
def test_a_gathers_table_bytes_are_its_picked_rows_at_most_the_table(table, indices, read):
    from inductor_bench.core.buffers import Tensor
    from inductor_bench.core.other_ops import gathered_bytes

    ts = [Tensor(table, "float32"), Tensor(indices, "int64") if indices else None]
    assert gathered_bytes(ts) == read


def test_sorting_and_searching_are_comparisons_not_a_memory_verdict():
    """The router's sort of 256 x 4096 probabilities took 73.5 ms on this CPU for 8.4 MB: "0.7%
    of the bandwidth, memory"; its binary search of one value per row, 0.15 ms for the 4 MB of
    rows it is passed (it reads a dozen elements of each): "181%, in cache". Their time is
    comparisons: GB/s kept, no %. A cumulative sum, a pass over its tensor, keeps its memory
    verdict. The sort's bytes: its input and the values it returns (float32); its indices are
    of a type the module does not say (torch 2.13)."""
    from inductor_bench.core.ceilings import COMPARISONS

    (sort,) = _gemms("router_inference.py", "torch.ops.aten.sort.stable")
    assert sort.bytes == 2 * 256 * 4096 * FP32 and sort.flops is None
    (search,) = _gemms("router_inference.py", "torch.ops.aten.searchsorted.Tensor")
    assert search.bytes == 256 * 4096 * FP32 + 256 * FP32 + 256 * 8  # rows, values, int64 positions
    for name, ms, work in [("aten::sort", 73.517, sort), ("aten::searchsorted", 0.147, search),
                           ("aten::topk", 0.090, None)]:
        k = KernelStat(name, "extern_other", 1.0, ms, bytes=work.bytes if work else 18432.0)
        roof = kernel_roof(k, CEIL, "cpu")
        assert (roof.pct, roof.bound) == (None, COMPARISONS)
        assert roof.gbps == pytest.approx(k.bytes / (ms / 1e3) / 1e9)
        assert bound_words(roof) == "- (sorting or searching: comparisons not counted)"
    cumsum = KernelStat("aten::cumsum", "extern_other", 1.0, 1.390, bytes=2 * 256 * 4096 * FP32)
    assert kernel_roof(cumsum, CEIL, "cpu").bound == "memory"


# Synthetic, in the layout of torch 2.13's CPU module of a segment max (``scatter_reduce`` of a
# (16, 16, 4096) tensor into (16, 16, 64) by one row of 4,096 segment ids, expanded): its call
# line as torch wrote it, and a batched GEMM whose first operand is one matrix expanded to the
# batch.
BROADCAST_MODULE = '''# AOT ID: ['0_inference']
class Runner:
    def call(self, args):
        arg0_1, arg1_1, arg2_1, arg3_1 = args
        assert_size_stride(arg0_1, (1, 1, 4096), (4096, 4096, 1), 'input')
        assert_size_stride(arg1_1, (16, 16, 4096), (65536, 4096, 1), 'input')
        assert_size_stride(arg2_1, (64, 32), (32, 1), 'input')
        assert_size_stride(arg3_1, (8, 32, 16), (512, 16, 1), 'input')
        buf0 = empty_strided_cpu((16, 16, 64), (1024, 64, 1), torch.float32)
        aten.scatter_reduce_.two(buf0,2,reinterpret_tensor(arg0_1, (16, 16, 4096), (0, 0, 1), 0),arg1_1, reduce='amax', include_self=False)
        buf1 = empty_strided_cpu((8, 64, 16), (1024, 16, 1), torch.float32)
        extern_kernels.bmm(reinterpret_tensor(arg2_1, (8, 64, 32), (0, 32, 1), 0), arg3_1, out=buf1)
        return (buf0, buf1, )

def get_args():
    from torch._dynamo.testing import rand_strided
    arg0_1 = rand_strided((1, 1, 4096), (4096, 4096, 1), device='cpu', dtype=torch.int64)
    arg1_1 = rand_strided((16, 16, 4096), (65536, 4096, 1), device='cpu', dtype=torch.float32)
    arg2_1 = rand_strided((64, 32), (32, 1), device='cpu', dtype=torch.float32)
    arg3_1 = rand_strided((8, 32, 16), (512, 16, 1), device='cpu', dtype=torch.float32)
    return [arg0_1, arg1_1, arg2_1, arg3_1]
'''


def test_a_broadcast_view_moves_the_elements_its_memory_holds():
    """An expanded view (a stride of 0) repeats the same elements: the segment ids, 4,096 int64
    expanded to 16 x 16 x 4096, are 32 kB read over and over, not 8.4 MB (counted at the view's
    shape the call read as 12.6 MB). A batched GEMM of one (64, 32) matrix expanded to 8
    batches still does 2·B·M·N·K FLOPs, but reads the matrix once."""
    text = BROADCAST_MODULE
    scatter, bmm = (w for _, w in call_work(parse_module(text), text))
    assert scatter.bytes == 16 * 16 * 64 * FP32 + 4096 * 8 + 16 * 16 * 4096 * FP32
    assert bmm.flops == 2 * 8 * 64 * 16 * 32
    assert bmm.bytes == (64 * 32 + 8 * 32 * 16 + 8 * 64 * 16) * FP32


# Synthetic, in the layout of torch 2.13's CPU backward module of a spatial transformer
# (affine_grid, grid_sample): the grid's gradient is the second element of
# grid_sampler_2d_backward's tuple result, of a type the module does not say, and a bmm reads it.
GRID_MODULE = '''# AOT ID: ['0_backward']
class Runner:
    def call(self, args):
        buf39, relu, view_5, buf44 = args
        assert_size_stride(buf39, (16, 16, 32, 32), (16384, 1024, 32, 1), 'input')
        assert_size_stride(relu, (16, 16, 32, 32), (16384, 1024, 32, 1), 'input')
        assert_size_stride(view_5, (16, 32, 32, 2), (2048, 64, 2, 1), 'input')
        assert_size_stride(buf44, (16, 32, 32, 3), (3072, 96, 3, 1), 'input')
        buf40 = torch.ops.aten.grid_sampler_2d_backward.default(buf39, relu, view_5, 0, 0, False, [True, True])
        buf41 = buf40[0]
        assert_size_stride(buf41, (16, 16, 32, 32), (16384, 1024, 32, 1), 'torch.ops.aten.grid_sampler_2d_backward.default')
        buf42 = buf40[1]
        assert_size_stride(buf42, (16, 32, 32, 2), (2048, 64, 2, 1), 'torch.ops.aten.grid_sampler_2d_backward.default')
        del buf40
        buf45 = empty_strided_cpu((16, 3, 2), (6, 2, 1), torch.float32)
        extern_kernels.bmm(reinterpret_tensor(buf44, (16, 3, 1024), (3072, 1, 3), 0), reinterpret_tensor(buf42, (16, 1024, 2), (2048, 2, 1), 0), out=buf45)
        return (buf41, buf45, )

def get_args():
    from torch._dynamo.testing import rand_strided
    buf39 = rand_strided((16, 16, 32, 32), (16384, 1024, 32, 1), device='cpu', dtype=torch.float32)
    relu = rand_strided((16, 16, 32, 32), (16384, 1024, 32, 1), device='cpu', dtype=torch.float32)
    view_5 = rand_strided((16, 32, 32, 2), (2048, 64, 2, 1), device='cpu', dtype=torch.float32)
    buf44 = rand_strided((16, 32, 32, 3), (3072, 96, 3, 1), device='cpu', dtype=torch.float32)
    return [buf39, relu, view_5, buf44]
'''


def test_a_gemm_operand_of_unsaid_type_takes_the_type_its_partner_has():
    """torch runs a GEMM only on operands of one type: the grid's gradient, whose type the
    module does not say, is float32 like the other operand and the output, so the bmm has
    bytes (and so a %) where it had none. The op that returned it counts the element whose type
    it knows."""
    text = GRID_MODULE
    backward, bmm = (w for _, w in call_work(parse_module(text), text))
    assert bmm.bytes == (16 * 3 * 1024 + 16 * 1024 * 2 + 16 * 3 * 2) * FP32
    assert bmm.flops == 2 * 16 * 3 * 2 * 1024 and bmm.compute == "fp32"
    images, grid = 16 * 16 * 32 * 32, 16 * 32 * 32 * 2
    assert backward.bytes == (images + images + grid + images) * FP32  # grad, input, grid; grad_input


# Synthetic, in the layout of torch 2.13's CPU backward module of a diffusers UNet block
# (diffusers 0.42, 2026-12-01): attention's backward returns the gradients of Q, K and V as a
# tuple whose elements' type the module does not say; a buffer reused from one is the gradient
# a convolution_backward reads; and that call's own gradients are elements of its tuple result.
UNSAID_MODULE = '''# AOT ID: ['0_backward']
class Runner:
    def call(self, args):
        grad, q, k, v, out, lse, x, w = args
        assert_size_stride(grad, (2, 8, 256, 4), (8192, 4, 32, 1), 'input')
        assert_size_stride(q, (2, 8, 256, 4), (8192, 4, 32, 1), 'input')
        assert_size_stride(k, (2, 8, 256, 4), (8192, 4, 32, 1), 'input')
        assert_size_stride(v, (2, 8, 256, 4), (8192, 4, 32, 1), 'input')
        assert_size_stride(out, (2, 8, 256, 4), (8192, 4, 32, 1), 'input')
        assert_size_stride(lse, (2, 8, 256), (2048, 256, 1), 'input')
        assert_size_stride(x, (2, 64, 16, 16), (16384, 1, 1024, 64), 'input')
        assert_size_stride(w, (32, 64, 3, 3), (576, 1, 192, 64), 'input')
        buf0 = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default(grad, q, k, v, out, lse, 0.0, False)
        buf1 = buf0[0]
        assert_size_stride(buf1, (2, 8, 256, 4), (8192, 4, 32, 1), 'torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default')
        buf2 = buf0[1]
        assert_size_stride(buf2, (2, 8, 256, 4), (8192, 4, 32, 1), 'torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default')
        buf3 = buf0[2]
        assert_size_stride(buf3, (2, 8, 256, 4), (8192, 4, 32, 1), 'torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default')
        del buf0
        buf4 = reinterpret_tensor(buf2, (2, 32, 16, 16), (8192, 1, 512, 32), 0); del buf2  # reuse
        buf5 = torch.ops.aten.convolution_backward.default(buf4, x, w, [32], (1, 1), (1, 1), (1, 1), False, (0, 0), 1, [True, True, True])
        buf6 = buf5[0]
        assert_size_stride(buf6, (2, 64, 16, 16), (16384, 1, 1024, 64), 'torch.ops.aten.convolution_backward.default')
        buf7 = buf5[1]
        assert_size_stride(buf7, (32, 64, 3, 3), (576, 1, 192, 64), 'torch.ops.aten.convolution_backward.default')
        del buf5
        return (buf1, buf3, buf6, buf7, )

def get_args():
    from torch._dynamo.testing import rand_strided
    grad = rand_strided((2, 8, 256, 4), (8192, 4, 32, 1), device='cpu', dtype=torch.float32)
    q = rand_strided((2, 8, 256, 4), (8192, 4, 32, 1), device='cpu', dtype=torch.float32)
    k = rand_strided((2, 8, 256, 4), (8192, 4, 32, 1), device='cpu', dtype=torch.float32)
    v = rand_strided((2, 8, 256, 4), (8192, 4, 32, 1), device='cpu', dtype=torch.float32)
    out = rand_strided((2, 8, 256, 4), (8192, 4, 32, 1), device='cpu', dtype=torch.float32)
    lse = rand_strided((2, 8, 256), (2048, 256, 1), device='cpu', dtype=torch.float32)
    x = rand_strided((2, 64, 16, 16), (16384, 1, 1024, 64), device='cpu', dtype=torch.float32)
    w = rand_strided((32, 64, 3, 3), (576, 1, 192, 64), device='cpu', dtype=torch.float32)
    return [grad, q, k, v, out, lse, x, w]
'''


def test_a_convolution_and_attention_take_one_type_for_tensors_of_unsaid_type():
    """A convolution's tensors, and attention's 4-D ones, share one type (torch refuses mixed
    ones): the convolution_backward reading a buffer reused from an element of attention's tuple result after the first had no
    byte count (the diffusers UNet's up_blocks.1.resnets.1.conv1 showed no %), and would have
    counted its gradients at 0 bytes an element."""
    text = UNSAID_MODULE
    attn, conv = (w for _, w in call_work(parse_module(text), text))
    grad, x, w = 2 * 32 * 16 * 16, 2 * 64 * 16 * 16, 32 * 64 * 3 * 3
    assert conv.bytes == (grad + x + w + x + w + 32) * FP32  # reads grad, input, weight; writes dx, dw, db
    assert conv.flops == 2 * (2 * 32 * 16 * 16) * (64 * 3 * 3) * 2 and conv.compute == "fp32"
    q, kv, lse = 2 * 8 * 256 * 4, 2 * 8 * 256 * 4, 2 * 8 * 256
    assert attn.bytes == (q + q + kv + kv + q + lse + q + kv + kv) * FP32  # grad, q, k, v, out, lse; dq, dk, dv


def test_attention_gives_its_4d_tensors_of_unsaid_type_the_type_of_the_others():
    """Synthetic: a bfloat16 attention backward whose key is of unsaid type gets bfloat16 for it
    and for its gradients, and its float32 logsumexp (3-D) keeps its own type; an op outside
    the rules (a custom op) is left as it is."""
    q, lse = Tensor((2, 8, 64, 16), "bfloat16"), Tensor((2, 8, 64), "float32")
    k = Tensor((2, 8, 64, 16), None)
    call = CallArgs("torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default", True, [], {},
                    tensors=[q, q, k, q, q, lse], returned_items={1: Tensor((2, 8, 64, 16), None)})
    typed = typed_alike("_scaled_dot_product_flash_attention_for_cpu_backward", call)
    assert [t.dtype for t in typed.tensors] == ["bfloat16"] * 5 + ["float32"]
    assert typed.returned_items[1].dtype == "bfloat16"
    assert typed_alike("twice", call) is call


def test_the_magnitude_of_a_complex_spectrum_is_counted_at_its_real_type():
    """``abs`` of rfft's complex64 (16, 124, 129) spectrum (tests/fixtures/other_ops/
    spectrogram_inference.py) reads 8 bytes an element and writes a float32 of 4: counted at the
    input's type on both sides it would read 4.09 MB, not 3.07."""
    text = (HERE / "spectrogram_inference.py").read_text()
    work = {c.name.split(".")[-2]: w for c, w in call_work(parse_module(text), text) if c.name.startswith("torch.")}
    n = 16 * 124 * 129
    assert work["abs"].bytes == n * COMPLEX64 + n * FP32
    assert work["_fft_r2c"].bytes == 16 * 124 * 256 * FP32 + n * COMPLEX64


# synthetic, in the shapes torch 2.13 and 2.5 gave a model file's custom op (``x * 2`` of a
# 256 x 256 float32 tensor): 2.13 asserts the result after the call, 2.5 asserts none
CUSTOM_OP_CALL = '''
def call(args):
    arg0_1, = args
    args.clear()
    assert_size_stride(arg0_1, (256, 256), (256, 1))
    buf0 = empty_strided_cpu((256, 256), (256, 1), torch.float32)
    buf1 = torch.ops.inductor_bench_test.twice.default(buf0)
    del buf0
%s    return (buf1, )
'''
ASSERTED = "    assert_size_stride(buf1, (256, 256), (256, 1), 'torch.ops.inductor_bench_test.twice.default')\n"


def test_an_extern_result_of_unstated_size_gives_no_byte_count_rather_than_half_of_one():
    (_, stated), = call_work(parse_module(CUSTOM_OP_CALL % ASSERTED), CUSTOM_OP_CALL % ASSERTED)
    assert stated.bytes == 2 * 256 * 256 * 4  # what it reads and what it returns
    (_, unstated), = call_work(parse_module(CUSTOM_OP_CALL % ""), CUSTOM_OP_CALL % "")
    assert unstated.bytes is None and unstated.flops is None


def test_a_recorded_gpu_modules_custom_op_has_no_byte_count():
    """torch 2.6 on an H100 (``fixtures/gpu_modules``): ``buf3 = torch.ops.test.baz.default(buf2)``
    with nothing said of buf3's size; the (1, 320, 128, 128) float32 kernel output it reads is known."""
    path = FIXTURES / "gpu_modules" / "h100_torch2.6_dropout_customop__simple.log.1.py"
    text = path.read_text()
    (baz, work), = [(c, w) for c, w in call_work(parse_module(text), text) if "baz" in c.name and c.extern]
    assert baz.result == "buf3" and baz.tensors[0].shape == (1, 320, 128, 128)
    assert work.bytes is None
