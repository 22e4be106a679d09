"""The kernel categories, in report order. Adding a category is one line here
plus one rule in ``classify.py``."""

from __future__ import annotations

# key -> label shown in reports. Order is the order of report sections.
CATEGORIES: dict[str, str] = {
    "triton_pointwise": "Triton pointwise",
    "triton_reduction": "Triton reduction",
    "triton_persistent_reduction": "Triton persistent reduction",
    "triton_split_scan": "Triton split scan",
    "triton_template": "Triton template",
    "triton_foreach": "Triton foreach / combo",
    "triton_other": "Triton other",
    "cpp_pointwise": "C++ pointwise",
    "cpp_reduction": "C++ reduction",
    "cpp_template": "C++ template (GEMM)",
    "cpp_attention_template": "C++ template (attention)",
    # a C++ kernel known by its name alone (a trace without the module): its name does not say
    # whether it reduces (cpp_fused_..._sum_0 may, or only follow a reduction), its source does
    "cpp_kernel": "C++ kernel (kind unknown: no source)",
    "extern_gemm": "GEMM (extern)",
    "extern_conv": "convolution (extern)",
    "extern_attention": "attention (extern)",
    # an op of a namespace not torch's own (core/classify.py): torch.library custom ops, and
    # those of libraries that register their own (torchvision::nms)
    "extern_custom": "custom op (extern)",
    "communication": "communication (collectives)",
    "memcpy": "memcpy",
    "memset": "memset",
    "extern_other": "other ATen (extern)",
    # a CPU-only trace's record functions that wrap other ops: the time they spend outside
    # every op inside them (analyze.py)
    "host_compiled": "compiled graph, outside its ops (C++ kernels, wrapper)",
    "host_framework": "framework (Dynamo, autograd)",
}
# Categories of the host ops that wrap other ops: their time goes to the ops inside them, only
# what those leave uncovered stays theirs.
WRAPPER_CATEGORIES = frozenset({"host_compiled", "host_framework"})

TRITON_CATEGORIES = frozenset(k for k in CATEGORIES if k.startswith("triton_"))
CPP_CATEGORIES = frozenset(k for k in CATEGORIES if k.startswith("cpp_"))


def label(key: str) -> str:
    return CATEGORIES.get(key, key)


def order(key: str) -> int:
    keys = list(CATEGORIES)
    return keys.index(key) if key in keys else len(keys)
