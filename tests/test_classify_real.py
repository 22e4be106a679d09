"""classify() on real GPU traces (tests/fixtures/hta/, from HolisticTraceAnalysis; see the README
there): every device event is classified from its name and the CPU ops around its launch, as
``analyze`` and the CUDA breakdown do.

The expectations below were written down by reading the raw JSON with a separate script (plain
json/gzip: a device event's ``args.correlation`` -> its cudaLaunchKernel / cuLaunchKernel event
-> the ``cpu_op`` events enclosing that launch on the same thread), not from this package: for
each (kernel name, an op seen around its launch) the category that op implies, and how many
device events have both. The counts also check ``launch_stacks`` against that reading.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from inductor_bench.core.categories import CATEGORIES
from inductor_bench.core.classify import FALLBACK, classify
from inductor_bench.core.timeline import launch_stacks
from inductor_bench.core.trace import DEVICE_CATEGORIES, GPU_MEMCPY, GPU_MEMSET, KERNEL, load_trace

HTA = Path(__file__).resolve().parent / "fixtures" / "hta"
FILES = {
    "v100_conv": "ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "a100_conv_nccl": "nccl_parser_config_nccl_data.json.gz",
    "recsys": "timeline_analysis_sampled_rank-0.json.gz",
    "compile": "negative_queue_length_values_check_rank0.json.gz",
    "triton": "triton_example_triton_example.json.gz",
    "alexnet": "critical_path_alexnet_benchmark_result_2869224_1695835535_trace.json.gz",
}
NO_LAUNCH = None  # the event's correlation has no launch event: no stack, the name decides
EVAL_CONV_BWD = "autograd::engine::evaluate_function: ConvolutionBackward0"
ADAGRAD = "fbgemm::split_embedding_codegen_lookup_rowwise_adagrad_function"

# (trace, kernel name regex, an op around the launch, expected category, device events with both)
CASES = [
    # V100 conv net: cuBLAS sgemm kernels run cuDNN's convolutions
    ("v100_conv", r"^volta_sgemm_", "aten::cudnn_convolution", "extern_conv", 110),
    ("v100_conv", r"^volta_sgemm_", "aten::convolution_backward", "extern_conv", 295),
    ("v100_conv", r"^volta_sgemm_", "aten::mm", "extern_gemm", 10),
    ("v100_conv", r"^volta_sgemm_", "aten::addmm", "extern_gemm", 5),
    ("v100_conv", r"^void cudnn::winograd", "aten::convolution_backward", "extern_conv", 360),
    ("v100_conv", r"splitKreduce_kernel", "aten::mm", "extern_gemm", 5),
    # cuDNN batch norm says "cudnn": it is batch norm, named by its op
    ("v100_conv", r"^void cudnn::bn_fw_", "aten::cudnn_batch_norm", FALLBACK, 265),
    ("v100_conv", r"^void cudnn::bn_bw_", "aten::cudnn_batch_norm_backward", FALLBACK, 265),
    ("v100_conv", r"^Memset", "aten::convolution_backward", "memset", 135),
    ("v100_conv", r"^Memcpy DtoD", "aten::copy_", "memcpy", 1600),
    # gradient accumulation after a conv's backward: aten::add_ in the autograd engine, no op
    # recognised, so the elementwise kernel's name decides
    ("v100_conv", r"CUDAFunctor_add<float>", EVAL_CONV_BWD, FALLBACK, 80),
    # A100 DDP conv net: CUTLASS tensor-op GEMM kernels run the convolutions, NCCL all-reduce
    ("a100_conv_nccl", r"^void cutlass::Kernel<cutlass_80_tensorop_s1688gemm",
     "aten::cudnn_convolution", "extern_conv", 84),
    ("a100_conv_nccl", r"^void cutlass::Kernel<cutlass_80_tensorop_s1688gemm",
     "aten::convolution_backward", "extern_conv", 150),
    ("a100_conv_nccl", r"^void cutlass::Kernel<cutlass_80_simt_sgemm", "aten::mm", "extern_gemm", 3),
    ("a100_conv_nccl", r"cutlass_cudnn_(?:train|infer)", "aten::convolution_backward",
     "extern_conv", 144),
    ("a100_conv_nccl", r"nchwToNhwcKernel", "aten::convolution_backward", "extern_conv", 330),
    ("a100_conv_nccl", r"^ncclKernel_AllReduce", "c10d::allreduce_", "communication", 15),
    ("a100_conv_nccl", r"^ncclKernel_Broadcast", "c10d::broadcast_", "communication", 6),
    ("a100_conv_nccl", r"^void cudnn::bn_fw_", "aten::cudnn_batch_norm", FALLBACK, 159),
    ("a100_conv_nccl", r"^void cudnn::bn_bw_", "aten::cudnn_batch_norm_backward", FALLBACK, 159),
    ("a100_conv_nccl", r"^Memset", "aten::convolution_backward", "memset", 114),
    # recommendation model: fbgemm_gpu kernels are embeddings / sparse ops, not GEMM
    ("recsys", r"^void fbgemm_gpu::", "fbgemm::permute_sparse_features", FALLBACK, 10),
    ("recsys", r"^void fbgemm_gpu::", "fbgemm::permute_2D_sparse_data", FALLBACK, 8),
    ("recsys", r"fbgemm_gpu::_float_to_hfp8_gpu", "fbgemm::FloatToHFP8Quantized", FALLBACK, 2),
    # ... and one launched by a library op of another namespace (fb::) is that op's: a custom op
    ("recsys", r"fbgemm_gpu::_offsets_range_cuda_kernel", "fb::lengths_range_w_truncation_size",
     "extern_custom", 2),
    ("recsys", r"split_embedding_codegen_forward", ADAGRAD, FALLBACK, 4),
    ("recsys", r"^void cutlass::Kernel<cutlass_80_tensorop", "aten::addmm", "extern_gemm", 91),
    ("recsys", r"^void cutlass::Kernel<cutlass_80_tensorop", "aten::bmm", "extern_gemm", 32),
    ("recsys", r"gemvx::kernel", "aten::addmm", "extern_gemm", 6),
    ("recsys", r"layer_norm|LayerNorm", "aten::native_layer_norm", FALLBACK, 16),
    ("recsys", r"layer_norm|LayerNorm", "aten::native_layer_norm_backward", FALLBACK, 8),
    ("recsys", r"^ncclKernel_", "record_param_comms", "communication", 8),
    # torch.compile (torch 2.0 Triton names triton__0d1d...) with CUDA graphs
    ("compile", r"^triton__\d", "CompiledFunction", "triton_other", 35),
    ("compile", r"^triton__\d", "CompiledFunctionBackward", "triton_other", 40),
    ("compile", r"^triton__\d", NO_LAUNCH, "triton_other", 6),
    ("compile", r"^void cutlass::Kernel<", "CompiledFunctionBackward", "extern_gemm", 45),
    ("compile", r"^void cutlass::Kernel<", NO_LAUNCH, "extern_gemm", 11),
    ("compile", r"^ncclKernel_", "c10d::alltoall_base_", "communication", 45),
    ("compile", r"^ncclKernel_", "c10d::_allgather_base_", "communication", 10),
    ("compile", r"^ncclKernel_", NO_LAUNCH, "communication", 5),
    ("compile", r"^void fbgemm_gpu::permute_2D", "fbgemm::permute_2D_sparse_data", FALLBACK, 50),
    ("compile", r"^void cub::DeviceScan", "fbgemm::permute_2D_sparse_data", FALLBACK, 100),
    # aten::mm's contiguous copy (aten::copy_ < aten::clone < aten::mm): counted for the GEMM
    ("compile", r"direct_copy_kernel_cuda", "aten::mm", "extern_gemm", 15),
    ("compile", r"^Memcpy HtoD", "aten::to", "memcpy", 80),
    ("compile", r"^Memset", "CompiledFunction", "memset", 50),
    # an Inductor kernel launched through the driver API inside its record function
    ("triton", r"^triton_poi_fused_add_cos_sin_0$", "Torch-Compiled Region: 0/0",
     "triton_pointwise", 1),
    # AlexNet eager on A100: cuDNN's FFT and implicit-GEMM convolutions, cuBLAS linear layers
    ("alexnet", r"^ampere_gcgemm_", "aten::cudnn_convolution", "extern_conv", 2),
    ("alexnet", r"^void fft2d_", "aten::cudnn_convolution", "extern_conv", 6),
    ("alexnet", r"^sm80_xmma_fprop", "aten::cudnn_convolution", "extern_conv", 6),
    ("alexnet", r"CUDAFunctor_add<float>", "aten::_convolution", "extern_conv", 10),  # conv bias
    ("alexnet", r"^ampere_sgemm_", "aten::addmm", "extern_gemm", 6),
    ("alexnet", r"epilogue::impl::globalKernel", "aten::addmm", "extern_gemm", 6),
    ("alexnet", r"^Memset", "aten::cudnn_convolution", "memset", 1),
    ("alexnet", r"^Memset", "aten::addmm", "memset", 2),
]


@cache
def device_events(trace: str) -> list[tuple[str, str, tuple[str, ...], str]]:
    """(name, event category, launch stack, classified category) of every device event."""
    t = load_trace(HTA / FILES[trace])
    stacks = launch_stacks(t)
    seen: dict[tuple[str, tuple[str, ...]], str] = {}  # as analyze does: once per (name, stack)
    out = []
    for i, ev in enumerate(t.events):
        if ev.cat in DEVICE_CATEGORIES:
            ops = stacks.get(i, ())
            if (ev.name, ops) not in seen:
                seen[ev.name, ops] = classify(ev.name, None, ops=ops)
            out.append((ev.name, ev.cat, ops, seen[ev.name, ops]))
    return out


@pytest.mark.parametrize(("trace", "pattern", "op", "expected", "count"), CASES,
                         ids=[f"{c[0]}:{c[1][:30]}<-{c[2]}" for c in CASES])
def test_category_of_real_kernels(trace, pattern, op, expected, count):
    rx = re.compile(pattern)
    got = [cat for name, _, ops, cat in device_events(trace)
           if rx.search(name) and (op in ops if op is not NO_LAUNCH else not ops)]
    assert len(got) == count
    assert set(got) == {expected}


@pytest.mark.parametrize("trace", sorted(FILES))
def test_whole_traces(trace):
    """What holds for every device event of every trace, whatever its name."""
    for name, evcat, ops, cat in device_events(trace):
        assert cat in CATEGORIES
        if evcat == GPU_MEMCPY:
            assert cat == "memcpy", (name, ops)
        elif evcat == GPU_MEMSET:
            assert cat == "memset", (name, ops)
        else:
            assert evcat == KERNEL
            if name.startswith("ncclKernel_"):
                assert cat == "communication", (name, ops)
            elif {"aten::cudnn_convolution", "aten::convolution_backward"} & set(ops):
                assert cat == "extern_conv", (name, ops)
            elif {"aten::cudnn_batch_norm", "aten::cudnn_batch_norm_backward"} & set(ops):
                assert cat == FALLBACK, (name, ops)
            if "fbgemm" in name or "cudnn::bn_" in name:
                assert cat not in ("extern_gemm", "extern_conv"), (name, ops)


def real_names(pattern: str) -> list[str]:
    rx = re.compile(pattern)
    return sorted({name for t in FILES for name, *_ in device_events(t) if rx.search(name)})


# Name only (no launch stack: a CUDA-graph replay, a trace without CPU ops): the distinct real
# names of the traces above by family (how many, counted in the raw JSON), and the category
# their name alone gives.
NAME_ONLY = [
    (r"^void cudnn::bn_", FALLBACK, 8),
    (r"fbgemm_gpu::", FALLBACK, 24),
    (r"^ncclKernel_", "communication", 3),
    (r"^void cutlass::Kernel<cutlass_80_", "extern_gemm", 56),
    (r"^(?:volta|ampere)_sgemm_", "extern_gemm", 16),  # the name cannot tell a conv's sgemm
    (r"cutlass_cudnn_|^sm80_xmma_(?:fprop|dgrad|wgrad)", "extern_conv", 23),
    (r"^triton__\d", "triton_other", 6),  # torch 2.0: triton__0d1d2d...
    (r"^triton_poi_", "triton_pointwise", 1),
    (r"^Memcpy ", "memcpy", 4),
    (r"^Memset ", "memset", 2),
]


@pytest.mark.parametrize(("pattern", "expected", "count"), NAME_ONLY, ids=[c[0] for c in NAME_ONLY])
def test_real_names_alone(pattern, expected, count):
    names = real_names(pattern)
    assert len(names) == count
    assert {n: classify(n) for n in names} == dict.fromkeys(names, expected)
