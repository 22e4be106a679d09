"""GEMMs, convolutions and attention by shape in a trace recorded with ``record_shapes=True``:
each call of such an op (``recorded_shapes.SHAPED_OPS``) with its FLOPs, the time of the work it
ran and the TFLOP/s it reached, grouped by op, shapes (an operand's strides with them where they
are not the contiguous ones) and type; pure, no torch.

- **FLOPs** per call: from the arguments' recorded shapes and scalar values
  (``recorded_shapes.describe``), as ``breakdown`` counts an extern call and torch's
  ``flop_counter`` counts the op: 2·M·N·K a GEMM product (a bias's additions not counted), a
  convolution's 2 × output elements × weight elements per output channel, attention's Q·Kᵀ and
  P·V (of the scores the causal mask keeps).
- **Time**: on a device trace, the device events launched while the op was open on the
  launching thread (innermost shaped op first): a cuBLAS GEMM's or a cuDNN convolution's
  kernels, a split-K reduction, an ``addmm``'s bias copy, a layout transpose; however late they
  ran. On a CPU-only trace, and for an op that launched no device work on a device trace (its
  tensors on the CPU: a row of its CPU thread), the op's own duration (the CPU runs it as it is
  called). A shaped op
  inside another is its own call, the outer one keeping what it launched outside it.
- **Which steps**: a call belongs to the step its op started in; the typical step is the mean
  over the steady steps (as every other figure of ``analyze``).
- **Kernels a call**: the device events (kernels, a memset, a copy) its calls launched over its
  calls, in the same steps (2 for a split-K GEMM and its reduction; 4 for an efficient attention
  backward with its sums and copies): the time above is all of theirs.
- **Other work**: the share of that time (in the same steady steps) in kernels that are not the
  library's own (``LIBRARY_KERNEL``; ``LAYOUT_KERNEL`` is other work even in cuDNN's name): a
  layout copy or transpose of an operand, a memset, a fill. The kernel shown is the library
  kernel that took the most time.
- **% of peak**: against the datasheet's dense peak (``core/peaks.py``) of the GPU the trace
  names, for the compute type: bf16/fp16 inputs the tensor-core peak, fp8 the fp8 one (int8 has
  no datasheet figure in the table: none); fp32 the TF32 peak where
  the kernel's name says TF32 (``tf32``, cutlass ``tensorop_s1688``), the fp32 one where it is a
  SIMT ``sgemm`` (cuDNN's ``implicit_convolve_sgemm`` too), none where it says neither.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .columns import TraceColumns
from .peaks import FP8, FP16, FP32, INT8, TF32, lookup
from .recorded_shapes import SHAPED_OPS, Described, describe
from .steps import HOST_THREAD, StepEvents, by_step

NESTED_LOOKBACK = 8  # shaped ops before a launch's that may still enclose it (they rarely nest)
_TF32_KERNEL = re.compile(r"tf32|tensorop_s\d|s16816gemm|s1688gemm", re.IGNORECASE)
_FP32_KERNEL = re.compile(r"sgemm", re.IGNORECASE)
# a GEMM, convolution or attention library's kernel (a split-K reduction included); the rest an
# op launches is other work: a layout copy of an operand, a memset, a bias's add
LIBRARY_KERNEL = re.compile(r"gemm|xmma|nvjet|cutlass|cublas|splitk|wgmma|matmul|conv|cudnn|fprop|dgrad"
                            r"|wgrad|winograd|flash|fmha|attention|attn|sdpa", re.IGNORECASE)
# cuDNN's own layout transposes (``cudnn::ops::nchwToNhwcKernel``): other work, not the library's
LAYOUT_KERNEL = re.compile(r"nchwToNhwc|nhwcToNchw|transpose", re.IGNORECASE)


def library_kernel(name: str) -> bool:
    """Whether a kernel an op launched is the library's own work (see the module docstring)."""
    return LIBRARY_KERNEL.search(name) is not None and LAYOUT_KERNEL.search(name) is None


@dataclass
class ShapedOp:
    """One shaped op at one set of argument shapes and type, on one device (or CPU thread)."""

    device: str
    op: str  # "aten::addmm"
    shapes: str  # "128x256 @ 256x1024 (strides 1x256)" (recorded_shapes.Described)
    dtype: str  # the shown arguments' type: "fp32", "bf16" ...
    flops: float  # per call
    calls: list[int]  # per step
    ms: list[float]  # per step: the time of the work its calls ran
    other_ms: list[float]  # per step: of that, the time in kernels not the library's (library_kernel)
    kernel: str | None = None  # the library kernel that took most of that time (device traces)
    kernel_ms: dict[str, float] = field(default_factory=dict, repr=False)  # over all steps
    # the shown arguments' recorded strides (its first call's); None: the trace recorded none, or
    # a oneDNN op of CPU freezing (its packed weight's strides say nothing of the product)
    strides: list[Any] | None = None
    launches: list[int] = field(default_factory=list)  # per step: the device events its calls launched


@dataclass
class TypicalShapedOp:
    """A ``ShapedOp`` in the typical step: means over the steady steps."""

    row: ShapedOp
    calls: float
    ms: float
    tflops: float | None  # the steady steps' FLOPs over their time
    other_pct: float | None  # of the steady steps' time, the share in other kernels; None on the host
    compute: str | None  # the compute type its peak is quoted for; None: not known
    peak_tflops: float | None
    peak_source: str | None
    kernels_a_call: float | None = None  # the device events a call launched (steady steps); None on the host

    @property
    def ms_per_call(self) -> float:
        """The steady steps' time over their calls: the row's ms over its calls, both means over
        the same steps (a row has a call in them)."""
        return self.ms / self.calls

    @property
    def pct(self) -> float | None:
        if self.tflops is None or not self.peak_tflops:
            return None
        return 100.0 * self.tflops / self.peak_tflops


def shaped_ops(c: TraceColumns, split: StepEvents) -> list[ShapedOp]:
    """The trace's GEMM, convolution and attention calls with shapes, grouped (``ShapedOp``); []
    without record_shapes."""
    if not c.shape_args:
        return []
    calls = _calls(c)
    if not calls:
        return []
    if split.shares is not None:  # a CPU-only trace: each op its own duration
        timed = _host_times(c, split, list(calls))
    else:  # an op that launched no device work (CPU tensors) a row of its thread, its own duration
        timed = _launched(c, split, list(calls))
        timed |= _host_times(c, split, [g for g in calls if g not in timed])
    per_step, _ = by_step(split.windows, [g for g in calls if g in timed], c.op.ts)
    groups: dict[tuple[str, str, str, str], ShapedOp] = {}
    n = len(split.windows)
    for k, gs in enumerate(per_step):
        for g in gs:
            device, us, kernels, launched = timed[g]
            d = calls[g]
            key = (device, d.op, d.shapes, d.dtype)
            row = groups.get(key)
            if row is None:
                row = groups[key] = ShapedOp(device, d.op, d.shapes, d.dtype, d.flops, [0] * n, [0.0] * n,
                                             [0.0] * n, strides=_listed(d.strides), launches=[0] * n)
            row.calls[k] += 1
            row.launches[k] += launched
            row.ms[k] += us / 1e3
            for name, kus in kernels.items():
                row.kernel_ms[name] = row.kernel_ms.get(name, 0.0) + kus / 1e3
                if not library_kernel(name):
                    row.other_ms[k] += kus / 1e3
    for row in groups.values():
        library = [k for k in row.kernel_ms if library_kernel(k)] or list(row.kernel_ms)
        row.kernel = max(library, key=lambda name: row.kernel_ms[name]) if library else None
    return sorted(groups.values(), key=lambda r: (-sum(r.ms), r.device, r.op, r.shapes))


def unrecorded_calls(c: TraceColumns) -> dict[str, int]:
    """Op -> calls of the trace's GEMM, convolution and attention ops where it recorded no shapes
    (no ``Input Dims``: a profile without ``record_shapes=True``), by name; {} where it did, or
    holds no such op."""
    if c.shape_args:
        return {}
    values = c.names.values
    counts = Counter(c.op.name)
    return {values[i]: n for i, n in sorted(counts.items(), key=lambda kv: values[kv[0]])
            if values[i] in SHAPED_OPS}


def _listed(value: Any) -> Any:
    """Tuples as lists, all the way down (as the trace wrote them)."""
    return list(map(_listed, value)) if isinstance(value, tuple) else value


def _calls(c: TraceColumns) -> dict[int, Described]:
    """Shaped op -> what its call computes (``recorded_shapes.describe``), for every call whose
    recorded arguments give a count; each distinct op and arguments described once (a loop
    repeats them every step)."""
    out: dict[int, Described] = {}
    described: dict[tuple[int, Any], Described | None] = {}
    for g, args in c.shape_args.items():
        key = (c.op.name[g], args)
        if key not in described:
            described[key] = describe(c.names.values[key[0]], *args)
        if (found := described[key]) is not None:
            out[g] = found
    return out


def _launched(c: TraceColumns, split: StepEvents,
              shaped: list[int]) -> dict[int, tuple[str, float, dict[str, float], int]]:
    """Shaped op -> (device, µs, kernel name -> µs, how many) of the device events launched inside it."""
    by_thread = _by_thread(c, shaped)
    out: dict[int, tuple[str, float, dict[str, float], int]] = {}
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
            device, us, kernels, launched = out.get(g) or (split.device(j), 0.0, {}, 0)
            kernel = names[name[j]]
            kernels[kernel] = kernels.get(kernel, 0.0) + dur[j]
            out[g] = (device, us + dur[j], kernels, launched + 1)
    return out


def _by_thread(c: TraceColumns, shaped: list[int]) -> dict[int, tuple[list[float], list[int]]]:
    """Thread -> (starts, op indices) of its shaped ops, by start (the longer first at one start)."""
    found: dict[int, list[tuple[float, float, int]]] = defaultdict(list)
    for g in shaped:
        found[c.op.where[g]].append((c.op.ts[g], -c.op.dur[g], g))
    out = {}
    for thread, rows in found.items():
        rows.sort()
        out[thread] = ([t for t, _, _ in rows], [g for _, _, g in rows])
    return out


def _host_times(c: TraceColumns, split: StepEvents,
                shaped: list[int]) -> dict[int, tuple[str, float, dict[str, float], int]]:
    """Shaped op -> (CPU thread, µs of its own duration less that of shaped ops inside it, {}, 0)."""
    out: dict[int, tuple[str, float, dict[str, float], int]] = {}
    ts, dur, threads = c.op.ts, c.op.dur, c.threads.values
    for _, idx in _by_thread(c, shaped).values():
        open_: list[int] = []
        for g in idx:
            while open_ and ts[open_[-1]] + dur[open_[-1]] < ts[g]:
                open_.pop()
            if open_:  # inside another shaped op: its time is its own, not the outer one's
                outer = open_[-1]
                out[outer] = (out[outer][0], out[outer][1] - dur[g], {}, 0)
            out[g] = (f"{HOST_THREAD}{threads[c.op.where[g]][1]}", dur[g], {}, 0)
            open_.append(g)
    return out


def _enclosing(ops: tuple[list[float], list[int]], t: float, c: TraceColumns) -> int | None:
    """The innermost shaped op open at ``t`` on the thread (the latest to start of those whose
    span holds it)."""
    starts, idx = ops
    i = bisect_right(starts, t) - 1
    for k in range(i, max(-1, i - NESTED_LOOKBACK), -1):
        g = idx[k]
        if t <= c.op.ts[g] + c.op.dur[g]:
            return g
    return None


def compute_type(dtype: str, kernel: str | None) -> str | None:
    """The compute type whose peak the op is held against (see the module docstring)."""
    if dtype in ("bf16", "fp16"):
        return FP16
    if dtype == "fp8":  # either format, and e4m3 by e5m2
        return FP8
    if dtype in ("int8", "int8/uint8", "uint8"):
        return INT8
    if dtype != "fp32" or not kernel:
        return None
    if _TF32_KERNEL.search(kernel):
        return TF32
    return FP32 if _FP32_KERNEL.search(kernel) else None


def typical_shaped_ops(rows: Sequence[ShapedOp], steady: Sequence[int],
                  device_names: dict[str, str]) -> list[TypicalShapedOp]:
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
        launched = sum(r.launches[k] for k in steady) if r.launches else 0
        out.append(TypicalShapedOp(r, calls / n, ms / n, tflops, other, compute, peak_tflops,
                                   peak.source if peak_tflops else None,
                                   launched / calls if launched else None))
    return sorted(out, key=lambda t: (-t.ms, t.row.device, t.row.op, t.row.shapes))


def shaped_ops_left_out(rows: Sequence[ShapedOp], kept: Sequence[int],
                        steps: Sequence[str]) -> list[tuple[str, list[str]]]:
    """The rows (``op shapes, type``) that ran only in steps left out of the typical step, with
    those steps (of ``steps``, every step's name), the most time first."""
    out = set(kept)
    only = [r for r in rows if any(r.calls) and not any(r.calls[i] for i in out)]
    only.sort(key=lambda r: -sum(r.ms))
    return [(f"{r.op} {r.shapes}, {r.dtype}", [steps[i] for i, n in enumerate(r.calls) if n]) for r in only]
