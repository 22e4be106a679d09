"""What a compiled module defines and calls, as every reader of one gives it (pure data; no
torch): its kernels, its extern calls in the order they run, its role and device, and how its
``call`` is partitioned. ``core/modparse.py`` reads a module Inductor wrote with its Python
wrapper, ``core/cppwrapper.py`` one it wrote with its C++ wrapper."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .vocab import Role

# the profiler name a C++ kernel records itself under (C++ kernel profiling on)
RECORD = re.compile(r'RAIIAtenRecordFunctionHandle\s+\w+\(\s*"([^"]+)"')


@dataclass
class KernelInfo:
    """A kernel as its module defines it."""

    name: str
    kind: str  # "triton" | "cpp" | other async_compile kinds
    heuristic: str | None = None  # triton decorator, or cpp: pointwise/reduction/template
    aten_ops: list[str] = field(default_factory=list)
    source_nodes: list[str] = field(default_factory=list)
    kernel_path: str | None = None  # Triton: the per-kernel file Inductor wrote
    record_names: list[str] = field(default_factory=list)  # profiler names inside C++ source
    source: str = ""


@dataclass
class ExternCall:
    callee: str  # e.g. "extern_kernels.addmm", "aten.convolution_backward"
    aten_ops: list[str] = field(default_factory=list)
    source_nodes: list[str] = field(default_factory=list)


@dataclass
class EagerCall:
    """A kernel or extern call ``Runner.call`` makes itself, outside every partition."""

    callee: str  # the kernel's name or the extern callee
    after: int  # how many partitions ``call`` has run before it (0: before the first)


@dataclass
class Partitioning:
    """How a module's ``call`` is split into graph partitions (count 0: not at all, every
    launch is in ``call`` itself)."""

    count: int = 0  # the partition functions the Runner holds
    order: list[int] = field(default_factory=list)  # the partitions ``call`` runs, in order
    eager: list[EagerCall] = field(default_factory=list)  # with partitions: the calls between them


@dataclass
class ModuleInfo:
    aot_id: str
    role: str  # forward | backward | inference | unknown
    kernels: dict[str, KernelInfo]
    externs: list[ExternCall]  # in the order they run (``run_order``)
    device: str | None  # a backend name (core/devices.py), None when the module says nothing
    partitions: Partitioning = field(default_factory=Partitioning)

    def kernel_for_record(self, record_name: str) -> KernelInfo | None:
        """Map a profiler event name to the kernel that emitted it.

        C++ kernels record ``graph_<i>_<name>``; CPU GEMM templates record names such as
        ``graph_0_gemm_m128n512k256_kernel`` that are found in the kernel's source.
        """
        if record_name in self.kernels:
            return self.kernels[record_name]
        for k in self.kernels.values():
            if record_name in k.record_names:
                return k
        m = re.match(r"graph_\d+_(\w+)$", record_name)
        if m and m.group(1) in self.kernels:
            return self.kernels[m.group(1)]
        return None


def role_of(aot_id: str) -> str:
    for role in Role.ALL:
        if aot_id.endswith(role):
            return role
    return Role.UNKNOWN


def cpp_heuristic(source: str) -> str:
    """Category of a C++ kernel from its source: attention (the flex attention template, which
    also calls micro GEMMs), template, reduction or pointwise."""
    if "kvBlockSize" in source and "qSplitSize" in source:
        return "attention"
    if "micro_gemm" in source or "cpp_template" in source or "GemmMicro" in source:
        return "template"
    if re.search(r"\btmp_acc\d+", source) or "Welford<" in source:
        return "reduction"
    return "pointwise"


def fused_ops_from_name(name: str) -> list[str]:
    """Fallback origin for kernels with no ``Original ATen`` comment:
    ``cpp_fused_gelu_native_layer_norm_0`` -> ``["fused: gelu_native_layer_norm"]``."""
    m = re.search(r"fused_(\w+?)(?:_\d+)?$", name)
    return [f"fused: {m.group(1)}"] if m else []


def split_list(s: str) -> list[str]:
    """The items of a comment's list: ``aten.t, aten.addmm`` -> ``["aten.t", "aten.addmm"]``."""
    return [x.strip() for x in s.split(",") if x.strip()]
