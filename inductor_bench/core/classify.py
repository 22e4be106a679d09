"""Kernel -> category: one rule table, first match wins; no torch import.

What decides, in the table's order:

1. a kernel's own source, where the compiled module gives it (the Triton heuristics
   decorator, the C++ kernel's accumulators);
2. what the device event *is*, whatever launched it: a memcpy / memset, an NCCL kernel;
3. Inductor's own kernel names (``triton_<kind>_``, the C++ kernels' profiler names);
4. for a library kernel (no source info), the op that launched it: the innermost
   *recognised* op on its CPU launch stack ``ops`` (innermost first). Ops no
   ``_launched_by`` row knows (``aten::copy_``, ``aten::to``, ``aten::zero_``, autograd
   nodes, record functions) are skipped over to the next op outward. cuBLAS picks
   ``volta_sgemm_*`` for a cuDNN convolution and cuDNN names its batch norm kernels
   ``cudnn::bn_*``: the op says what the time was spent on, the name does not;
5. CPU ATen / mkldnn ops by name (on the host timeline the op is the event itself);
6. library kernel names (cuBLAS, CUTLASS, cuDNN, flash attention, NCCL, ROCm), the
   fallback where no op is known (CUDA-graph replays, traces without CPU ops);
7. a custom op: an op of a namespace other than torch's own (``torch.library.custom_op``'s
   ``mylib::scaled_tanh``, a library's ``torchvision::nms``), as the host event itself or
   around a library kernel's launch, where nothing above decided (a GEMM a custom op calls
   is still GEMM time).

Anything else is ``extern_other``. Adding a category is one key in ``categories.py`` plus
rows here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from .cppwrapper import shim_op
from .modparse import KernelInfo

Ops = tuple[str, ...]  # CPU ops around a device event's launch, innermost first
Predicate = Callable[[str, KernelInfo | None, Ops], bool]
FALLBACK = "extern_other"


@dataclass(frozen=True)
class Rule:
    test: Predicate
    category: str
    why: str  # what the row recognises, for readers and test ids


def _source(kind: str, *heuristics: str) -> Predicate:
    """Matches a kernel whose module source gives ``kind`` and one of ``heuristics``
    (none listed: any heuristic the source names)."""

    def test(name: str, info: KernelInfo | None, ops: Ops) -> bool:
        if info is None or info.kind != kind or not info.heuristic:
            return False
        return not heuristics or info.heuristic in heuristics

    return test


def _name(pattern: str, flags: int = re.IGNORECASE) -> Predicate:
    rx = re.compile(pattern, flags)
    return lambda name, info, ops: rx.search(name) is not None


def _host_op(pattern: str) -> Predicate:
    """Matches a host op by name, or a C++ wrapper's C shim by the ATen op it runs
    (``aoti_torch_cpu_mm_out``: ``aten::mm``, ``core/cppwrapper.py``)."""
    rx = re.compile(pattern)

    def test(name: str, info: KernelInfo | None, ops: Ops) -> bool:
        op = shim_op(name) or name
        return rx.search(op) is not None

    return test


# Every pattern a _launched_by row matches: an op matching one of them is "recognised".
_RECOGNISED: list[re.Pattern[str]] = []


def _launched_by(pattern: str) -> Predicate:
    """Matches a library kernel (no source info) whose innermost recognised launching op
    matches ``pattern``."""
    rx = re.compile(pattern)
    _RECOGNISED.append(rx)

    def test(name: str, info: KernelInfo | None, ops: Ops) -> bool:
        if info is not None:
            return False
        op = deciding_op(ops)
        return op is not None and rx.search(op) is not None

    return test


@lru_cache(maxsize=4096)
def deciding_op(ops: Ops) -> str | None:
    """The innermost op of a launch stack that a ``_launched_by`` row recognises, or None; a
    C++ wrapper's C shim as the ATen op it runs (``aoti_torch_cuda_mm_out``: ``aten::mm``)."""
    for op in ops:
        op = shim_op(op) or op
        if any(rx.search(op) for rx in _RECOGNISED):
            return op
    return None


# ATen / library op families, shared by the launching-op rows and the CPU op-name rows.
_GEMM_OPS = (r"^aten::(?:mm|addmm|_addmm_activation|bmm|baddbmm|addbmm|matmul|linear"
             r"|_mkl_linear|mkldnn_linear|_int_mm|_scaled_mm|_scaled_grouped_mm|_grouped_mm"
             r"|_weight_int8pack_mm|_weight_int4pack_mm\w*|_dyn_quant_matmul_4bit)$"
             r"|^mkl::_mkl_linear$|^mkldnn::_linear_pointwise|^onednn::qlinear")
_CONV_OPS = (r"^aten::(?:convolution|_convolution|mkldnn_convolution|convolution_backward"
             r"|conv(?:\d|_|olution)\w*|cudnn_convolution\w*|miopen_(?:depthwise_)?convolution\w*"
             r"|_conv_depthwise2d\w*|_?slow_conv\w*|thnn_conv\w*)$"
             r"|^mkldnn::_convolution|^onednn::qconv")
_ATTENTION_OPS = r"^aten::\w*(?:scaled_dot_product|flash_attention|efficient_attention|cudnn_attention)"
_NORM_EMBEDDING_OPS = (r"^aten::(?:batch_norm|_batch_norm_impl_index\w*|cudnn_batch_norm\w*"
                       r"|miopen_batch_norm\w*|native_batch_norm\w*|_native_batch_norm_legit\w*"
                       r"|batch_norm_\w+|layer_norm|native_layer_norm\w*|embedding\w*"
                       r"|_embedding_bag\w*)$|^fbgemm::")
_COMM_OPS = r"^nccl:|^_?c10d(?:_functional)?::|^record_param_comms$"
# The namespaces of torch's own ops (``torch._C._dispatch_get_all_op_names()``), of the
# record functions torch and this tool write with one ``::`` (``profiler::``,
# ``inductor_bench::iteration``), and fbgemm's (named with the norm and embedding ops above).
TORCH_NAMESPACES = frozenset({
    "aten", "prims", "prim", "_c10d_functional", "_c10d_functional_autograd", "c10d", "_dtensor",
    "_native", "_quantized", "quantized", "quantization", "_test", "debug_mode_ops", "debugprims",
    "rngprims", "export", "inductor", "inductor_prims", "mkl", "mkldnn", "mkldnn_prepacked",
    "onednn", "profiler", "sparse", "static_runtime", "symm_mem", "cuda", "xpu", "mps",
    "streams", "higher_order", "autograd", "torch", "fbgemm", "inductor_bench",
})
_OP_NAME = re.compile(r"^(?P<ns>[A-Za-z_]\w*)::[A-Za-z_]\w*(?:\.\w+)?$")


def is_custom_op(name: str) -> bool:
    """``mylib::scaled_tanh`` (or ``mylib::scaled_tanh.default``): an op of a namespace other
    than torch's own; not a record function (``autograd::engine::evaluate_function: ...``)."""
    m = _OP_NAME.match(name)
    return m is not None and m.group("ns") not in TORCH_NAMESPACES


def _custom_op(name: str, info: KernelInfo | None, ops: Ops) -> bool:
    """The host event is a custom op, or a library kernel was launched inside one."""
    if info is not None:
        return False
    return is_custom_op(name) or any(is_custom_op(op) for op in ops)

RULES: list[Rule] = [
    # -- 1. from the kernel's source: Triton heuristics decorator ---------------------
    Rule(_source("triton", "pointwise"), "triton_pointwise", "@pointwise"),
    Rule(_source("triton", "reduction", "cooperative_reduction"), "triton_reduction",
         "@reduction / @cooperative_reduction"),
    Rule(_source("triton", "persistent_reduction"), "triton_persistent_reduction",
         "@persistent_reduction"),
    Rule(_source("triton", "split_scan"), "triton_split_scan", "@split_scan"),
    Rule(_source("triton", "template"), "triton_template", "@template"),
    Rule(_source("triton", "foreach"), "triton_foreach", "@foreach"),
    Rule(_source("triton"), "triton_other", "@fixed_config / @user_autotune / other"),
    # -- 1. from the kernel's source: C++ (modparse.cpp_heuristic) --------------------
    Rule(_source("cpp", "reduction"), "cpp_reduction", "cpp accumulators"),
    Rule(_source("cpp", "attention"), "cpp_attention_template", "cpp flex attention (kvBlockSize)"),
    Rule(_source("cpp", "template"), "cpp_template", "cpp micro_gemm"),
    Rule(_source("cpp"), "cpp_pointwise", "cpp other"),
    # -- 2. what the device event is, whatever op launched it: kineto names copies
    #    "Memcpy HtoD (Pageable -> Device)" and fills "Memset (Device)" (CUDA and ROCm);
    #    a copy inside aten::convolution is still a copy, not convolution time.
    Rule(_name(r"^memcpy\b"), "memcpy",
         "Memcpy HtoD / DtoD / DtoH event: a copy, whatever op issued it"),
    Rule(_name(r"^memset\b"), "memset", "Memset event: a fill, whatever op issued it"),
    Rule(_name(r"^nccl(?:Dev)?Kernel_", 0), "communication",
         "ncclKernel_* / ncclDevKernel_* (NCCL, RCCL): communication, whatever op issued it"),
    # -- 3. Inductor Triton names: triton_<category[:3]>_... (the prefix set is open) --
    Rule(_name(r"^triton_poi_", 0), "triton_pointwise", "triton_poi_"),
    Rule(_name(r"^triton_red_", 0), "triton_reduction", "triton_red_"),
    Rule(_name(r"^triton_per_", 0), "triton_persistent_reduction", "triton_per_"),
    Rule(_name(r"^triton_spl_", 0), "triton_split_scan", "triton_spl_"),
    Rule(_name(r"^triton_tem_", 0), "triton_template", "triton_tem_"),
    Rule(_name(r"^triton_for_", 0), "triton_foreach", "triton_for_"),
    Rule(_name(r"^triton_", 0), "triton_other", "triton_unk_ / triton__0d1d (torch 2.0) / other"),
    # -- 3. Inductor C++ kernels by profiler name (graph_<i>_<kernel>) or Python name --
    Rule(_name(r"^graph_\d+_(?:\w*_)?gemm|^graph_\d+_\w+_kernel$|^cpp_\w*gemm", 0),
         "cpp_template", "graph_<i>_gemm_..._kernel"),
    Rule(_name(r"^(?:graph_\d+_)?cpp_", 0), "cpp_kernel",
         "graph_<i>_cpp_ / cpp_ without its source: pointwise or reduction unknown"),
    # -- 4. a library kernel by the innermost recognised op that launched it -----------
    Rule(_launched_by(_CONV_OPS), "extern_conv",
         "launched by aten::convolution / cudnn_convolution / convolution_backward"),
    Rule(_launched_by(_GEMM_OPS), "extern_gemm",
         "launched by aten::mm / addmm / bmm / linear / matmul / _scaled_mm"),
    Rule(_launched_by(_ATTENTION_OPS), "extern_attention",
         "launched by aten::scaled_dot_product_* / _flash_ / _efficient_attention"),
    Rule(_launched_by(_NORM_EMBEDDING_OPS), "extern_other",
         "launched by aten batch_norm / layer_norm / embedding, fbgemm:: (named by the op)"),
    Rule(_launched_by(_COMM_OPS), "communication",
         "launched by nccl:* / c10d::* / record_param_comms"),
    # -- 5. CPU ATen / mkldnn ops: on the host timeline the op is the event -------------
    #    (a C++ wrapper's C shim by its op: aoti_torch_cpu_mm_out is aten::mm)
    Rule(_host_op(_GEMM_OPS), "extern_gemm", "aten::mm / addmm / bmm / linear, mkl, mkldnn linear"),
    Rule(_host_op(_CONV_OPS), "extern_conv", "aten::convolution / mkldnn convolution"),
    Rule(_host_op(_ATTENTION_OPS), "extern_attention",
         "aten::scaled_dot_product_* / flash / efficient"),
    Rule(_host_op(_COMM_OPS), "communication",
         "_c10d_functional::all_reduce_ / c10d:: / record_param_comms (gloo, on the host)"),
    # -- 5. host record functions that wrap other ops (CPU-only traces of a compiled model):
    #    Inductor's C++ kernels are no op of their own there, so a compiled graph's time
    #    outside its extern ops is its C++ kernels and wrapper
    Rule(_name(r"^CompiledFunction(?:Backward)?$|^## Call CompiledFxGraph \S+ ##$", 0), "host_compiled",
         "CompiledFunction / CompiledFunctionBackward / ## Call CompiledFxGraph <key> ## (host)"),
    Rule(_name(r"^Torch-Compiled Region\b|^autograd::engine::evaluate_function: |^TorchDynamo Cache Lookup$"
               r"|^Pregraph bytecode$|^AOTDispatcher |^[A-Z]\w*Backward\d*$|^torch::autograd::\w+$", 0),
         "host_framework",
         "Torch-Compiled Region / autograd::engine::evaluate_function / autograd's nodes "
         "(AddmmBackward0, torch::autograd::AccumulateGrad) / Dynamo's guards and AOT wrappers (host)"),
    # -- 6. library kernels by name, where no launching op decides. Attention first:
    #    cuDNN's SDPA kernels also say "cudnn" and "fprop", FA3 is a cutlass::device_kernel;
    #    convolution before GEMM: implicit-GEMM convs also say "gemm".
    Rule(_name(r"flash_fwd|flash_bwd|flash_?attn|fmha|efficient_attention|attention|sdpa"
               r"|(?:Batch|Single)(?:Prefill|Decode)With\w*KVCache"),
         "extern_attention",
         "flash / FlashAttnFwdSm90 / fmha / efficient attention / cuDNN SDPA / FlashInfer"),
    Rule(_name(r"\bcudnn::bn_|^MIOpenBatchNorm", 0), FALLBACK,
         "cudnn::bn_* / MIOpenBatchNorm* (batch norm, not convolution)"),
    Rule(_name(r"cudnn|fprop|dgrad|wgrad|implicit_convolve|winograd|conv(?:olution|olve|_|\d)"
               r"|nchwToNhwc|nhwcToNchw|^miopen\w*conv|^igemm_(?:fwd|bwd|wrw)_"),
         "extern_conv",
         "cuDNN / implicit-GEMM conv / conv kernels, MIOpen (MIOpenConv*, igemm_*_gtc)"),
    # "fbgemm" is not a GEMM (fbgemm_gpu's embedding / sparse kernels); "cutlass" only as
    # the kernel itself (cutlass::Kernel<...>), not a cutlass::bfloat16_t template argument.
    Rule(_name(r"(?<!fb)gemm|gemv|sm\d+_xmma|^(?:void )?cutlass|cublas|nvjet|splitKreduce"
               r"|^bmm_|^(?:Custom_)?Cijk_"),
         "extern_gemm",
         "cuBLAS / cuBLASLt / CUTLASS / nvjet / bmm_ (sm100), rocBLAS / hipBLASLt Cijk_, CK gemm"),
    # -- 7. custom ops: the op itself on the host, or around a library kernel's launch -----
    Rule(_custom_op, "extern_custom",
         "an op of a namespace not torch's own (mylib::scaled_tanh, torchvision::nms)"),
]


def rule_for(name: str, info: KernelInfo | None = None, ops: Ops = ()) -> Rule | None:
    """The first rule that matches, or None (the kernel is then ``extern_other``)."""
    ops = tuple(ops)
    for rule in RULES:
        if rule.test(name, info, ops):
            return rule
    return None


def classify(name: str, info: KernelInfo | None = None, ops: Ops = ()) -> str:
    """The category key (see ``categories.CATEGORIES``) of a kernel or extern op.

    ``info``: the kernel's source info from the compiled module (None for library
    kernels and ATen ops). ``ops``: for a device event, the CPU ops around its launch,
    innermost first (``timeline.launch_stacks``); empty on the host timeline, where the
    op is the event itself.
    """
    rule = rule_for(name, info, ops)
    return rule.category if rule is not None else FALLBACK
