"""The GEMM section of ``analyze``: what a trace recorded with ``record_shapes=True`` says of
its GEMMs, shape by shape, in the typical step (``core/gemms.py``)."""

from __future__ import annotations

from ..core.analyze import AnalyzeResult, steady_gemms
from ..core.gemms import TypicalGemm
from . import format as fmt
from .doc import Doc

KERNEL_CHARS = 48


def gemms_section(doc: Doc, r: AnalyzeResult, top: int) -> None:
    """The GEMM shapes taking the most time: calls and ms in the typical step, GFLOP a call, the
    TFLOP/s reached and, where the trace names a GPU the datasheet has, its % of that peak."""
    typical = steady_gemms(r)
    if not typical:
        return
    host = all(t.row.device.startswith("CPU thread") for t in typical)
    rows = [_row(doc, t, host) for t in typical[:top]]
    which = "steady mean step" if len(r.steps) > 1 else r.steps[0].name
    shown = f"top {top} of {len(typical)}, " if len(typical) > top else ""
    doc.heading(f"GEMMs by shape: record_shapes ({shown}{which})")
    headers = ["thread" if host else "device", "op", "shapes", "type", "calls", "ms", "GFLOP a call",
               "TFLOP/s"]
    if not host:
        headers += ["% peak", "% other work", "GEMM kernel"]
    doc.table(rows, headers, ("left", "left", "left", "left", *("right",) * 6, "left")[:len(headers)])
    sources = sorted({t.peak_source for t in typical[:top] if t.peak_source})
    doc.fine_print(
        "FLOPs = 2·M·N·K a product, from the operands' recorded shapes (a bias's additions not counted); "
        + ("ms = the op's own time on the CPU thread; " if host else
           "ms = the device work launched while the op was open (its GEMM kernel, a split-K reduction, a "
           "bias copy), however late it ran; ")
        + "TFLOP/s = the steady steps' FLOPs over that time."
        + ("" if host else
           " % other work: of that time, the share in kernels that are no GEMM library's (a layout "
           "copy of an operand, a memset). % peak: of the datasheet's dense peak for the compute type "
           "(bf16/fp16: tensor cores; fp32: TF32 where the kernel's name says so, the fp32 units for "
           "a SIMT sgemm; none where it says neither, or the GPU is not in the table)"
           + (f": {', '.join(sources)}" if sources else "") + ".")
        + " (docs/analyze.md)"
    )


def _row(doc: Doc, t: TypicalGemm, host: bool) -> list[str]:
    r = t.row
    cells = [r.device, doc.code(r.op), r.shapes, r.dtype, fmt.count(round(t.calls, 2)), fmt.ms(t.ms),
             f"{r.flops / 1e9:.3g}", fmt.number(t.tflops, ".3g")]
    if host:
        return cells
    kernel = doc.named(doc.code(fmt.kernel_label(r.kernel, KERNEL_CHARS)), r.kernel) if r.kernel else ""
    return [*cells, fmt.pct(t.pct), fmt.pct(t.other_pct), kernel]
