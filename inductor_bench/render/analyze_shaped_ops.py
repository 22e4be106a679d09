"""The by-shape section of ``analyze``: what a trace recorded with ``record_shapes=True`` says of
its GEMMs, convolutions and attention, shape by shape, in the typical step
(``core/shaped_ops.py``)."""

from __future__ import annotations

from collections.abc import Iterable

from ..core.analyze_result import AnalyzeResult
from ..core.peaks import lookup
from ..core.recorded_shapes import ATTENTION_OPS, CONV_OPS, GEMM_OPS
from ..core.shaped_ops import TypicalShapedOp
from ..core.sources import STRIDES_MARK
from ..core.steps import HOST_THREAD
from ..core.typical_step import steady_shaped_ops, steady_shaped_ops_left_out
from . import format as fmt
from .analyze_top import left_out_line, step_code
from .doc import Doc

KERNEL_CHARS = 48
# What a terminal too narrow for the table leaves out (table_fit), in this order: the figures
# the others are made from or that qualify them, then the library kernel, before a cell of
# shapes is cut (``2048x606x16…048x160x20`` reads as other sizes). A file, a pipe and markdown
# keep every column.
OPTIONAL = ("% other work", "kernels a call", "GFLOP a call", "ms a call", "library kernel")


def shaped_ops_section(doc: Doc, r: AnalyzeResult, top: int) -> None:
    """The GEMM, convolution and attention shapes taking the most time: calls and ms in the
    typical step, GFLOP a call, the TFLOP/s reached and, where the trace names a GPU the
    datasheet has, its % of that peak."""
    typical, left_out = steady_shaped_ops(r), steady_shaped_ops_left_out(r)
    if not typical:
        if left_out:  # every call in a step left out: said, as the kernels' section says it
            doc.heading(f"{_title(r)} by shape: record_shapes")
            doc.fine_print(left_out_line(doc, "shapes", left_out) + ". (docs/analyze.md)")
        elif r.shapes_not_recorded:  # the ops ran, their shapes were not recorded: said, not silent
            doc.heading(f"{_kinds(r.shapes_not_recorded)} by shape")
            calls = ", ".join(f"{fmt.count(n)} {doc.code(op)}" for op, n in r.shapes_not_recorded.items())
            profile = doc.code("torch.profiler.profile(record_shapes=True)")
            doc.fine_print(f"Shapes not recorded: the trace holds {calls} calls but no shapes (Input Dims); "
                           f"this section needs a trace from {profile}. (docs/analyze.md)")
        return
    host = all(t.row.device.startswith(HOST_THREAD) for t in typical)
    # distinct kernels read apart (a GEMM's cutlass kernels differ in their layout's ``_nn_``/``_tn_`` alone)
    labels = doc.kernel_labels([t.row.kernel or "" for t in typical[:top]], KERNEL_CHARS)
    rows = [_row(doc, t, host, label) for t, label in zip(typical[:top], labels, strict=True)]
    which = "steady mean step" if len(r.steps) > 1 else step_code(doc, r.steps[0].name)
    shown = f"top {top} of {len(typical)}, " if len(typical) > top else ""
    doc.heading(f"{_title(r)} by shape: record_shapes ({shown}{which})")
    headers = ["thread" if host else "device", "op", "shapes", "type", "calls", "ms", "ms a call",
               "GFLOP a call", "TFLOP/s"]
    if not host:
        headers += ["% peak", "% other work", "kernels a call", "library kernel"]
    gone = doc.table(rows, headers, ("left", "left", "left", "left", *("right",) * 8, "left")[:len(headers)],
                     optional=OPTIONAL)
    peaks = _peaks_used(typical[:top])
    strided = any(STRIDES_MARK in t.row.shapes for t in typical[:top])
    doc.fine_print(
        (left_out_line(doc, "shapes", left_out) + ". " if left_out else "")
        + ("shapes: an operand whose recorded strides are not the contiguous ones shows them, a row of "
         "its own (a transposed view: 128x96 (strides 1x128)); " if strided else "")
        + "FLOPs, from the recorded shapes: 2·M·N·K a GEMM product (a bias's additions not counted), a "
        "convolution's 2 × output elements × weight elements per output channel (its backward that much "
        "per gradient but the bias's), attention's Q·Kᵀ and P·V (of the scores the causal mask keeps); "
        + ("ms = the op's own time on the CPU thread; " if host else
           "ms = the device work launched while the op was open (its library kernels, a split-K "
           "reduction, a bias copy, a layout transpose), however late it ran"
           + ("" if not any(t.row.device.startswith(HOST_THREAD) for t in typical[:top]) else
              " (a row on a CPU thread launched no device work, its tensors on the CPU: the op's own time)")
           + "; ")
        + "ms a call = the steady steps' time over their calls; TFLOP/s = their FLOPs over that time."
        + ("" if host else
           _column_notes(gone) + " % peak: of the datasheet's "
           "dense peak for the compute type "
           "(bf16/fp16: tensor cores; fp8: its tensor-core peak; fp32: TF32 where the kernel's name says so, "
           "the fp32 units for "
           "a SIMT sgemm; none where it says neither, or the GPU is not in the table"
           + _unnamed(r, typical[:top]) + ")"
           + (f". Peaks used: {'; '.join(peaks)}" if peaks else "") + ".")
        + " (docs/analyze.md)"
    )


def _column_notes(gone: tuple[str, ...]) -> str:
    """What % other work and kernels a call mean, each where the table shows it."""
    notes = {
        "% other work": " % other work: of that time, the share in kernels that are not the library's "
                        "(a layout copy or transpose of an operand, a memset).",
        "kernels a call": " kernels a call: the device kernels a call launched (a memset or copy "
                          "among them), all in its ms (2: a split-K GEMM and its reduction).",
    }
    return "".join(text for header, text in notes.items() if header not in gone)


def _unnamed(r: AnalyzeResult, shown: list[TypicalShapedOp]) -> str:
    """Why the rows shown that have no peak have none, device by device: the trace names no GPU
    at all (no ``deviceProperties``), or not the one a row ran on, or one the table lacks."""
    if not r.device_names:
        return "; this trace names no GPU (it holds no deviceProperties): no row has a peak"
    devices = sorted({t.row.device for t in shown if t.peak_tflops is None
                      and not t.row.device.startswith(HOST_THREAD)}, key=lambda d: (len(d), d))
    unnamed = [d for d in devices if d not in r.device_names]
    unknown = [d for d in devices if d in r.device_names and lookup(r.device_names[d]) is None]
    named = sorted(r.device_names, key=lambda d: (len(d), d))
    out = ""
    if unnamed:
        out += (f"; device {', '.join(unnamed)} ran rows here, and this trace does not name "
                f"{'it' if len(unnamed) == 1 else 'them'} (its deviceProperties name device "
                f"{', '.join(named)} alone): {'its' if len(unnamed) == 1 else 'their'} rows have no peak")
    return out + "".join(f"; device {d} is {r.device_names[d]}, not in the table" for d in unknown)


def _peaks_used(shown: list[TypicalShapedOp]) -> list[str]:
    """Each peak the rows' % peak is of, by compute type, with where it comes from: a part's
    label (``V100 SXM2 (fp16)``) names no compute type of the rows."""
    used: dict[str, dict[str, float]] = {}
    for t in shown:
        if t.peak_source and t.peak_tflops and t.compute:
            used.setdefault(t.peak_source, {})[t.compute] = t.peak_tflops
    return [", ".join(f"{c} {p:g} TFLOP/s" for c, p in sorted(v.items())) + f" ({src})"
            for src, v in sorted(used.items())]


def _row(doc: Doc, t: TypicalShapedOp, host: bool, label: str) -> list[str]:
    r = t.row
    cells = [r.device, doc.code(r.op), r.shapes, r.dtype, fmt.count(round(t.calls, 2)), fmt.ms(t.ms),
             fmt.ms(t.ms_per_call), f"{r.flops / 1e9:.3g}", fmt.number(t.tflops, ".3g")]
    if host:
        return cells
    kernel = doc.named(doc.code(label), r.kernel) if r.kernel else ""
    return [*cells, fmt.pct(t.pct), fmt.pct(t.other_pct), fmt.number(t.kernels_a_call, ".3g"), kernel]


_KINDS = ((GEMM_OPS, "GEMMs"), (CONV_OPS, "convolutions"), (ATTENTION_OPS, "attention"))


def _title(r: AnalyzeResult) -> str:
    """"GEMMs", "GEMMs and convolutions" ...: the kinds of op the section holds (its rows and
    those that ran only in steps left out)."""
    return _kinds({row.op for row in r.shaped_ops})


def _kinds(ops: Iterable[str]) -> str:
    """"GEMMs", "GEMMs and convolutions" ...: the kinds of op of ``ops`` (names of shaped ops)."""
    ops = set(ops)
    kinds = [name for names, name in _KINDS if not ops.isdisjoint(names)]
    text = ", ".join(kinds[:-1]) + (" and " if len(kinds) > 1 else "") + kinds[-1]
    return text[0].upper() + text[1:]
