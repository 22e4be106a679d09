"""The roofline chart's model: each kernel a point (its intensity, FLOP/s and time), the
measured and datasheet ceilings as its roofs, and its caption (drawn by ``roofline_svg.py``)."""

from __future__ import annotations

from ..core.categories import label, order
from ..core.ceilings import Ceilings, Roofline
from ..core.peaks import COMPUTE_TYPES, INT8
from ..core.results import BreakdownResult
from ..core.roofline import ceilings_of, chart_points
from ..core.si_units import sig3
from ..core.step_totals import reweighed
from . import format as fmt
from .roofline_marks import bound_words
from .roofline_svg import Point, Roof, Scatter


def _roofs(c: Ceilings | None, roof: Roofline) -> list[Roof]:
    out = []
    if c is not None and c.gbps:
        out += [_roof("measured", k, c.gbps, c.tflops[k]) for k in COMPUTE_TYPES if k in c.tflops]
        out = out or [_roof("measured", "bandwidth", c.gbps, None)]
    ds = roof.datasheet
    if ds.gbps:
        sheet = [_roof("datasheet", k, ds.gbps, ds.tflops[k], dashed=True)
                 for k in COMPUTE_TYPES if k in ds.tflops]
        out += sheet or [_roof("datasheet", "", ds.gbps, None, dashed=True)]
    return out


def _roof(source: str, kind: str, gbps: float, tflops: float | None, dashed: bool = False) -> Roof:
    """A ceiling, its figures in its tooltip as the section's ceilings line prints them."""
    name = f"{source} {kind}".strip()
    flops = f", {fmt.sig3_or_dash(tflops)} {'TOP/s' if kind == INT8 else 'TFLOP/s'}" if tflops else ""
    tip = f"{name}: {fmt.sig3_or_dash(gbps)} GB/s{flops}"
    return Roof(name, gbps, tflops, dashed, tip=tip, int_ops=kind == INT8)


def roofline_title(roofs: list[Roof]) -> str:
    """The chart's caption, naming the ceilings it draws: measured (solid), datasheet (dashed)."""
    measured, datasheet = any(not x.dashed for x in roofs), any(x.dashed for x in roofs)
    if measured:
        dashed = " (datasheet dashed)" if datasheet else ""
        return f"Roofline: each kernel against the measured ceilings{dashed}"
    return "Roofline: each kernel against the datasheet's ceilings (dashed)" if datasheet else "Roofline"


def roofline_chart(r: BreakdownResult) -> Scatter | None:
    if r.roofline is None:
        return None
    pts = []
    cats: set[str] = set()
    w = r.weights()
    where = "the script" if r.script else "the step"
    devices = {g.id: g.device for g in r.graphs}
    for gid, k, roof in chart_points(r):
        cats.add(k.category)
        unit = "TOP/s" if k.compute == INT8 else "TFLOP/s"
        flops = f"{sig3(roof.tflops)} {unit} · " if roof.tflops is not None else "no FLOP count · "
        calls = f" a call of its graph, {fmt.ms(w[gid] * k.ms)} ms in {where}" if w[gid] != 1 else ""
        tip = (f"{gid} · {k.name}\n"
               f"{fmt.ms(k.ms)} ms{calls} · {fmt.sig3_or_dash(roof.gbps)} GB/s · {flops}"
               f"{fmt.pct(roof.pct)} of peak · {bound_words(roof, k, devices.get(gid, ''))}")
        # its size: its time in the step (a script: all its graph's calls), as the top kernels
        pts.append(Point(tip, k.category, w[gid] * k.ms, roof.intensity, roof.tflops, roof.pct,
                         int_ops=k.compute == INT8))
    roofs = _roofs(ceilings_of(r), r.roofline)
    return Scatter(
        roofline_title(roofs),
        pts,
        roofs,
        note=f"A circle's area is the kernel's time in {where}"
        + (" (all its graph's calls)." if reweighed(w) else ".") + (
            " Pale circles in the strip at the left: kernels without a FLOP count, at their share of the "
            "bandwidth ceiling." if any(p.intensity is None and p.pct for p in pts)
            and any(not x.dashed for x in roofs) else ""),
        legend={c: label(c) for c in sorted(cats, key=lambda c: (order(c), c))},
    )
