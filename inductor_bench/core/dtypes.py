"""Element types as torch, C++ and Triton spell them: their size in bytes, and the compute type
(``core/peaks.py``'s name) of the floating-point ones (pure; no torch)."""

from __future__ import annotations

# bytes per element, by the names torch, C++ and Triton give the types
DTYPE_BYTES = {
    "float64": 8, "double": 8, "fp64": 8, "int64": 8, "int64_t": 8, "i64": 8, "u64": 8,
    "float32": 4, "float": 4, "fp32": 4, "int32": 4, "int32_t": 4, "i32": 4, "u32": 4,
    "float16": 2, "half": 2, "at::Half": 2, "fp16": 2, "bfloat16": 2, "at::BFloat16": 2,
    "bf16": 2, "int16": 2, "int16_t": 2, "i16": 2,
    "int8": 1, "int8_t": 1, "i8": 1, "uint8": 1, "uint8_t": 1, "u8": 1, "bool": 1, "i1": 1,
    "uint16": 2, "uint32": 4, "uint64": 8, "uint16_t": 2, "uint32_t": 4, "uint64_t": 8,
    "complex32": 4, "chalf": 4, "complex64": 8, "cfloat": 8, "complex128": 16, "cdouble": 16,
}
FLOAT_KINDS = {  # element type -> the compute-type name core/peaks.py knows (its Triton spelling)
    "float64": "fp64", "double": "fp64", "fp64": "fp64",
    "float32": "fp32", "float": "fp32", "fp32": "fp32",
    "float16": "fp16", "half": "fp16", "at::Half": "fp16", "fp16": "fp16",
    "bfloat16": "bf16", "at::BFloat16": "bf16", "bf16": "bf16",
    "complex32": "fp16", "complex64": "fp32", "complex128": "fp64",  # their parts' type
    "c10::Half": "fp16", "c10::BFloat16": "bf16",  # as a profiler trace's "Input type" says them
}


def dtype_bytes(dtype: str | None) -> int | None:
    """Bytes per element of a torch / C++ / Triton element type; None when unknown."""
    if dtype is None:
        return None
    t = dtype.removeprefix("torch.").lstrip("*").strip()
    if "float8" in t.lower() or t.startswith("fp8"):
        return 1
    return DTYPE_BYTES.get(t)


INT8_TYPES = frozenset({"int8", "int8_t", "i8", "uint8", "uint8_t", "u8"})


def int8_operands(dtypes: list[str]) -> bool:
    """The first two are 8-bit integer types: a GEMM template's operands (C++: ``X`` and ``W``;
    Triton: ``arg_A`` and ``arg_B``) of an int8 product, whatever float scales follow."""
    return len(dtypes) >= 2 and all(d.removeprefix("torch.").lstrip("*").strip() in INT8_TYPES
                                    for d in dtypes[:2])


def float_kind(dtype: str | None) -> str | None:
    """``fp32``, ``bf16``, ``fp8e4nv`` ...: the name ``peaks.compute_type`` reads; None for
    integer and unknown types."""
    if dtype is None:
        return None
    t = dtype.removeprefix("torch.").lstrip("*").strip()
    if "float8" in t.lower() or t.startswith("fp8"):
        return "fp8"
    return FLOAT_KINDS.get(t)
