"""GEMMs by shape in a trace recorded with ``record_shapes=True``: each GEMM op's call
(``aten::mm``, ``addmm``, ``bmm``, ``baddbmm``) with its FLOPs, the time of the work it ran
and the TFLOP/s it reached, grouped by op, operand shapes and type; pure, no torch.

- **FLOPs** per call: 2·M·N·K per product, from the operands' ``Input Dims``
  (``other_ops.gemm_flops``, the count ``breakdown`` gives an extern GEMM; torch's
  ``flop_counter`` counts the same). A bias's additions are not counted.
- **Time**: on a device trace, the device events launched while the op was open on the
  launching thread (innermost GEMM op first): a cuBLAS GEMM's kernel, a split-K reduction,
  an ``addmm``'s bias copy; however late they ran. On a CPU-only trace, the op's own
  duration (the CPU runs it as it is called). A GEMM op inside another is its own call, the
  outer one keeping what it launched outside it.
- **Which steps**: a call belongs to the step its op started in; the typical step is the mean
  over the steady steps (as every other figure of ``analyze``).
- **Other work**: the share of that time (in the same steady steps) in kernels no GEMM
  library's name (``GEMM_KERNEL``): a layout copy of an operand before the GEMM, a memset. The
  kernel shown is the GEMM kernel that took the most time.
- **% of peak**: against the datasheet's dense peak (``core/peaks.py``) of the GPU the trace
  names, for the compute type: bf16/fp16 inputs the tensor-core peak; fp32 the TF32 peak where
  the kernel's name says TF32 (``tf32``, cutlass ``tensorop_s1688``), the fp32 one where it is a
  SIMT ``sgemm``, none where it says neither.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .buffers import Tensor
from .columns import TraceColumns
from .dtypes import float_kind
from .other_ops import GEMM_OPERANDS, gemm_flops
from .peaks import FP16, FP32, TF32, lookup
from .steps import StepEvents, by_step

NESTED_LOOKBACK = 8  # GEMM ops before a launch's that may still enclose it (GEMMs rarely nest)
_TF32_KERNEL = re.compile(r"tf32|tensorop_s\d|s16816gemm|s1688gemm", re.IGNORECASE)
_FP32_KERNEL = re.compile(r"sgemm", re.IGNORECASE)
# a GEMM library's kernel (a split-K reduction included); the rest an op launches is other work:
# a layout copy of an operand, a memset, a bias's add
GEMM_KERNEL = re.compile(r"gemm|xmma|nvjet|cutlass|cublas|splitk|wgmma|matmul", re.IGNORECASE)


@dataclass
class GemmShape:
    """One GEMM op at one set of operand shapes and type, on one device (or CPU thread)."""

    device: str
    op: str  # "aten::addmm"
    shapes: str  # the two operands: "128x256 @ 256x1024"
    dtype: str  # the operands' type: "fp32", "bf16" ...
    flops: float  # per call
    calls: list[int]  # per step
    ms: list[float]  # per step: the time of the work its calls ran
    other_ms: list[float]  # per step: of that, the time in kernels no GEMM library's (GEMM_KERNEL)
    kernel: str | None = None  # the GEMM kernel that took most of that time (device traces)
    kernel_ms: dict[str, float] = field(default_factory=dict, repr=False)  # over all steps


@dataclass
class TypicalGemm:
    """A ``GemmShape`` in the typical step: means over the steady steps."""

    row: GemmShape
    calls: float
    ms: float
    tflops: float | None  # the steady steps' FLOPs over their time
    other_pct: float | None  # of the steady steps' time, the share in other kernels; None on the host
    compute: str | None  # the compute type its peak is quoted for; None: not known
    peak_tflops: float | None
    peak_source: str | None

    @property
    def pct(self) -> float | None:
        if self.tflops is None or not self.peak_tflops:
            return None
        return 100.0 * self.tflops / self.peak_tflops


def gemm_shapes(c: TraceColumns, split: StepEvents) -> list[GemmShape]:
    """The trace's GEMM calls with shapes, grouped (``GemmShape``); [] without record_shapes."""
    if not c.gemm_args:
        return []
    calls = _calls(c)
    if not calls:
        return []
    if split.shares is not None:  # a CPU-only trace: each op its own duration
        timed = _host_times(c, split, list(calls))
    else:
        timed = _launched(c, split, list(calls))
    per_step, _ = by_step(split.windows, [g for g in calls if g in timed], c.op.ts)
    groups: dict[tuple[str, str, str, str], GemmShape] = {}
    n = len(split.windows)
    for k, gs in enumerate(per_step):
        for g in gs:
            device, us, kernels = timed[g]
            op, shapes, dtype, flops = calls[g]
            key = (device, op, shapes, dtype)
            row = groups.get(key)
            if row is None:
                row = groups[key] = GemmShape(device, op, shapes, dtype, flops, [0] * n, [0.0] * n, [0.0] * n)
            row.calls[k] += 1
            row.ms[k] += us / 1e3
            for name, kus in kernels.items():
                row.kernel_ms[name] = row.kernel_ms.get(name, 0.0) + kus / 1e3
                if not GEMM_KERNEL.search(name):
                    row.other_ms[k] += kus / 1e3
    for row in groups.values():
        gemm = [k for k in row.kernel_ms if GEMM_KERNEL.search(k)] or list(row.kernel_ms)
        row.kernel = max(gemm, key=lambda name: row.kernel_ms[name]) if gemm else None
    return sorted(groups.values(), key=lambda r: (-sum(r.ms), r.device, r.op, r.shapes))


def _calls(c: TraceColumns) -> dict[int, tuple[str, str, str, float]]:
    """GEMM op -> (op, "MxK @ KxN", the operands' type, FLOPs) of every GEMM op whose shapes give
    a count; each distinct op and shapes described once (a loop repeats them every step)."""
    out: dict[int, tuple[str, str, str, float]] = {}
    described: dict[tuple[int, Any], tuple[str, str, str, float] | None] = {}
    for g, pair in c.gemm_args.items():
        key = (c.op.name[g], pair)
        if key not in described:
            described[key] = _describe(c.names.values[key[0]], *pair)
        if (found := described[key]) is not None:
            out[g] = found
    return out


def _tensor(dims: Any, dtype: Any) -> Tensor | None:
    if not isinstance(dims, tuple) or not all(isinstance(d, int) for d in dims):
        return None
    return Tensor(tuple(dims), dtype if isinstance(dtype, str) else None)


def _describe(name: str, dims: Any, types: Any) -> tuple[str, str, str, float] | None:
    """(op, "MxK @ KxN", the operands' type, FLOPs) of a GEMM op's call; None where its shapes
    give no count."""
    op = name.removeprefix("aten::")
    flops = gemm_flops(op, [_tensor(d, types[i] if i < len(types) else None) for i, d in enumerate(dims)])
    if flops is None:
        return None
    a, b = GEMM_OPERANDS[op]
    shapes = " @ ".join("x".join(map(str, dims[i])) for i in (a, b))
    kinds = {float_kind(types[i]) or str(types[i]) for i in (a, b) if i < len(types)}
    return name, shapes, "/".join(sorted(kinds)), flops


def _launched(c: TraceColumns, split: StepEvents,
              gemms: list[int]) -> dict[int, tuple[str, float, dict[str, float]]]:
    """GEMM op -> (device, µs, kernel name -> µs) of the device events launched inside it."""
    by_thread = _by_thread(c, gemms)
    out: dict[int, tuple[str, float, dict[str, float]]] = {}
    launch = split.launch or ()
    l_ts, l_where = c.launch.ts, c.launch.where
    dur, name, names = split.events.dur, split.events.name, split.names
    for js in split.per_step:
        for j in js:
            li = launch[j] if j < len(launch) else -1
            if li < 0 or (ops := by_thread.get(l_where[li])) is None:
                continue
            g = _enclosing(ops, l_ts[li], c)
            if g is None:
                continue
            device, us, kernels = out.get(g) or (split.device(j), 0.0, {})
            kernel = names[name[j]]
            kernels[kernel] = kernels.get(kernel, 0.0) + dur[j]
            out[g] = (device, us + dur[j], kernels)
    return out


def _by_thread(c: TraceColumns, gemms: list[int]) -> dict[int, tuple[list[float], list[int]]]:
    """Thread -> (starts, op indices) of its GEMM ops, by start (the longer first at one start)."""
    found: dict[int, list[tuple[float, float, int]]] = defaultdict(list)
    for g in gemms:
        found[c.op.where[g]].append((c.op.ts[g], -c.op.dur[g], g))
    out = {}
    for thread, rows in found.items():
        rows.sort()
        out[thread] = ([t for t, _, _ in rows], [g for _, _, g in rows])
    return out


def _host_times(c: TraceColumns, split: StepEvents,
                gemms: list[int]) -> dict[int, tuple[str, float, dict[str, float]]]:
    """GEMM op -> (CPU thread, µs of its own duration less that of GEMM ops inside it, {})."""
    out: dict[int, tuple[str, float, dict[str, float]]] = {}
    ts, dur = c.op.ts, c.op.dur
    for _, idx in _by_thread(c, gemms).values():
        open_: list[int] = []
        for g in idx:
            while open_ and ts[open_[-1]] + dur[open_[-1]] < ts[g]:
                open_.pop()
            if open_:  # inside another GEMM op: its time is its own, not the outer one's
                outer = open_[-1]
                out[outer] = (out[outer][0], out[outer][1] - dur[g], {})
            out[g] = (split.rows[split.row[g]], dur[g], {})
            open_.append(g)
    return out


def _enclosing(ops: tuple[list[float], list[int]], t: float, c: TraceColumns) -> int | None:
    """The innermost GEMM op open at ``t`` on the thread (the latest to start of those whose
    span holds it)."""
    starts, idx = ops
    i = bisect_right(starts, t) - 1
    for k in range(i, max(-1, i - NESTED_LOOKBACK), -1):
        g = idx[k]
        if t <= c.op.ts[g] + c.op.dur[g]:
            return g
    return None


def compute_type(dtype: str, kernel: str | None) -> str | None:
    """The compute type whose peak the GEMM is held against (see the module docstring)."""
    if dtype in ("bf16", "fp16"):
        return FP16
    if dtype != "fp32" or not kernel:
        return None
    if _TF32_KERNEL.search(kernel):
        return TF32
    return FP32 if _FP32_KERNEL.search(kernel) else None


def typical_gemms(rows: Sequence[GemmShape], steady: Sequence[int],
                  device_names: dict[str, str]) -> list[TypicalGemm]:
    """Each row over the steady steps, by time; a row with no call in them left out."""
    out = []
    n = len(steady) or 1
    for r in rows:
        calls = sum(r.calls[k] for k in steady)
        if not calls:
            continue
        ms = sum(r.ms[k] for k in steady)
        compute = compute_type(r.dtype, r.kernel)
        peak = lookup(device_names[r.device]) if r.device in device_names else None
        peak_tflops = peak.flops_for(compute) if peak is not None else None
        tflops = r.flops * calls / (ms * 1e9) if ms > 0 else None
        other = 100.0 * sum(r.other_ms[k] for k in steady) / ms if ms > 0 and r.kernel_ms else None
        out.append(TypicalGemm(r, calls / n, ms / n, tflops, other, compute, peak_tflops,
                               peak.source if peak_tflops else None))
    return sorted(out, key=lambda t: (-t.ms, t.row.device, t.row.op, t.row.shapes))
