"""The roofline in reports: the ceilings (measured, with the datasheet's beside them), a table
of the kernels against them, the chart (``roofline_chart.py``), and the "% peak" cells other
tables add (each kernel's mark and bound in words: ``roofline_marks.py``). Every figure comes
from ``core/roofline.py``; nothing is shown for a result that has no ceilings (one saved before
schema 4, or one whose measurement failed, which says why)."""

from __future__ import annotations

from ..core.call_groups import as_judged, kernels_a_call
from ..core.ceilings import (
    ABOVE_CEILING_PCT,
    Ceilings,
    GroupRoof,
    Roofline,
    group_roof,
    is_widened,
)
from ..core.peaks import COMPUTE_TYPES, INT8
from ..core.results import BreakdownResult, GraphResult, KernelStat
from ..core.roofline import (
    FAR_BELOW_PCT,
    KernelRoof,
    above_compute_ceiling,
    category_far_below_ms,
    ceilings_of,
    chart_points,
    judged_calls,
    kernel_roof,
    short_when_undisturbed,
    site_stat,
)
from ..core.si_units import sig3, with_prefix
from ..core.views import Unit
from ..core.work import counted_from
from . import format as fmt
from .doc import Doc
from .roofline_chart import roofline_chart
from .roofline_marks import LOW_CEILING, MARKS, bound_words, pct_mark

PCT_HEADER = "% peak"
JUDGED_SHOWN = 90.0  # a time-weighted % over less of the kernel time than this says how much
FAR_HEADER = f"under {FAR_BELOW_PCT:g}% of limit"


def shows_roofline(r: BreakdownResult) -> bool:
    """The result has ceilings to hold its kernels against (or says why it has none)."""
    return r.roofline is not None


def pct_cell(r: BreakdownResult, g: GraphResult, k: KernelStat) -> str:
    """A kernel's % of its limit, ``~`` before it when it is latency-bound, ``^`` when it is
    served from a cache (memory-bound, above the DRAM ceiling): neither is a % of a limit it
    could reach; ``!`` when it is compute-bound above the compute ceiling (``beats_compute_ceiling``)."""
    roof = kernel_roof(as_judged(g, k) or k, ceilings_of(r), g.device)  # an extern call's kernels as one
    if roof.pct is None:
        return fmt.DASH
    return pct_mark(roof) + f"{roof.pct:.0f}%"


def unit_member(u: Unit) -> tuple[GraphResult, KernelStat, float]:
    """A view's unit as (graph, kernel, its time): a call site as a kernel of its own."""
    k = site_stat(u.graph, u.kernel, u.site) if u.site is not None else u.kernel
    return u.graph, k, u.ms


def unit_pct_cell(r: BreakdownResult, u: Unit) -> str:
    """A view's row: a kernel's % of its limit, or an extern call site's own."""
    g, k, _ = unit_member(u)
    return pct_cell(r, g, k)


def group_pct_cell(r: BreakdownResult, members: list[tuple[GraphResult, KernelStat, float]],
                   whole: bool = False) -> str:
    """The time-weighted % of peak of a group of kernels (a module's, a source line's, an extern
    op's calls), each with its time in the group; those not counted and those whose % is no
    distance to a limit (latency-bound, in cache) left out, and the share of the group's time it
    is over said where that is short (``weighted_cell``); ``whole``: the % to the unit, as the
    kernel rows beside it read. A group none of whose kernels' % is a distance to a limit reads
    their time-weighted % for each reason, marked as such a kernel's is (``~``: too short to reach
    a limit; ``^``: above the DRAM ceiling), the reason with more of the group's time first
    (``~14.0%, ^200.0%``), and the share of the group's time they hold where it is short (kernels
    without a %: a template, a custom op), not a dash that reads as unmeasured. ``!`` before a
    figure that takes in a kernel above the compute ceiling (``beats_compute_ceiling``)."""
    c = ceilings_of(r)
    return group_roof_cell(group_roof([(kernel_roof(as_judged(g, k) or k, c, g.device), ms)
                                       for g, k, ms in members]), whole)


def group_roof_cell(g: GroupRoof, whole: bool = False) -> str:
    """A group's % of peak as ``group_pct_cell`` reads it, from its figures (``core/ceilings.group_roof``):
    the step's in compare's and diff's rows too, marked as the views mark it."""
    if not g.parts:
        low = LOW_CEILING if g.above_ceiling else ""  # a figure it takes in is inflated
        return fmt.DASH if g.pct is None else low + weighted_cell(g.pct, g.share, whole)
    figures = ", ".join(MARKS[why] + weighted_cell(p, 100.0, whole) for why, p, _ in g.parts)
    return weighted_cell(None, g.parts_share, whole, figures)


def op_pct_cell(r: BreakdownResult, g: GraphResult, k: KernelStat) -> str:
    """A row of the op view: a kernel's % (``pct_cell``), or for an extern op called at several
    places, its calls' (``op_calls_cell``)."""
    return op_calls_cell(r, g, k) or pct_cell(r, g, k)


def op_calls_cell(r: BreakdownResult, g: GraphResult, k: KernelStat) -> str | None:
    """An op view's row of an extern op called at several places: its calls each judged on its own
    (``judged_calls``, as the step's % and the category tables judge them) and weighed by its time,
    as the views by line and module weigh a group's: not one figure of the calls pooled, which
    hides a latency-bound call inside it. Where each of its calls is latency-bound or in cache,
    their time-weighted % for each reason, marked (``~``, ``^``), as a module's or line's group
    reads. None where the row reads the kernel's own % (one call; calls none of which has a %
    beside its own marked one)."""
    calls = [(g, c, c.ms) for c, _, site in judged_calls(g) if site is not None and site.kernel == k.name]
    if len(calls) < 2:
        return None
    cell = group_pct_cell(r, calls, whole=True)
    return None if cell == fmt.DASH and pct_cell(r, g, k).startswith(("~", "^")) else cell


def far_below_cells(r: BreakdownResult, cats: dict[str, float],
                    graphs: list[GraphResult] | None = None) -> dict[str, str] | None:
    """Category -> the share of its own time in kernels under ``FAR_BELOW_PCT`` of their
    limit ("total": of all kernel time); None when the result has no ceilings."""
    if not shows_roofline(r):
        return None
    far = category_far_below_ms(r, graphs)
    out = {c: fmt.pct(fmt.share(far.get(c, 0.0), ms)) for c, ms in cats.items()}
    out["total"] = fmt.pct(fmt.share(sum(far.values()), sum(cats.values())))
    return out


def weighted_cell(pct: float | None, share: float | None, whole: bool = False, text: str = "") -> str:
    """A time-weighted % of peak (``whole``: to the unit; ``text``: figures said already), and
    the share of kernel time it is over where that is short of ``JUDGED_SHOWN`` (templates and
    custom ops without a FLOP count, latency-bound and in-cache kernels left out); where kernels
    ran and none of them is judged, says why there is no %."""
    if pct is None and share == 0 and not text:
        return f"{fmt.DASH} (no kernel has a %: each uncounted)"
    text = text or (f"{pct:.0f}%" if whole and pct is not None else fmt.pct(pct))
    if (pct is None and text == fmt.DASH) or share is None or share >= JUDGED_SHOWN:
        return text
    return f"{text} (over {share:.0f}% of kernel time)"


def _si(v: float | None, unit: str) -> str:
    return fmt.DASH if v is None else with_prefix(v, unit)


def tflops_words(c: Ceilings, widened_said: bool = False) -> str:
    """``fp32 0.22, fp16/bf16 0.727, int8 0.862 TOP/s``: the measured TFLOP/s per compute type
    (int8's: its integer operations); ``widened_said``: a figure that is fp32's, not measured
    on its own (``core/ceilings.widened``), says so."""
    return ", ".join(f"{k} {fmt.sig3_or_dash(c.tflops[k])}" + (" TOP/s" if k == INT8 else "")
                     + (" (fp32's: widened)" if widened_said and is_widened(c, k) else "")
                     for k in COMPUTE_TYPES if k in c.tflops)


def figures_words(c: Ceilings) -> str:
    """``30.9 GB/s, TFLOP/s fp32 0.22, ...``: one set of ceilings in a line."""
    flops = tflops_words(c)
    if not c.gbps:
        return flops
    return f"{sig3(c.gbps)} GB/s" + (f", TFLOP/s {flops}" if flops else "")


def ceilings_lines(roof: Roofline) -> list[str]:
    """The measured ceilings and the datasheet's, one line each."""
    c, ds = roof.measured, roof.datasheet
    if c is None:
        return [roof.error or "the ceilings were not measured"]
    flops = tflops_words(c, widened_said=True)
    bw = f"{sig3(c.gbps)} GB/s" if c.gbps else fmt.DASH
    if c.triad_gbps is not None:
        bw += f" (copy {fmt.sig3_or_dash(c.copy_gbps)}, triad {fmt.sig3_or_dash(c.triad_gbps)})"
    cached = f"; cached, measured {c.measured_at}" if c.from_cache else f"; measured {c.measured_at}"
    lay = ", ".join(f"{k} {c.matmul_layout[k]}" for k in COMPUTE_TYPES if k in c.matmul_layout)
    how = c.how + (f"; layouts: {lay}" if lay else "")
    out = [f"measured ceilings: {bw}; TFLOP/s {flops or fmt.DASH} ({how}{cached})"]
    if ds.part:
        dflops = ", ".join(f"{k} {sig3(ds.tflops[k])}" for k in COMPUTE_TYPES if k in ds.tflops)
        out.append(f"datasheet ({ds.part}, dense): {ds.gbps:.4g} GB/s; TFLOP/s {dflops}")
    else:
        out.append("datasheet: this device is not in the table (core/peaks.py)")
    if c.load:
        out.append(f"WARNING: the ceilings were measured while {c.load}: they may be low "
                   "(the next run measures again and keeps the higher figures)")
    if c.errors:
        out.append("not measured: " + "; ".join(c.errors))
    return out + _measured_again(c)


def _measured_again(c: Ceilings) -> list[str]:
    """What this run measured again because its kernels ran above a ceiling."""
    if not c.remeasured_from:
        return []
    moves = ", ".join(f"{k} {sig3(old)} -> {sig3(c.tflops.get(k, old))}" if c.tflops.get(k, old) > old
                      else f"{k} {sig3(old)} (no higher this time)"
                      for k, old in sorted(c.remeasured_from.items()))
    return [f"measured again, because kernels of this run ran above the ceiling: TFLOP/s {moves} "
            "(the higher figure is kept, here and in the machine's cache)"]


def roofline_section(doc: Doc, r: BreakdownResult, top: int) -> None:
    """The ceilings, the kernels against them (longest first), and the chart."""
    if r.roofline is None:
        return
    doc.heading("How far from the limit (roofline)")
    pts = chart_points(r)
    c = r.roofline.measured
    doc.paragraph(*ceilings_lines(r.roofline), *_above_ceiling(doc, pts, c), *_in_cache_under_load(pts, c))
    if not pts:
        doc.paragraph("no kernel of this run has a byte count")
        return
    labels = doc.kernel_labels([k.name for _, k, _ in pts[:top]])
    devices = {g.id: g.device for g in r.graphs}
    rows = [_row(doc, gid, k, roof, name, devices.get(gid, ""))
            for (gid, k, roof), name in zip(pts[:top], labels, strict=True)]
    headers = ["graph", "kernel", "ms", "bytes", "FLOPs", "GB/s", "TFLOP/s", "FLOP/B", PCT_HEADER, "bound",
               "counted from"]
    aligns = ["left", "left", "right", "right", "right", "right", "right", "right", "right", "left", "left"]
    groups = [(gid, k, name) for (gid, k, _), name in zip(pts[:top], labels, strict=True) if k.beside]
    if groups:  # a device's extern calls that ran several kernels: how many, each row
        for row, (_, k, _) in zip(rows, pts[:top], strict=True):
            row.insert(3, f"{kernels_a_call(k):.3g}")
        headers.insert(3, "kernels a call")
        aligns.insert(3, "right")
    doc.table(rows, headers, tuple(aligns),
              optional=("counted from", "FLOP/B", "bytes", "FLOPs"))  # a narrow terminal's table
    if groups:
        doc.paragraph(_groups_words(doc, groups))
    if len(pts) > top:
        doc.paragraph(f"… and {len(pts) - top} more counted kernels")
    doc.chart(roofline_chart(r))  # type: ignore[arg-type]
    stalled = any(short_when_undisturbed(k, roof, devices.get(gid, "")) is not None
                  for gid, k, roof in pts[:top])  # a row reads latency (short when undisturbed: ...)
    doc.paragraph(_legend(stalled))


def _legend(stalled: bool) -> str:
    """The note under the table: what its columns and bounds mean; ``stalled``: a row reads
    ``latency (short when undisturbed: …)``, which it explains too."""
    undisturbed = ("latency (short when undisturbed: fastest N µs a launch; its mean is not): the verdict "
                   "holds on its fastest iteration, a launch of N µs, but its mean launch, the row's ms, is "
                   "too long to be short: other work stalled some of its iterations, so the row's time is "
                   "not the kernel's own. " if stalled else "")
    return (
        "ms: the kernel's time in one call of its graph, the call its bytes and FLOPs are "
        "counted for (the rows: the most time in all calls first). "
        f"{PCT_HEADER} = achieved FLOP/s over the roofline at the kernel's intensity (min of the "
        "compute ceiling and intensity x bandwidth), or achieved GB/s over the bandwidth where "
        "it has no FLOP count; against the measured ceilings. latency (too short): even at the "
        "ceilings one launch would take only a few microseconds, so its % says how short it is, "
        f"not how slow; the kernel tables mark it ~. {undisturbed}In cache: a memory-bound kernel above the "
        "DRAM ceiling, its data served from a cache the ceiling does not bound; the kernel "
        f"tables mark it ^. Above the measured ceiling: a compute-bound kernel over {ABOVE_CEILING_PCT:g}% "
        "of the compute ceiling, which no cache explains (the warning above says why); the kernel "
        "tables mark it !, as the views mark a group's % that takes one in (docs/roofline.md)."
    )


def _groups_words(doc: Doc, groups: list[tuple[str, KernelStat, str]]) -> str:
    """What the rows of extern calls that ran several kernels on the device hold."""
    each = "; ".join(f"{gid} {doc.code(name)} with " + ", ".join(
        f"{doc.code(doc.kernel_label(other))} x{launches:.3g}"
        for other, (launches, _) in (k.beside or {}).items()) for gid, k, name in groups)
    return ("kernels a call: the device kernels an extern call ran, its main kernel (the one that took "
            "most of its time, the row's name) and those it launched beside it (a split-K reduction, an "
            "attention backward's sums and copies); the row's ms is all of theirs, its figures the calls' "
            f"work over that time, and those kernels have no row of their own here: {each} (launches an "
            "iteration; docs/roofline.md).")


def _above_ceiling(doc: Doc, pts: list[tuple[str, KernelStat, KernelRoof]], c: Ceilings | None) -> list[str]:
    """A compute-bound kernel above the compute ceiling: the ceiling is low, and says so; or,
    where this run measured it again and the kernel still beat it, that its shape outruns the
    square matmul the ceiling is measured with."""
    above = above_compute_ceiling(pts)
    if not above:
        return []
    gid, k, roof = max(above, key=lambda p: p[2].pct or 0.0)
    most = f"{roof.pct:.0f}%" if roof.pct >= 100.5 else f"{roof.pct:.1f}%"  # never 'above ... up to 100%'
    head = (f"WARNING: {len(above)} compute-bound kernel(s) ran above the measured compute ceiling "
            f"(up to {most}: {gid} {doc.code(doc.kernel_label(k.name))})")
    if c is not None and k.compute in c.remeasured_from:
        return [f"{head}, even measured again in this run: the square matmul the ceiling is measured "
                "with runs slower here than this kernel's shape, or the machine slowed down while it "
                "was measured; --refresh-peaks measures every ceiling again"]
    return [f"{head}: the ceiling was measured low, most likely while the machine ran slower than "
            "during this run; --refresh-peaks measures it again"]


def _in_cache_under_load(pts: list[tuple[str, KernelStat, KernelRoof]], c: Ceilings | None) -> list[str]:
    """Where the bandwidth was measured under load, a kernel above it may be above a low ceiling,
    not served from a cache: said of the kernels marked in cache."""
    n = sum(pct_mark(roof) == MARKS["in cache"] for _, _, roof in pts)
    if c is None or not c.load or not n:
        return []
    return [f"WARNING: {n} memory-bound kernel(s) above the bandwidth ceiling, marked in cache (^), "
            "were held against a ceiling measured under load: they may be above a low ceiling, not "
            "served from a cache (a quiet run's ceilings tell which)"]


def _row(doc: Doc, gid: str, k: KernelStat, roof: KernelRoof, name: str, device: str) -> list[str]:
    ints = k.compute == INT8  # integer operations, under the FLOP columns with their own unit
    return [
        gid, doc.named(doc.code(name), k.name), fmt.ms(k.ms), _si(k.bytes, "B"),
        _si(k.flops, "OP" if ints else "FLOP") if k.flops else fmt.DASH,
        fmt.sig3_or_dash(roof.gbps),
        fmt.sig3_or_dash(roof.tflops) + (" TOP/s" if ints and roof.tflops else ""),
        fmt.sig3_or_dash(roof.intensity),
        fmt.pct(roof.pct), bound_words(roof, k, device), counted_from(k.work_from),
    ]


