"""Bytes, FLOPs and the roofline verdicts: hand-built modules with known shapes, the real CPU
run directory, Triton kernel files Inductor wrote (with its own ``kernel_num_gb``), CUDA
modules generated without a GPU and recorded on GPUs, every count computed here by hand."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from inductor_bench.core.analysis import reanalyze
from inductor_bench.core.ceilings import (
    COMPUTE,
    LATENCY,
    MEMORY,
    NOT_ITS_DATA,
    Ceilings,
    Roofline,
    datasheet_for,
    kernel_roof,
)
from inductor_bench.core.conv_attention import conv_output_shape
from inductor_bench.core.dtypes import dtype_bytes
from inductor_bench.core.graph_work import call_work, count_work
from inductor_bench.core.kernelfile import read_kernel_file
from inductor_bench.core.modparse import parse_module, read_module
from inductor_bench.core.module_calls import module_calls
from inductor_bench.core.result_json import result_json
from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
from inductor_bench.core.roofline import category_far_below_ms
from inductor_bench.core.work import FROM_BUFFERS, FROM_INDUCTOR, RANDOM_NOTE, with_random_note
from inductor_bench.render.roofline_marks import bound_words

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "gpu-artifacts"
STALLED = FIXTURES / "runs" / "cpu_mlp_train_stalled"

# A hand-built CPU module: one C++ kernel reading a (64, 512) input and a (512,) weight, writing
# a (64, 512) output and updating a (64, 1) buffer in place; one addmm; one bmm; a convolution
# returning its result, and its backward for both gradients.
HAND_MODULE = '''# AOT ID: ['0_forward']
cpp_fused_k_0 = async_compile.cpp_pybinding(['float*', 'const float*', 'const bfloat16*', 'float*'], r\'\'\'
extern "C"  void  kernel(float* in_out_ptr0,
                       const float* in_ptr0,
                       const bfloat16* in_ptr1,
                       float* out_ptr0)
{
}
\'\'\')

class Runner:
    def call(self, args):
        arg0_1, arg1_1, arg2_1, arg3_1, arg4_1 = args
        assert_size_stride(arg0_1, (64, 512), (512, 1), 'input')
        assert_size_stride(arg1_1, (512, ), (1, ), 'input')
        buf0 = empty_strided_cpu((64, 1), (1, 64), torch.float32)
        buf1 = buf0; del buf0  # reuse
        buf2 = empty_strided_cpu((64, 512), (512, 1), torch.float32)
        cpp_fused_k_0(buf1, arg0_1, arg1_1, buf2)
        buf3 = empty_strided_cpu((64, 128), (128, 1), torch.float32)
        extern_kernels.addmm(arg2_1, buf2, reinterpret_tensor(arg3_1, (512, 128), (1, 512), 0), alpha=1, beta=1, out=buf3)
        buf4 = empty_strided_cpu((8, 64, 32), (2048, 32, 1), torch.float32)
        extern_kernels.bmm(reinterpret_tensor(buf3, (8, 64, 16), (1024, 16, 1), 0), reinterpret_tensor(arg4_1, (8, 16, 32), (512, 32, 1), 0), out=buf4)
        buf5 = extern_kernels.convolution(arg5_1, arg6_1, stride=(2, 2), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
        buf6 = torch.ops.aten.convolution_backward.default(buf7, arg5_1, arg6_1, [0], [2, 2], [1, 1], [1, 1], False, [0, 0], 1, [True, True, False])
        return (buf4, )

def get_args():
    from torch._dynamo.testing import rand_strided
    arg0_1 = rand_strided((64, 512), (512, 1), device='cpu', dtype=torch.float32)
    arg1_1 = rand_strided((512, ), (1, ), device='cpu', dtype=torch.bfloat16)
    arg2_1 = rand_strided((128, ), (1, ), device='cpu', dtype=torch.float32)
    arg3_1 = rand_strided((128, 512), (512, 1), device='cpu', dtype=torch.float32)
    arg4_1 = rand_strided((8, 16, 32), (512, 32, 1), device='cpu', dtype=torch.float32)
    arg5_1 = rand_strided((2, 3, 32, 32), (3072, 1024, 32, 1), device='cpu', dtype=torch.float32)
    arg6_1 = rand_strided((16, 3, 3, 3), (27, 9, 3, 1), device='cpu', dtype=torch.float32)
    buf7 = rand_strided((2, 16, 16, 16), (4096, 256, 16, 1), device='cpu', dtype=torch.float32)
    return [arg0_1, arg1_1, arg2_1, arg3_1, arg4_1, arg5_1, arg6_1]
'''


def _hand_work():
    return call_work(parse_module(HAND_MODULE), HAND_MODULE)


def test_a_cpp_kernel_moves_its_buffers_once_and_its_in_place_ones_twice():
    (call, work) = _hand_work()[0]
    assert call.name == "cpp_fused_k_0"
    # in_out (64, 1) fp32 twice; (64, 512) fp32 in; (512,) bf16 in; (64, 512) fp32 out
    assert work.bytes == 2 * 64 * 4 + 64 * 512 * 4 + 512 * 2 + 64 * 512 * 4
    assert work.flops is None
    assert work.compute == "fp32"  # the widest float input


def test_gemms_count_two_m_n_k_from_their_shapes():
    works = [w for _, w in _hand_work()]
    addmm, bmm = works[1], works[2]
    m, k, n = 64, 512, 128
    assert addmm.flops == 2 * m * n * k
    assert addmm.bytes == (n + m * k + k * n + m * n) * 4  # bias, both operands, the result
    b, m2, k2, n2 = 8, 64, 16, 32
    assert bmm.flops == 2 * b * m2 * n2 * k2
    assert bmm.bytes == (b * m2 * k2 + b * k2 * n2 + b * m2 * n2) * 4


def test_a_convolution_counts_its_output_times_its_filter():
    conv, backward = (w for _, w in _hand_work()[3:5])
    out_hw = (32 + 2 * 1 - 3) // 2 + 1  # 16
    assert conv_output_shape((2, 3, 32, 32), (16, 3, 3, 3), [2, 2], [1, 1], [1, 1]) == (2, 16, out_hw, out_hw)
    forward_flops = 2 * (2 * 16 * out_hw * out_hw) * (3 * 3 * 3)
    assert conv.flops == forward_flops
    assert conv.bytes == (2 * 3 * 32 * 32 + 16 * 27 + 2 * 16 * out_hw * out_hw) * 4
    assert backward.flops == 2 * forward_flops  # grad_input and grad_weight asked for
    # reads grad_output, input, weight; returns grad_input and grad_weight
    assert backward.bytes == (2 * 16 * 16 * 16 + 2 * 3 * 32 * 32 + 16 * 27 + 2 * 3 * 32 * 32 + 16 * 27) * 4


# Synthetic: a transposed 2-D convolution (x (2, 4, 7, 9), weight (4, 3, 3, 2): C_in 4, C_out 3
# per group), written as Inductor writes it and as a fallback writes it
# positionally, and its backward for both gradients.
TRANSPOSED_MODULE = '''# AOT ID: ['0_forward']
class Runner:
    def call(self, args):
        arg0_1, arg1_1, arg2_1 = args
        buf0 = extern_kernels.convolution(arg0_1, arg1_1, None, stride=(2, 3), padding=(1, 0), dilation=(1, 2), transposed=True, output_padding=(1, 2), groups=%(groups)s)
        buf1 = torch.ops.aten.convolution.default(arg0_1, arg1_1, None, [2, 3], [1, 0], [1, 2], True, [1, 2], %(groups)s)
        buf2 = torch.ops.aten.convolution_backward.default(arg2_1, arg0_1, arg1_1, [0], [2, 3], [1, 0], [1, 2], True, [1, 2], %(groups)s, [True, True, False])
        return (buf0, )

def get_args():
    from torch._dynamo.testing import rand_strided
    arg0_1 = rand_strided((2, 4, 7, 9), (252, 63, 9, 1), device='cpu', dtype=torch.float32)
    arg1_1 = rand_strided((4, 3, 3, 2), (18, 6, 2, 1), device='cpu', dtype=torch.float32)
    arg2_1 = rand_strided(%(out)s, %(stride)s, device='cpu', dtype=torch.float32)
    return [arg0_1, arg1_1, arg2_1]
'''


@pytest.mark.parametrize("groups", [1, 2])
def test_a_transposed_convolution_counts_what_torchs_flop_counter_counts(groups):
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    x = torch.randn(2, 4, 7, 9, requires_grad=True)
    w = torch.randn(4, 3, 3, 2, requires_grad=True)
    geometry = {"stride": (2, 3), "padding": (1, 0), "output_padding": (1, 2), "groups": groups,
                "dilation": (1, 2)}
    with FlopCounterMode(display=False) as forward:
        y = torch.nn.functional.conv_transpose2d(x, w, **geometry)
    with FlopCounterMode(display=False) as backward:
        y.backward(torch.ones_like(y))
    text = TRANSPOSED_MODULE % {"out": tuple(y.shape), "stride": y.stride(), "groups": groups}
    works = [w for _, w in call_work(parse_module(text), text)]
    out = math.prod(y.shape)  # the shape torch gave the result
    for conv in works[:2]:  # the keyword and the positional form
        assert conv.flops == forward.get_total_flops() == 2 * x.numel() * 3 * 3 * 2
        assert conv.bytes == (x.numel() + w.numel() + out) * 4  # x, weight, the result
    # grad_input and grad_weight, each the forward's work; torch's counter, which leaves groups
    # out of grad_weight, agrees without groups
    assert works[2].flops == 2 * forward.get_total_flops()
    if groups == 1:
        assert works[2].flops == backward.get_total_flops()
    assert works[2].bytes == (out + x.numel() + w.numel() + x.numel() + w.numel()) * 4


def test_buffers_follow_reuse_and_views():
    calls = module_calls(HAND_MODULE, parse_module(HAND_MODULE))
    assert calls[0].tensors[0].shape == (64, 1)  # buf1 is buf0 reused
    assert calls[1].tensors[2].shape == (512, 128)  # the view's shape, not arg3_1's
    assert calls[3].result == "buf5"
    assert dtype_bytes("torch.bfloat16") == 2 and dtype_bytes("*fp8e4nv") == 1 and dtype_bytes("i64") == 8


def test_the_recorded_cpu_run_is_counted_from_its_modules(tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(STALLED, run)
    result, _ = reanalyze(run)
    fwd = {k.name: k for k in result.graph("0-forward").kernels}
    # forward: addmm of 64x256 by 256x512, 64x512 by 512x512, 64x512 by 512x64
    assert fwd["aten::addmm"].flops == 2 * 64 * (512 * 256 + 512 * 512 + 64 * 512)
    # cpp_fused_gelu_native_layer_norm_0(buf2, buf4, buf0, primals_4, primals_5, buf5): two
    # (64, 1) in_out buffers, the (64, 512) addmm output, two (512,) weights, a (64, 512) output
    assert fwd["cpp_fused_gelu_native_layer_norm_0"].bytes == (2 * 2 * 64 + 2 * 64 * 512 + 2 * 512) * 4
    assert fwd["cpp_fused_gelu_1"].bytes == 2 * 64 * 512 * 4
    # each addmm call on its own: bias, input, weight (viewed), output; 2·M·N·K
    sizes = [(256, 512), (512, 512), (512, 64)]  # (K, N) of fc1, fc2, fc3; M = 64
    assert result.graph("0-forward").site_counts == [
        [float((n + 64 * k + k * n + 64 * n) * 4), 2.0 * 64 * n * k] for k, n in sizes]
    bwd = {k.name: k for k in result.graph("0-backward").kernels}
    every_gemm_and_cpp = [k for g in result.graphs for k in g.kernels]
    assert all(k.bytes is not None for k in every_gemm_and_cpp)
    assert bwd["aten::mm"].flops is not None and bwd["aten::mm"].compute == "fp32"


# -- CUDA modules: generated without a GPU (2.14.1) and recorded on GPUs (tlparse) -------------


def test_a_generated_cuda_modules_triton_kernel_is_counted_from_its_buffers():
    path = FIXTURES / "codegen_2.14.1" / "mlp_train_default_fwd.py"
    works = {c.name: w for c, w in call_work(read_module(path), path.read_text())}
    # triton_per_fused_gelu_native_layer_norm_0.run(buf4, buf6, buf0, primals_4, primals_5, buf1):
    # in_out (32, 1) and (32, 128) twice each, (32, 128) in, two (128,) in, (32, 1) out; fp32
    per = works["triton_per_fused_gelu_native_layer_norm_0"]
    assert per.bytes == (2 * 32 + 2 * 32 * 128 + 32 * 128 + 2 * 128 + 32) * 4
    # the last addmm: (32, 128) by (128, 16)
    assert works["extern_kernels.addmm"].flops == 2 * 32 * 16 * 128


def test_a_partitioned_module_takes_its_input_shapes_from_get_args():
    path = FIXTURES / "codegen_2.14.1" / "mlpH8192_train_reduce_overhead_fwd.py"
    works = [w for _, w in call_work(read_module(path), path.read_text())]
    assert works[0].flops == 2 * 64 * 8192 * 512  # primals_1 (64, 512) by primals_2 viewed (512, 8192)


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared GPU artifacts are not beside the checkout")
def test_an_a100_module_recorded_on_the_gpu_is_counted_in_fp16():
    path = SHARED / "tlparse" / "modules" / "a100_torch2.9_per_poi_mm_c10d__collectives_parity_rank_0.log.2.py"
    works = [(c.name, w) for c, w in call_work(read_module(path), path.read_text())]
    mm = works[0][1]
    assert works[0][0] == "extern_kernels.mm"
    assert mm.flops == 2 * 1024**3 and mm.bytes == 3 * 1024 * 1024 * 2 and mm.compute == "fp16/bf16"
    name, per = works[1]
    assert name == "triton_per_fused_all_reduce_gelu_native_layer_norm_0"
    assert per.bytes == (2 * 1024 * 1024 + 2 * 1024) * 2  # in_out (1024, 1024) twice, two (1024,)


@pytest.mark.parametrize("name,expected", [
    ("triton_poi_fused_add_sin_0", 2 * 4096 * 4),  # x=4096: in, out
    ("triton_per_fused__softmax_0", 3 * 64 * 128 * 4),  # in_out twice, in
    ("triton_poi_fused_add_t_0", 3 * 256 * 128 * 4),  # two in, out
    ("triton_red_fused_sum_0", (8 * 65536 + 8) * 4),  # (8, 65536) in, (8,) out
])
def test_triton_kernel_files_are_counted_by_inductors_own_estimate(tmp_path, name, expected):
    src = FIXTURES / "triton_kernels" / "cpu" / f"{name}.py"
    assert read_kernel_file(src).num_gb * 1e9 == pytest.approx(expected, abs=0.5)
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / f"{name}.py").write_text(src.read_text())
    k = KernelStat(name, "triton_pointwise", 2.0, 0.01, file=f"k/{name}.py")
    g = GraphResult("0-forward", "forward", device="cuda", kernels=[k])
    module = f"{name} = async_compile.triton('{name}', '''\\n''')\n\nclass Runner:\n    def call(self, args):\n        {name}.run(buf0, 4096, stream=s)\n"
    count_work(g, parse_module(module), module, tmp_path)
    assert k.bytes == pytest.approx(2 * expected, abs=1)  # two launches per iteration
    assert k.work_from == FROM_INDUCTOR


def test_a_triton_template_file_gives_its_flops():
    kf = read_kernel_file(FIXTURES / "triton_kernels" / "cpu" / "triton_tem_fused_mm_0.py")
    assert kf.flop == 2 * 256 * 256 * 256


def test_a_kernel_that_draws_random_numbers_says_so_beside_its_count():
    """A generated kernel's random numbers (dropout's mask) are arithmetic no count holds: the
    recorded H100 module's kernel that draws them (``tl.rand``) says so, the kernel that only
    reads the mask it wrote does not; and the verdict says it beside "memory"."""
    path = FIXTURES / "gpu_modules" / "h100_torch2.6_dropout_customop__simple.log.1.py"
    works = {c.name: w for c, w in call_work(read_module(path), path.read_text())}
    assert works["triton_poi_fused_native_dropout_0"].source == f"{FROM_BUFFERS}; {RANDOM_NOTE}"
    assert works["triton_poi_fused_baz_gelu_native_dropout_1"].source == FROM_BUFFERS
    # torch 2.15's C++ codegen of a dropout mask (a small BERT's training step on CPU), and the
    # other generators Inductor writes: C++ randn and randint64, Triton randn and randint64
    cpp = "result[offset_idx] = normalized_rand_cpu(tmp0, offset[offset_idx]);"
    for src in (cpp, "randn_cpu(tmp0, x0)", "randint64_cpu(tmp0, x0, 0L, 10L)", "tmp2 = tl.randn(tmp0, (tmp1).to(tl.uint32))",
                "tmp2 = triton_helpers.randint64(tmp0, (tmp1).to(tl.uint32), 0, 10)"):
        assert with_random_note(FROM_BUFFERS, src) == f"{FROM_BUFFERS}; {RANDOM_NOTE}", src
    for src in ("primals_1 = rand_strided((4, 64), (64, 1))", "tmp0 = tl.load(in_ptr0 + x0)", "my_rand(x)"):
        assert with_random_note(FROM_BUFFERS, src) == FROM_BUFFERS, src
    k = KernelStat("cpp_fused_native_dropout_0", "cpp_reduction", 1.0, 0.6, bytes=562e3,
                   work_from=f"{FROM_BUFFERS}; {RANDOM_NOTE}")
    roof = kernel_roof(k, Ceilings("cpu", gbps=38.5), "cpu")
    assert roof.bound == "memory" and roof.pct == pytest.approx(100 * 562e3 / 0.6e-3 / 1e9 / 38.5)
    assert bound_words(roof, k) == "memory (and random numbers: not counted)"
    assert bound_words(roof, replace(k, work_from=FROM_BUFFERS)) == bound_words(roof) == "memory"


def test_the_note_stays_where_inductors_own_estimate_counts_the_bytes(tmp_path):
    """Synthetic module around a recorded kernel file that has ``kernel_num_gb``: the bytes are
    Inductor's, and the note, read from the kernel's source in the module, stays."""
    name = "triton_poi_fused_add_sin_0"
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / f"{name}.py").write_text((FIXTURES / "triton_kernels" / "cpu" / f"{name}.py").read_text())
    k = KernelStat(name, "triton_pointwise", 1.0, 0.01, file=f"k/{name}.py")
    g = GraphResult("0-forward", "forward", device="cuda", kernels=[k])
    module = (f"{name} = async_compile.triton('{name}', '''\n@triton.jit\ndef {name}(in_ptr0, out_ptr0, "
              f"load_seed_offset, xnumel, XBLOCK : tl.constexpr):\n    tmp2 = tl.rand(tmp0, (tmp1).to(tl.uint32))\n"
              f"''')\n\nclass Runner:\n    def call(self, args):\n        {name}.run(buf0, 4096, stream=s)\n")
    count_work(g, parse_module(module), module, tmp_path)
    assert k.bytes == pytest.approx(2 * 4096 * 4, abs=0.5)
    assert k.work_from == f"{FROM_INDUCTOR}; {RANDOM_NOTE}"


# -- the verdicts ------------------------------------------------------------------------------

CEIL = Ceilings("test device", gbps=100.0, tflops={"fp32": 1.0})  # ridge at 10 FLOP/byte


def test_a_kernel_below_the_ridge_is_memory_bound_at_its_share_of_bandwidth():
    k = KernelStat("k", "cpp_pointwise", 1.0, 1.0, bytes=50e6, flops=100e6, compute="fp32")
    roof = kernel_roof(k, CEIL, "cpu")
    assert roof.gbps == pytest.approx(50.0) and roof.intensity == pytest.approx(2.0)
    # the roof at 2 FLOP/byte: 2 * 100 GB/s = 0.2 TFLOP/s; achieved 0.1
    assert roof.pct == pytest.approx(50.0) and roof.bound == MEMORY


def test_a_kernel_above_the_ridge_is_compute_bound():
    k = KernelStat("k", "extern_gemm", 1.0, 2.0, bytes=10e6, flops=1e9, compute="fp32")
    roof = kernel_roof(k, CEIL, "cpu")
    assert roof.tflops == pytest.approx(0.5) and roof.pct == pytest.approx(50.0) and roof.bound == COMPUTE


def test_a_kernel_too_short_to_reach_a_limit_is_latency_bound():
    # 100 kB at 100 GB/s takes 1 µs at best: under the host's 10 µs floor
    k = KernelStat("k", "cpp_pointwise", 1.0, 0.004, bytes=100e3)
    roof = kernel_roof(k, CEIL, "cpu")
    assert roof.bound == LATENCY and roof.pct == pytest.approx(25.0)


def test_a_short_ideal_that_took_long_is_slow_not_short():
    """A GELU's tanh on 24k elements: 393 kB in 2 launches, 188 µs each (a GPT-2 layer on
    this CPU at 30.9 GB/s). Its ideal launch is 6.4 µs, under the host's 10 µs floor, but it
    took 188 µs: no launch cost explains that, its arithmetic does. It stays memory-bound, at
    its low %, and counts as far below its limit; at 30 µs a launch it would be short."""
    ceil = replace(CEIL, gbps=30.9)
    slow = KernelStat("gelu", "cpp_pointwise", 2.0, 0.376, bytes=393e3)
    roof = kernel_roof(slow, ceil, "cpu")
    assert roof.bound == MEMORY and roof.pct == pytest.approx(100 * 393e3 / 0.376e-3 / 30.9e9)
    ideal_us = 393e3 / 30.9e9 / 2 * 1e6
    edge_ms = 2 * 2 * (10 + ideal_us) / 1e3  # two launches, each twice the floor plus the ideal
    assert kernel_roof(replace(slow, ms=edge_ms * 0.99), ceil, "cpu").bound == LATENCY
    assert kernel_roof(replace(slow, ms=edge_ms * 1.01), ceil, "cpu").bound == MEMORY
    r = BreakdownResult("m", graphs=[GraphResult("0-inference", "inference", kernels=[slow])],
                        roofline=Roofline(ceil))
    assert category_far_below_ms(r) == {"cpp_pointwise": pytest.approx(0.376)}


def test_a_kernel_far_under_the_bandwidth_is_not_its_data():
    """The block mask create_block_mask builds in a compiled graph: Inductor's C++ reduction
    evaluates the causal rule over 256 x 256 indices and writes 32 B, in 141 µs (a real CPU
    run, torch 2.13, 27.4 GB/s measured). "Memory-bound at 0.0%" would misname it: its time is
    the rule it computes, not its bytes. It keeps its % and stays far below its limit; a
    kernel at just over 1% of the bandwidth keeps the memory verdict."""
    ceil = replace(CEIL, gbps=27.4)
    mask = KernelStat("cpp_fused_arange_expand_ge_permute_sum_view_0", "cpp_reduction", 1.0,
                      0.141, bytes=32)
    roof = kernel_roof(mask, ceil, "cpu")
    assert roof.bound == NOT_ITS_DATA and roof.pct == pytest.approx(100 * 32 / 0.141e-3 / 27.4e9)
    assert bound_words(roof, mask) == "not its data (under 1% of the bandwidth: uncounted work)"
    r = BreakdownResult("m", graphs=[GraphResult("0-inference", "inference", kernels=[mask])],
                        roofline=Roofline(ceil))
    assert category_far_below_ms(r) == {"cpp_reduction": pytest.approx(0.141)}
    edge_bytes = 0.01 * 27.4e9 * 0.141e-3  # exactly 1% of the bandwidth in 141 µs
    assert kernel_roof(replace(mask, bytes=edge_bytes * 0.99), ceil, "cpu").bound == NOT_ITS_DATA
    assert kernel_roof(replace(mask, bytes=edge_bytes * 1.01), ceil, "cpu").bound == MEMORY
    counted = replace(mask, flops=1e3, compute="fp32")  # with a FLOP count the roofline judges
    assert kernel_roof(counted, ceil, "cpu").bound == MEMORY


def test_the_latency_verdict_is_judged_on_the_fastest_iteration():
    """Synthetic: the same 100 kB kernel at two places of a graph, 4 µs an iteration in each,
    but one place met a stall in two of its five iterations (60 µs): its steady mean, 26.4
    µs, passes the 2 x (10 + 1) µs a launch that makes it short; its fastest iteration does
    not. Both are latency-bound, each % from its own time; without samples the mean judges."""
    calm = KernelStat("k", "cpp_pointwise", 1.0, 0.004, bytes=100e3, samples_ms=[0.004] * 5)
    stalled = replace(calm, ms=0.0264, samples_ms=[0.004, 0.06, 0.004, 0.06, 0.004])
    assert [kernel_roof(k, CEIL, "cpu").bound for k in (calm, stalled)] == [LATENCY, LATENCY]
    assert kernel_roof(stalled, CEIL, "cpu").pct == pytest.approx(100 * 100e3 / 0.0264e-3 / 100e9)
    assert kernel_roof(replace(stalled, samples_ms=[]), CEIL, "cpu").bound == MEMORY


def test_the_category_table_counts_time_far_below_the_limit_but_not_latency_bound():
    slow = KernelStat("slow", "cpp_pointwise", 1.0, 2.0, bytes=20e6)  # 10 GB/s: 10%
    short = KernelStat("short", "cpp_pointwise", 1.0, 0.004, bytes=100e3)  # latency
    fast = KernelStat("fast", "cpp_reduction", 1.0, 1.0, bytes=80e6)  # 80%
    g = GraphResult("0-forward", "forward", kernels=[slow, short, fast])
    r = BreakdownResult("m", graphs=[g], roofline=Roofline(CEIL))
    assert category_far_below_ms(r) == {"cpp_pointwise": 2.0}


def test_the_roofline_round_trips_and_its_figures_are_in_the_json():
    k = KernelStat("k", "cpp_pointwise", 1.0, 1.0, bytes=50e6, flops=100e6, compute="fp32")
    r = BreakdownResult("m", graphs=[GraphResult("0-forward", "forward", kernels=[k])],
                        roofline=Roofline(CEIL, datasheet_for("NVIDIA H100 PCIe")))
    d = json.loads(result_json(r))
    assert d["schema_version"] == 4
    fig = d["extras"]["roofline"]["kernels"][0]
    assert fig["kernel"] == "k" and fig["pct"] == pytest.approx(50.0) and fig["bound"] == MEMORY
    assert d["extras"]["roofline"]["datasheet"]["gbps"] == 2000.0  # dense H100 PCIe, beside it
    back = BreakdownResult.from_dict(d)
    assert back.roofline.measured.gbps == 100.0 and back.graphs[0].kernels[0].flops == 100e6


def test_the_buffer_rule_agrees_with_inductors_estimate_on_a_recorded_kernel():
    """The softmax kernel file Inductor wrote, embedded in a module as its own harness calls it
    (two (64, 128) fp32 tensors, ``get_args``): the buffers' count is its ``kernel_num_gb``."""
    path = FIXTURES / "triton_kernels" / "cpu" / "triton_per_fused__softmax_0.py"
    src = path.read_text()
    name = "triton_per_fused__softmax_0"
    module = (f"{name} = async_compile.triton('{name}', '''\n{src}\n''', device_str='cuda')\n\n"
              "class Runner:\n    def call(self, args):\n"
              "        buf0 = empty_strided_cuda((64, 128), (128, 1), torch.float32)\n"
              "        buf1 = empty_strided_cuda((64, 128), (128, 1), torch.float32)\n"
              f"        {name}.run(buf0, buf1, 64, 128, stream=stream0)\n")
    (_, work), = call_work(parse_module(module), module)
    assert work.bytes == pytest.approx(read_kernel_file(path).num_gb * 1e9, abs=0.5)
    assert work.bytes == 3 * 64 * 128 * 4


def test_a_measurement_beside_other_work_keeps_the_higher_figures():
    from inductor_bench.core.ceilings import higher_of

    old = Ceilings("d", 5.0, {"fp32": 0.03, "fp16/bf16": 0.001}, copy_gbps=5.0, matmul_n={"fp32": 1024})
    new = Ceilings("d", 4.0, {"fp32": 0.04, "fp16/bf16": 0.0005}, copy_gbps=4.0, matmul_n={"fp32": 2048})
    best = higher_of(new, old)
    assert best.gbps == 5.0 and best.copy_gbps == 5.0
    assert best.tflops == {"fp32": 0.04, "fp16/bf16": 0.001} and best.matmul_n["fp32"] == 2048


ROOFLINE_RUN = FIXTURES / "results" / "cpu_mlp_train_roofline"


def _halved():
    import copy

    from inductor_bench.core.rundir import load_breakdown

    base = load_breakdown(ROOFLINE_RUN)
    head = copy.deepcopy(base)
    for g in head.graphs:
        for k in g.kernels:
            k.ms, k.samples_ms = k.ms / 2, [x / 2 for x in k.samples_ms]
    return base, head


def _mean_over_dram_bound(r: BreakdownResult) -> float:
    """The time-weighted % of peak recomputed here: a sum over the judged kernels (every graph
    runs once a step in this run) leaving out memory-bound ones above 100 % (in cache)."""
    from inductor_bench.core.roofline import ceilings_of, judged

    num = den = 0.0
    for g in r.measured():
        for k in judged(g):
            roof = kernel_roof(k, ceilings_of(r), g.device)
            assert r.weights()[g.id] == 1.0 and roof.bound != LATENCY
            if not (roof.bound == "memory" and roof.pct > 100):
                num, den = num + roof.pct * k.ms, den + k.ms
    return num / den


def test_diff_shows_each_kernel_moving_toward_its_limit():
    """Every kernel twice as fast with the same counts and ceilings: twice the % of peak."""
    from inductor_bench.core.diff import diff_results
    from inductor_bench.core.roofline import step_pct
    from inductor_bench.render.diff import render_diff

    base, head = _halved()
    (section,) = diff_results(base, head).sections
    paired = [k for k in section.kernels if k.base_pct is not None]
    assert len(paired) == 7
    for k in paired:
        assert k.head_pct == pytest.approx(2 * k.base_pct)
    b, h = section.roofline_pct
    assert b == pytest.approx(step_pct(base)) and h == pytest.approx(step_pct(head))
    assert (b, h) == pytest.approx((_mean_over_dram_bound(base), _mean_over_dram_bound(head)))
    text = render_diff(diff_results(base, head))
    # cpp_fused_sum_2 ran above the DRAM ceiling on both sides (220.7% in base: 133120 bytes in
    # 0.0123 ms against 4.917 GB/s), cpp_fused_gelu_gelu_backward_sum_0's 81.2% doubles past
    # 100% in head: served from a cache, not listed as moves toward the limit
    assert "Toward the limit: % of peak, base and head (5)" in text
    assert ("2 kernel(s) with a % of peak on both sides are not moves toward a limit (2 in cache in "
            "head, 1 in cache in base): one above the DRAM ceiling is served from a cache, which "
            "that ceiling does not bound") in " ".join(text.split())
    assert {k.name: k.no_distance for k in paired if k.no_distance} == {
        "cpp_fused_gelu_gelu_backward_sum_0": "in cache in head",
        "cpp_fused_sum_2": "in cache in base, in cache in head",
    }
    # the ceilings were measured beside 1.6 busy cores: the row's name says so
    row = next(ln for ln in text.splitlines() if ln.startswith("% of peak (time-weighted; ceilings measured under load: may read high) "))
    # base's aten::addmm #1 at 160.1% of the compute ceiling (0-forward), head's at twice that:
    # each side's figure takes in a kernel above the ceiling, marked ! as the views' total row is
    assert row.split()[11:13] == [f"!{b:.1f}%", f"!{h:.1f}%"]
    d = json.loads(json.dumps(section.to_dict()))
    assert d["roofline_pct"] == pytest.approx([b, h])
    assert [x["above_ceiling"] for x in d["roofline_step"]] == [True, True]


def test_compare_shows_each_columns_percent_of_peak_where_it_was_counted():
    from inductor_bench.core.roofline import step_pct
    from inductor_bench.render.roofline_step import roofline_rows

    base, head = _halved()
    old = BreakdownResult("m", graphs=[GraphResult("0-forward", "forward", kernels=[KernelStat("k", "cpp_pointwise", 1, 1.0)])])
    rows = roofline_rows([base, None, head, old])
    # each column takes in aten::addmm #1 above the compute ceiling (160.1%, 320.2%): marked !;
    # the recorded ceilings were measured beside other work, which the row's name says
    assert base.roofline.measured.load
    assert rows[0] == ["% of peak (time-weighted; ceilings measured under load: may read high)",
                       f"!{step_pct(base):.1f}%", "-", f"!{step_pct(head):.1f}%", "-"]
    assert rows[1][0] == "kernel time under 30% of limit" and rows[1][2] == rows[1][4] == "-"
    assert roofline_rows([old, None]) == []


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared GPU artifacts are not beside the checkout")
def test_on_a_device_timeline_an_ops_count_goes_to_its_longest_kernel(tmp_path):
    """The A100 module's two fp16 mm calls launch a cuBLAS GEMM and a small reduce beside it:
    both calls' FLOPs go to the GEMM, none to the reduce; the Triton kernels keep their own."""
    path = SHARED / "tlparse" / "modules" / "a100_torch2.9_per_poi_mm_c10d__collectives_parity_rank_0.log.2.py"
    gemm = KernelStat("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_nn", "extern_gemm", 2.0, 1.0,
                      launched_by="aten::mm")
    reduce = KernelStat("splitKreduce_kernel", "extern_gemm", 2.0, 0.1, launched_by="aten::mm")
    per = KernelStat("triton_per_fused_all_reduce_gelu_native_layer_norm_0", "triton_persistent_reduction",
                     1.0, 0.2)
    g = GraphResult("0-forward", "forward", device="cuda", kernels=[gemm, reduce, per])
    count_work(g, read_module(path), path.read_text(), tmp_path)
    assert gemm.flops == 2 * (2 * 1024**3) and gemm.compute == "fp16/bf16"
    assert reduce.bytes is None and reduce.flops is None
    assert per.bytes == (2 * 1024 * 1024 + 2 * 1024) * 2


def test_an_extern_call_site_has_its_own_percent_of_peak():
    from inductor_bench.core.rundir import load_breakdown
    from inductor_bench.core.views import units
    from inductor_bench.render.roofline import unit_pct_cell

    r = load_breakdown(ROOFLINE_RUN)
    g = r.graph("0-forward")
    fc2 = next(u for u in units([g]) if u.site is not None and u.site.index == 1)
    flops = 2.0 * 64 * 512 * 512  # fc2: 64x512 by 512x512
    assert g.site_counts[1][1] == flops
    # the roofline at its intensity is the fp32 ceiling (far above the ridge)
    expected = 100 * (flops / (fc2.site.ms / 1e3) / 1e12) / r.roofline.measured.tflops["fp32"]
    assert expected > 105  # the recorded ceiling was measured low: marked as above it
    assert unit_pct_cell(r, fc2) == f"!{expected:.0f}%"


def test_the_jsons_figures_are_each_extern_call_as_the_tables_show_it():
    """``extras.roofline.kernels`` (breakdown.json, ``report --format json``, each column of a
    compare's JSON) holds an extern op called at several places as each call, named as the
    kernel tables and the roofline chart name it (``aten::mm #2``), with that call's figures:
    not one figure for the op's five calls that no table shows."""
    from inductor_bench.core.rundir import load_breakdown, load_compare

    r = load_breakdown(ROOFLINE_RUN)
    raw = json.loads((ROOFLINE_RUN / "breakdown.json").read_text())
    (bwd,) = [g for g in raw["graphs"] if g["id"] == "0-backward"]
    c = raw["extras"]["roofline"]["measured"]
    expected = {}
    for site in bwd["sites"]:  # each mm of the backward: its own time, bytes and FLOPs
        moved, flops = bwd["site_counts"][site["index"]]
        roof = min(c["tflops"]["fp32"], flops / moved * c["gbps"] / 1e3)
        expected[f"aten::mm #{site['index']}"] = 100 * flops / (site["ms"] / 1e3) / 1e12 / roof
    assert len(expected) == 5
    compare = load_compare(FIXTURES / "results" / "cpu_mlp_compare")
    (column,) = [m for m in compare.modes if m.mode == "default"]
    column.breakdown = r
    cd = json.loads(result_json(compare))
    (cbd,) = [m["breakdown"] for m in cd["modes"] if m["mode"] == "default"]
    for figures in (json.loads(result_json(r))["extras"]["roofline"]["kernels"],
                    cbd["extras"]["roofline"]["kernels"]):
        got = {k["kernel"]: k["pct"] for k in figures if k["graph"] == "0-backward" and "mm" in k["kernel"]}
        assert got == pytest.approx(expected)
        assert len({(k["graph"], k["kernel"]) for k in figures}) == len(figures)


def test_a_kernel_sources_own_harness_gives_no_graph_input():
    """With TORCHINDUCTOR_BENCHMARK_KERNEL each embedded kernel source holds a get_args() of its
    own; its rand_strided lines are not the module's inputs."""
    from inductor_bench.core.buffers import input_tensors

    text = ("k = async_compile.triton('k', '''\ndef get_args():\n"
            "    arg_0 = rand_strided((7, ), (1, ), device='cuda:0', dtype=torch.float16)\n''')\n"
            "def get_args():\n    primals_1 = rand_strided((64, 256), (256, 1), device='cpu', dtype=torch.float32)\n")
    found = input_tensors(text)
    assert list(found) == ["primals_1"]
    assert found["primals_1"].shape == (64, 256) and found["primals_1"].dtype == "float32"


# Synthetic, in the layout of torch 2.13's CPU module of models/transformer_block.py: attention
# returns a tuple, its output is taken as ``buf[0]``, viewed and fed to the next GEMM; the
# backward returns the three gradients.
ATTENTION_MODULE = '''# AOT ID: ['0_inference']
class Runner:
    def call(self, args):
        arg0_1, arg1_1, arg2_1 = args
        assert_size_stride(arg0_1, (512, 384), (384, 1), 'input')
        buf5 = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(reinterpret_tensor(arg0_1, (8, 4, 64, 32), (24576, 32, 384, 1), 0), reinterpret_tensor(arg0_1, (8, 4, 64, 32), (24576, 32, 384, 1), 128), reinterpret_tensor(arg0_1, (8, 4, 64, 32), (24576, 32, 384, 1), 256), 0.0, True)
        buf6 = buf5[0]
        assert_size_stride(buf6, (8, 4, 64, 32), (8192, 32, 128, 1), 'torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default')
        buf7 = buf5[1]
        assert_size_stride(buf7, (8, 4, 64), (256, 64, 1), 'torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default')
        del buf5
        buf8 = empty_strided_cpu((512, 128), (128, 1), torch.float32)
        extern_kernels.addmm(arg2_1, reinterpret_tensor(buf6, (512, 128), (128, 1), 0), reinterpret_tensor(arg1_1, (128, 128), (1, 128), 0), alpha=1, beta=1, out=buf8)
        buf12 = reinterpret_tensor(buf6, (8, 64, 128), (8192, 128, 1), 0); del buf6  # reuse
        buf13 = empty_strided_cpu((512, 128), (128, 1), torch.float32)
        extern_kernels.mm(reinterpret_tensor(buf12, (512, 128), (128, 1), 0), arg1_1, out=buf13)
        buf14 = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default(reinterpret_tensor(buf8, (8, 4, 64, 32), (8192, 32, 128, 1), 0), reinterpret_tensor(arg0_1, (8, 4, 64, 32), (24576, 32, 384, 1), 0), reinterpret_tensor(arg0_1, (8, 4, 64, 32), (24576, 32, 384, 1), 128), reinterpret_tensor(arg0_1, (8, 4, 64, 32), (24576, 32, 384, 1), 256), buf12, buf7, 0.0, True)
        return (buf13, )

def get_args():
    from torch._dynamo.testing import rand_strided
    arg0_1 = rand_strided((512, 384), (384, 1), device='cpu', dtype=torch.float32)
    arg1_1 = rand_strided((128, 128), (128, 1), device='cpu', dtype=torch.float32)
    arg2_1 = rand_strided((128, ), (1, ), device='cpu', dtype=torch.float32)
    return [arg0_1, arg1_1, arg2_1]
'''


def test_gemms_on_attentions_tuple_output_and_attention_itself_count_their_bytes():
    """The GEMMs after attention read its output through ``buf[0]`` and views of it: their
    bytes are counted at the output's type (before, they had none); attention counts what it
    returns as well as what it reads."""
    works = [w for _, w in call_work(parse_module(ATTENTION_MODULE), ATTENTION_MODULE)]
    attention, addmm, mm, backward = works
    b, h, seq, e = 8, 4, 64, 32
    qkv = 3 * b * h * seq * e * 4  # three float32 views of the input
    assert attention.bytes == qkv + b * h * seq * e * 4 + b * h * seq * 4  # + output + logsumexp
    kept = seq * (seq + 1) // 2  # is_causal=True: the scores on and below the diagonal
    assert attention.flops == 2 * b * h * kept * (e + e)
    assert addmm.bytes == (128 + 512 * 128 + 128 * 128 + 512 * 128) * 4
    assert addmm.flops == 2 * 512 * 128 * 128
    assert mm.bytes == (512 * 128 + 128 * 128 + 512 * 128) * 4  # buf12: a view of buf6 reused
    # reads grad_out, q, k, v, out (a view of buf6) and logsumexp (buf5[1]: float32 in
    # torch, its type unsaid in the module, so unknown here): no byte count rather than a guess
    assert backward.bytes is None
    assert backward.flops == 2 * b * h * kept * (3 * e + 2 * e)


def test_causal_attention_counts_the_scores_its_mask_keeps():
    """is_causal, read where each op's schema has it or by name: with as many queries as keys
    the L(L+1)/2 scores on and below the diagonal; otherwise (no mask, or L != S, whose
    alignment differs between kernels) every score. Synthetic calls."""
    from inductor_bench.core.buffers import CallArgs, Tensor
    from inductor_bench.core.conv_attention import attention_work, is_causal

    def call(op, *args, **kwargs):
        return CallArgs(f"torch.ops.aten.{op}.default", True, list(args), kwargs)

    flash, cudnn = "_scaled_dot_product_flash_attention", "_scaled_dot_product_cudnn_attention"
    assert is_causal(flash, call(flash, "q", "k", "v", "0.0", "True"))
    assert not is_causal(flash, call(flash, "q", "k", "v", scale="0.125"))  # the default: False
    assert is_causal(flash, call(flash, "q", "k", "v", is_causal="True"))
    assert is_causal(cudnn, call(cudnn, "q", "k", "v", "None", "True", "0.0", "1"))  # a C shim's int
    assert not is_causal(cudnn, call(cudnn, "q", "k", "v", "None", "True", "0.0", "False"))
    assert not is_causal("mm", call("mm", "a", "b"))

    def t(*shape):
        return Tensor(tuple(shape), "float16")

    q = t(2, 8, 128, 64)
    full, _ = attention_work(flash, [q, q, q])
    assert full == 4 * 2 * 8 * 128 * 128 * 64
    assert attention_work(flash, [q, q, q], causal=True)[0] == 4 * 2 * 8 * (128 * 129 // 2) * 64
    kv = t(2, 8, 512, 64)  # a prefill against a longer cache: every score counted
    assert attention_work(flash, [q, kv, kv], causal=True)[0] == 4 * 2 * 8 * 128 * 512 * 64
    # the ops whose tensors are (B, L, H, E)
    blhe = t(2, 128, 8, 64)
    assert attention_work("_flash_attention_forward", [blhe, blhe, blhe])[0] == full


def test_inputs_that_share_a_storage_take_their_view_shape_and_the_storages_type():
    """torch 2.13's harness builds aliasing inputs as views of one storage (the training
    backward of models/transformer_block.py: q, k and v of one qkv projection). Synthetic."""
    from inductor_bench.core.buffers import Tensor, input_tensors

    text = '''def get_args():
    from torch._dynamo.testing import rand_strided
    _shared_storage_9 = rand_strided((196608,), (1,), device='cpu', dtype=torch.bfloat16)
    permute_1 = torch.as_strided(_shared_storage_9, (8, 4, 64, 32), (24576, 32, 384, 1))
    permute_2 = torch.as_strided(_shared_storage_9, (8, 4, 64, 32), (24576, 32, 384, 1), 128)
    orphan = torch.as_strided(_nowhere, (2, 2), (2, 1))
'''
    got = input_tensors(text)
    assert got["permute_1"] == got["permute_2"] == Tensor((8, 4, 64, 32), "bfloat16")
    assert got["orphan"] == Tensor((2, 2), None)  # a storage it does not know: no type


def test_a_compute_bound_kernel_above_the_compute_ceiling_says_the_ceiling_is_low():
    """No cache lifts a FLOP rate: a GEMM above the fp32 ceiling means the ceiling was measured
    low. The recorded run (ceiling measured beside other work) has one; here by hand: 1 GFLOP
    in 1 ms is 1 TFLOP/s, against CEIL's fp32 ceiling."""
    from inductor_bench.render.breakdown import render_breakdown

    peak = CEIL.tflops["fp32"]
    over = KernelStat("gemm", "extern_gemm", 1.0, 1.0, bytes=1e6, flops=1e12 * peak * 1.2 / 1e3,
                      compute="fp32")  # 120% of the ceiling
    near = KernelStat("gemm2", "extern_gemm", 1.0, 1.0, bytes=1e6, flops=1e12 * peak * 0.99 / 1e3,
                      compute="fp32")  # 99%: under the ceiling
    mem = KernelStat("copy", "cpp_pointwise", 1.0, 1.0, bytes=CEIL.gbps * 1e9 * 1.5 / 1e3)  # in cache
    r = BreakdownResult("m", graphs=[GraphResult("0-forward", "forward", kernels=[over, near, mem])],
                        roofline=Roofline(CEIL))
    text = render_breakdown(r)
    assert ("WARNING: 1 compute-bound kernel(s) ran above the measured compute ceiling (up to 120%: "
            "0-forward gemm): the ceiling was measured low") in text
    r.graphs[0].kernels = [near, mem]
    assert "above the measured compute ceiling" not in render_breakdown(r)
    recorded = BreakdownResult.from_dict(json.loads(
        (FIXTURES / "results" / "cpu_mlp_train_roofline" / "breakdown.json").read_text()))
    # each GEMM call site on its own: its FLOPs over its own time (the fastest: the second
    # linear's addmm, 33.5 MFLOP in 0.823 ms)
    fp32 = recorded.roofline.measured.tflops["fp32"]
    pct, gid, index = max((100 * (g.site_counts[s.index][1] / (s.ms / 1e3) / 1e12) / fp32, g.id, s.index)
                          for g in recorded.graphs for s in g.sites if s.extern)
    op = "aten::addmm" if gid == "0-forward" else "aten::mm"
    assert (gid, index) == ("0-forward", 1)
    assert f"(up to {pct:.0f}%: {gid} {op} #{index})" in render_breakdown(recorded)


def test_an_extern_op_called_at_several_places_is_judged_call_by_call():
    """One ``mkl::_mkl_linear`` row of 1 ms from two call sites: a large linear at 0.9 ms
    (0.8 GFLOP: 88.9% of the 1 TFLOP/s ceiling) and a small one at 0.1 ms (1 MFLOP over 1 MB:
    memory-bound at 10% of its 0.1 TFLOP/s roof). The row as a whole reads 80%; the category
    counts the small call's 0.1 ms as far below its limit, as the kernel tables show it, and the
    step's time-weighted % weighs each call. Sites that do not account for the op's time leave
    it judged as one."""
    from inductor_bench.core.roofline import step_pct
    from inductor_bench.core.sources import CallSite

    op = KernelStat("mkl::_mkl_linear", "extern_gemm", 2.0, 1.0, bytes=2e6, flops=0.801e9, compute="fp32")
    sites = [CallSite("mkl::_mkl_linear", 0, "torch.ops.mkl._mkl_linear.default", 1.0, 0.9),
             CallSite("mkl::_mkl_linear", 1, "torch.ops.mkl._mkl_linear.default", 1.0, 0.1)]
    g = GraphResult("0-inference", "inference", kernels=[op], sites=sites,
                    site_counts=[[1e6, 0.8e9], [1e6, 1e6]])
    r = BreakdownResult("m", graphs=[g], roofline=Roofline(CEIL))
    assert kernel_roof(op, CEIL, "cpu").pct == pytest.approx(80.1)
    assert category_far_below_ms(r) == {"extern_gemm": pytest.approx(0.1)}
    big = 100 * 0.8e9 / 0.9e-3 / 1e12
    small = 100 * (1e6 / 0.1e-3) / (1e6 / 1e6 * 100e9)
    assert small == pytest.approx(10.0)
    assert step_pct(r) == pytest.approx(big * 0.9 + small * 0.1)
    g.sites = sites[:1]  # 0.9 of the op's 1.0 ms: judged as one row
    assert category_far_below_ms(r) == {} and step_pct(r) == pytest.approx(80.1)


FLEX = FIXTURES / "cpp_kernels" / "flex_attention_module.py"


FLEX_MASKED = FIXTURES / "cpp_kernels" / "flex_attention_masked_module.py"


def test_the_cpu_flex_attention_template_is_attention_counted_where_one_block_covers_all():
    """Inductor's C++ flex attention template (micro GEMMs inside) is attention, not a GEMM.
    Under flex attention's default mask (one block of 1073741824 over the 128 queries and keys)
    it computes every score: 2·B·H·L·S·(E + Ev) FLOPs, judged as any kernel with a count. Its
    bytes: q, k, v and the output (4, 4, 128, 16) float32, and the mask's two one-element int32
    buffers."""
    from inductor_bench.core.classify import classify

    module = read_module(FLEX)
    cats = {n[-2:]: classify(n, k) for n, k in module.kernels.items()}
    assert cats == {"_0": "cpp_pointwise", "_1": "cpp_attention_template", "_2": "cpp_pointwise"}
    text = FLEX.read_text()
    (call, work), = [(c, w) for c, w in call_work(module, text) if c.name.endswith("_1")]
    assert work.bytes == 4 * (4 * 4 * 128 * 16 * 4) + 2 * 4
    assert work.flops == 2 * 4 * 4 * 128 * 128 * (16 + 16) and work.compute == "fp32"
    k = KernelStat(call.name, "cpp_attention_template", 1.0, 1.0, bytes=work.bytes, flops=work.flops,
                   compute=work.compute)
    roof = kernel_roof(k, CEIL, "cpu")
    assert roof.pct is not None and roof.bound == COMPUTE


def test_a_flex_attention_template_whose_mask_has_several_blocks_gets_no_memory_verdict():
    """``tests/fixtures/models/flex_masked.py``: a causal block mask of 64 x 64 blocks over 256
    queries and keys, whose skipped blocks are known only at run time: no FLOP count, so its
    bytes alone do not call it memory-bound: no % and no such verdict."""
    from inductor_bench.core.ceilings import UNCOUNTED

    module = read_module(FLEX_MASKED)
    text = FLEX_MASKED.read_text()
    (call, work), = [(c, w) for c, w in call_work(module, text) if c.name.endswith("_1")]
    mask = (4 + 16 + 4 + 16) * 4  # its blocks and indices, partial and full: (1, 1, 4), (1, 1, 4, 4) int32
    assert work.flops is None and work.bytes == 4 * (4 * 4 * 256 * 16 * 4) + mask
    k = KernelStat(call.name, "cpp_attention_template", 1.0, 1.0, bytes=work.bytes)
    roof = kernel_roof(k, CEIL, "cpu")
    assert roof.gbps == pytest.approx(work.bytes / 1e-3 / 1e9)
    assert roof.pct is None and roof.bound == UNCOUNTED
    counted = replace(k, flops=1e9, compute="fp32")  # where a count is known, judged as usual
    assert kernel_roof(counted, CEIL, "cpu").bound == COMPUTE


def test_a_time_weighted_percent_over_little_of_the_kernel_time_says_how_little():
    """A template without a FLOP count (3 ms) beside a kernel at 50% of the bandwidth (1 ms):
    the step's % is that kernel's, over a quarter of the kernel time, and every table says so."""
    from inductor_bench.core.diff import diff_results
    from inductor_bench.core.roofline import judged_share, step_pct
    from inductor_bench.render.diff import render_diff
    from inductor_bench.render.roofline_step import roofline_rows

    template = KernelStat("cpp_fused_flex_attention_1", "cpp_attention_template", 1.0, 3.0, bytes=1e6)
    copy = KernelStat("cpp_fused_copy_0", "cpp_pointwise", 1.0, 1.0, bytes=50e6)  # 50 GB/s of 100
    g = GraphResult("0-inference", "inference", kernels=[template, copy], iterations=1)
    r = BreakdownResult("m", graphs=[g], roofline=Roofline(CEIL))
    assert step_pct(r) == pytest.approx(50.0) and judged_share(r) == pytest.approx(25.0)
    assert roofline_rows([r])[0] == ["% of peak (time-weighted)", "50.0% (over 25% of kernel time)"]
    (section,) = diff_results(r, r).sections
    assert section.roofline_share == pytest.approx((25.0, 25.0))
    row = next(ln for ln in render_diff(diff_results(r, r)).splitlines() if ln.startswith("% of peak"))
    assert row.split("  ")[0] == "% of peak (time-weighted)" and row.count("50.0% (over 25% of kernel time)") == 2
    assert section.to_dict()["roofline_judged_share"] == pytest.approx([25.0, 25.0])
    g.kernels = [copy]  # all of the time judged: the % alone
    assert roofline_rows([r])[0] == ["% of peak (time-weighted)", "50.0%"]
    g.kernels = [template, KernelStat("cpp_fused_add_2", "cpp_pointwise", 1.0, 1e-4, bytes=64)]  # 0.1 us: latency
    assert kernel_roof(g.kernels[1], CEIL, "cpu").bound == LATENCY and judged_share(r) == 0.0
    # 64 B in 0.1 us: 0.64 GB/s, 0.64% of 100 GB/s, over 0.1 us of 3.0001 ms: marked ~ as the views mark it
    assert roofline_rows([r])[0] == ["% of peak (time-weighted)", "~0.6% (over 0% of kernel time)"]
    g.kernels = [template]  # no kernel with a %
    assert roofline_rows([r])[0] == ["% of peak (time-weighted)", "- (no kernel has a %: each uncounted)"]


def test_kernels_served_from_a_cache_are_no_part_of_the_time_weighted_percent():
    """Synthetic: a copy at 40 % of the 100 GB/s bandwidth (2 ms: 80 MB) beside one that moved
    its 1.2 MB in 4 us, 300 % of the DRAM ceiling (served from a cache, 0.004 ms of 2.004): the
    step's % is the DRAM-bound copy's 40 %, not the 40.5 % mean of both, and is over 99.8 % of
    the kernel time; a group of in-cache kernels alone reads theirs marked ``^``, no distance."""
    from inductor_bench.core.roofline import judged_share, step_pct
    from inductor_bench.render.roofline import group_pct_cell

    slow = KernelStat("cpp_fused_copy_0", "cpp_pointwise", 1.0, 2.0, bytes=80e6)
    cached = KernelStat("cpp_fused_copy_1", "cpp_pointwise", 1.0, 0.004, bytes=1.2e6)
    g = GraphResult("0-inference", "inference", kernels=[slow, cached], iterations=1)
    r = BreakdownResult("m", graphs=[g], roofline=Roofline(CEIL))
    assert kernel_roof(slow, CEIL, "cpu").pct == pytest.approx(40.0)
    cached_roof = kernel_roof(cached, CEIL, "cpu")
    assert cached_roof.pct == pytest.approx(300.0) and cached_roof.bound != LATENCY
    assert step_pct(r) == pytest.approx(40.0)
    assert judged_share(r) == pytest.approx(100 * 2.0 / 2.004)
    assert group_pct_cell(r, [(g, cached, 0.004)]) == "^300.0%"
    assert group_pct_cell(r, [(g, slow, 2.0), (g, cached, 0.004)]) == "40.0%"


def test_a_view_rows_percent_says_how_little_of_its_time_it_judges():
    """A module or line of the views (``--by module|line``) holding that template (3 ms) and
    that kernel (1 ms): its % is the kernel's, over a quarter of the group's time; a group all
    judged shows the % alone, and one with nothing judged a dash."""
    from inductor_bench.render.roofline import group_pct_cell

    template = KernelStat("cpp_fused_flex_attention_1", "cpp_attention_template", 1.0, 3.0, bytes=1e6)
    copy = KernelStat("cpp_fused_copy_0", "cpp_pointwise", 1.0, 1.0, bytes=50e6)
    g = GraphResult("0-inference", "inference", kernels=[template, copy], iterations=1)
    r = BreakdownResult("m", graphs=[g], roofline=Roofline(CEIL))
    assert group_pct_cell(r, [(g, template, 3.0), (g, copy, 1.0)]) == "50.0% (over 25% of kernel time)"
    assert group_pct_cell(r, [(g, copy, 1.0)]) == "50.0%"
    assert group_pct_cell(r, [(g, template, 3.0)]) == "-"


CUSTOM = FIXTURES / "cpp_kernels" / "custom_op_module.py"


def test_a_custom_op_counts_what_it_returns_and_gets_no_memory_verdict():
    """A custom op (``ibtest::scaled_tanh``, called as a fallback) does work no file shows: no
    FLOPs, so no % and no verdict; its bytes are its input and the tensor it returns, which the
    module asserts under an alias: both (256, 128) float32."""
    from inductor_bench.core.ceilings import OPAQUE
    from inductor_bench.core.classify import classify
    from inductor_bench.render.roofline_marks import bound_words

    module = read_module(CUSTOM)
    text = CUSTOM.read_text()
    (call, work), = [(c, w) for c, w in call_work(module, text) if "scaled_tanh" in c.name]
    assert call.returned is not None and call.returned.shape == (256, 128)
    assert work.bytes == 2 * 256 * 128 * 4 and work.flops is None
    assert classify("ibtest::scaled_tanh") == "extern_custom"
    k = KernelStat("ibtest::scaled_tanh", "extern_custom", 1.0, 0.2, bytes=work.bytes)
    roof = kernel_roof(k, CEIL, "cpu")
    assert roof.gbps == pytest.approx(work.bytes / 0.2e-3 / 1e9)
    assert roof.pct is None and roof.bound == OPAQUE
    assert bound_words(roof) == "- (a custom op: its work is not known)"
    other = replace(k, category="extern_other")  # an ATen op's bytes still judge it
    assert kernel_roof(other, CEIL, "cpu").bound == "memory"
    (addmm,) = [w for c, w in call_work(module, text) if c.name == "extern_kernels.addmm"]
    assert addmm.bytes == 4 * (128 + 128 * 128 + 256 * 128 + 256 * 128)  # bias, W, x, out= once


def test_a_gpus_figures_of_a_thousand_or_more_read_whole():
    """An H200's ceilings and a kernel at 2500 GB/s: written whole in the report (text, HTML
    tooltip) and the JSON's limit, never in exponent form ('4.24e+03 GB/s')."""
    from inductor_bench.render.breakdown import render_breakdown

    c = Ceilings("NVIDIA H200", gbps=4238.0, tflops={"fp32": 51.0, "fp8": 1400.0}, copy_gbps=4238.0,
                 triad_gbps=4100.0)
    # 25 MB in 10 µs: 2500 GB/s; 12 MFLOP in 10 µs: 1.2 TFLOP/s (0.48 FLOP/B)
    k = KernelStat("triton_poi_k", "triton_pointwise", 1.0, 0.01, bytes=25e6, flops=12e6, compute="fp32",
                   samples_ms=[0.01] * 5)
    r = BreakdownResult("m", device="cuda", graphs=[GraphResult("0-forward", "forward", device="cuda",
                                                                kernels=[k], wall_ms=0.02, busy_ms=0.01,
                                                                kernel_ms=0.01)],
                        roofline=Roofline(c, datasheet_for("NVIDIA H200")))
    text = render_breakdown(r)
    assert "measured ceilings: 4238 GB/s (copy 4238, triad 4100); TFLOP/s fp32 51, fp8 1400 (" in text
    assert "datasheet (H200, dense): 4800 GB/s; TFLOP/s fp32 67, tf32 495, fp16/bf16 989, fp8 1979" in text
    row = next(line for line in text.splitlines() if line.startswith("0-forward") and " 2500 " in line)
    assert "1.2" in row.split() and "e+0" not in text
    fig = json.loads(result_json(r))["extras"]["roofline"]["kernels"][0]
    assert fig["limit"] == "fp32 51 TFLOP/s, 4238 GB/s" and fig["gbps"] == pytest.approx(2500.0)
