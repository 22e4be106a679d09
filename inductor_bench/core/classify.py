"""Kernel -> category: one rule table, first match wins; no torch import.

A kernel's own source decides where the module gives it (the Triton heuristics
decorator, the C++ kernel's accumulators), then its name: Inductor's Triton prefixes,
the C++ kernels' profiler names, and the names of extern GPU kernels (cuBLAS, CUTLASS,
cuDNN, flash attention, memcpy/memset) and CPU ATen ops. Anything else is
``extern_other``. Adding a category is one key in ``categories.py`` plus rows here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .modparse import KernelInfo

Predicate = Callable[[str, KernelInfo | None], bool]
FALLBACK = "extern_other"


@dataclass(frozen=True)
class Rule:
    test: Predicate
    category: str
    why: str  # what the row recognises, for readers and test ids


def _source(kind: str, *heuristics: str) -> Predicate:
    """Matches a kernel whose module source gives ``kind`` and one of ``heuristics``
    (none listed: any heuristic the source names)."""

    def test(name: str, info: KernelInfo | None) -> bool:
        if info is None or info.kind != kind or not info.heuristic:
            return False
        return not heuristics or info.heuristic in heuristics

    return test


def _name(pattern: str, flags: int = re.IGNORECASE) -> Predicate:
    rx = re.compile(pattern, flags)
    return lambda name, info: rx.search(name) is not None


RULES: list[Rule] = [
    # -- from the kernel's source: Triton heuristics decorator ------------------------
    Rule(_source("triton", "pointwise"), "triton_pointwise", "@pointwise"),
    Rule(_source("triton", "reduction", "cooperative_reduction"), "triton_reduction",
         "@reduction / @cooperative_reduction"),
    Rule(_source("triton", "persistent_reduction"), "triton_persistent_reduction",
         "@persistent_reduction"),
    Rule(_source("triton", "split_scan"), "triton_split_scan", "@split_scan"),
    Rule(_source("triton", "template"), "triton_template", "@template"),
    Rule(_source("triton", "foreach"), "triton_foreach", "@foreach"),
    Rule(_source("triton"), "triton_other", "@fixed_config / @user_autotune / other"),
    # -- from the kernel's source: C++ (modparse.cpp_heuristic) -----------------------
    Rule(_source("cpp", "reduction"), "cpp_reduction", "cpp accumulators"),
    Rule(_source("cpp", "template"), "cpp_template", "cpp micro_gemm"),
    Rule(_source("cpp"), "cpp_pointwise", "cpp other"),
    # -- Inductor Triton names: triton_<category[:3]>_... (the prefix set is open) ----
    Rule(_name(r"^triton_poi_", 0), "triton_pointwise", "triton_poi_"),
    Rule(_name(r"^triton_red_", 0), "triton_reduction", "triton_red_"),
    Rule(_name(r"^triton_per_", 0), "triton_persistent_reduction", "triton_per_"),
    Rule(_name(r"^triton_spl_", 0), "triton_split_scan", "triton_spl_"),
    Rule(_name(r"^triton_tem_", 0), "triton_template", "triton_tem_"),
    Rule(_name(r"^triton_for_", 0), "triton_foreach", "triton_for_"),
    Rule(_name(r"^triton_", 0), "triton_other", "triton_unk_ / other triton_"),
    # -- Inductor C++ kernels by profiler name (graph_<i>_<kernel>) or Python name ----
    Rule(_name(r"^graph_\d+_(?:\w*_)?gemm|^graph_\d+_\w+_kernel$|^cpp_\w*gemm", 0),
         "cpp_template", "graph_<i>_gemm_..._kernel"),
    Rule(_name(r"^(?:graph_\d+_)?cpp_", 0), "cpp_pointwise", "graph_<i>_cpp_ / cpp_"),
    # -- CPU ATen / mkldnn ops ---------------------------------------------------------
    Rule(_name(r"^aten::(?:mm|addmm|_addmm_activation|bmm|baddbmm|addbmm|matmul|linear"
               r"|_mkl_linear|mkldnn_linear|_int_mm)$"
               r"|^mkl::_mkl_linear$|^mkldnn::_linear_pointwise|^onednn::qlinear", 0),
         "extern_gemm", "aten::mm / addmm / bmm / linear, mkl, mkldnn linear"),
    Rule(_name(r"^aten::(?:convolution|_convolution|mkldnn_convolution|convolution_backward"
               r"|conv(?:\d|_|olution)\w*|_slow_conv\w*|thnn_conv\w*)$"
               r"|^mkldnn::_convolution|^onednn::qconv", 0),
         "extern_conv", "aten::convolution / mkldnn convolution"),
    Rule(_name(r"^aten::\w*(?:scaled_dot_product|flash_attention|efficient_attention"
               r"|cudnn_attention)", 0),
         "extern_attention", "aten::scaled_dot_product_* / flash / efficient"),
    # -- GPU extern kernels. Attention first: cuDNN's SDPA kernels also say "cudnn" and
    #    "fprop"; convolution before GEMM: implicit-GEMM convs also say "gemm".
    Rule(_name(r"flash_fwd|flash_bwd|flash_attn|fmha|efficient_attention|attention|sdpa"),
         "extern_attention", "flash / fmha / efficient attention / cuDNN SDPA"),
    Rule(_name(r"cudnn|fprop|dgrad|wgrad|implicit_convolve|winograd|conv(?:olution|olve|_|\d)"
               r"|nchwToNhwc|nhwcToNchw"),
         "extern_conv", "cuDNN / implicit-GEMM conv / conv kernels"),
    # (CUTLASS kernels wrapped in cutlass::Kernel2<...> are caught by "cutlass")
    Rule(_name(r"gemm|gemv|sm\d+_xmma|cutlass|cublas|nvjet|splitKreduce"),
         "extern_gemm", "cuBLAS / cuBLASLt / CUTLASS / nvjet"),
    Rule(_name(r"memcpy"), "memcpy", "Memcpy HtoD / DtoD / DtoH"),
    Rule(_name(r"memset"), "memset", "Memset"),
]


def rule_for(name: str, info: KernelInfo | None = None) -> Rule | None:
    """The first rule that matches, or None (the kernel is then ``extern_other``)."""
    for rule in RULES:
        if rule.test(name, info):
            return rule
    return None


def classify(name: str, info: KernelInfo | None = None) -> str:
    """The category key (see ``categories.CATEGORIES``) of a kernel or extern op."""
    rule = rule_for(name, info)
    return rule.category if rule is not None else FALLBACK

