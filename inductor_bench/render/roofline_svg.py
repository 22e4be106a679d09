"""The roofline chart as inline SVG, drawn in Python like the bar charts (``html_svg.py``):
log-log axes (arithmetic intensity in FLOP/byte across, TFLOP/s up), the measured ceilings as
solid lines and the datasheet's dashed, each kernel a circle whose area is its time, coloured by
its category, with a tooltip. Kernels without a FLOP count (generated pointwise and reduction
kernels) have no intensity: they stand in a strip at the left edge, drawn pale (filled at 30%), at the height
of their share of the bandwidth ceiling, so a point's distance below the roof is still its
% of peak. Each ceiling is named at its right end, the names spread a line apart where the
lines end closer (a GPU's fp8 and int8, measured and datasheet) and joined to them."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from itertools import pairwise

from .html_page import series_class

WIDTH, HEIGHT = 760, 420
LEFT, RIGHT, TOP, BOTTOM = 64, 150, 12, 44
STRIP = 46  # px: the strip of kernels without a FLOP count, left of the plot
MAX_R = 16.0  # px: the radius of the longest kernel
LABEL_GAP = 13.0  # px between the names of two ceilings (12 px text)


@dataclass
class Point:
    label: str  # tooltip
    series: str  # colour key (a category)
    ms: float
    intensity: float | None  # FLOP/byte; None: no FLOP count (drawn in the strip)
    tflops: float | None  # achieved; for strip points the height is pct of the roof
    pct: float | None = None
    int_ops: bool = False  # its tflops are integer operations (an int8 GEMM): TOP/s


@dataclass
class Roof:
    label: str  # "measured fp32", "datasheet fp16/bf16"
    gbps: float
    tflops: float | None  # None: the bandwidth slope alone
    dashed: bool = False
    tip: str = ""  # on hover, its figures: "measured fp32: 4.92 GB/s, 0.0255 TFLOP/s"
    int_ops: bool = False  # its compute ceiling is of integer operations (int8): TOP/s


@dataclass
class Scatter:
    title: str
    points: list[Point]
    roofs: list[Roof]
    note: str = ""
    legend: dict[str, str] = field(default_factory=dict)  # series -> label


def _e(s: str) -> str:
    return html.escape(s, quote=True)


def _f(v: float) -> str:
    return f"{v:.1f}"


def _decades(lo: float, hi: float) -> tuple[int, int]:
    return math.floor(math.log10(lo)), math.ceil(math.log10(hi))


def _x_domain(s: Scatter) -> tuple[int, int]:
    xs = [p.intensity for p in s.points if p.intensity] + [
        r.tflops * 1e3 / r.gbps for r in s.roofs if r.tflops]
    xs = xs or [0.1, 10.0]
    x0, x1 = _decades(min(xs) / 2, max(xs) * 4)
    return x0, max(x1, x0 + 1)


def strip_height(p: Point, roofs: list[Roof], x0: int) -> float | None:
    """A kernel without a FLOP count: its % of peak times the bandwidth roof at the plot's left
    edge (the first solid roof's), so its distance below the roof reads as on the plot."""
    bw = next((r for r in roofs if not r.dashed), None)
    if bw is None or not p.pct:
        return None
    return 10.0**x0 * bw.gbps / 1e3 * p.pct / 100.0


def y_unit(s: Scatter) -> str:
    """The vertical axis's unit: ``TFLOP/s``, and int8's TOP/s where an int8 ceiling or a point
    at its integer operations' rate is drawn."""
    ints = any(r.int_ops and r.tflops for r in s.roofs) or any(
        p.int_ops and p.intensity is not None and p.tflops for p in s.points)
    return "TFLOP/s, int8 TOP/s" if ints else "TFLOP/s"


def scatter_svg(s: Scatter) -> str:
    dx0, dx1 = _x_domain(s)
    heights = [p.tflops if p.intensity is not None else strip_height(p, s.roofs, dx0) for p in s.points]
    ys = [h for h in heights if h] + [r.tflops for r in s.roofs if r.tflops]
    ys += [10.0**dx0 * r.gbps / 1e3 for r in s.roofs]
    dy0, dy1 = _decades(min(ys or [1e-3]) / 2, max(ys or [1.0]) * 2)
    dy1 = max(dy1, dy0 + 1)
    px0, px1, py0, py1 = LEFT + STRIP, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP

    def x(v: float) -> float:
        return px0 + (math.log10(v) - dx0) / (dx1 - dx0) * (px1 - px0)

    def y(v: float) -> float:
        v = max(v, 10.0**dy0)
        return py0 - (math.log10(v) - dy0) / (dy1 - dy0) * (py0 - py1)

    out = [f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
           f'width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{_e(s.title)}">']
    out += _grid(x, y, (dx0, dx1), (dy0, dy1), px0, px1, py0, py1)
    out.append(f'<text class="tick" x="12" y="{_f((py0 + py1) / 2)}" text-anchor="middle" '
               f'transform="rotate(-90 12 {_f((py0 + py1) / 2)})">{_e(y_unit(s))} (log)</text>')
    roofs = [_roof(r, x, y, (dx0, dx1)) for r in s.roofs]
    label_ys = spread([end for _, end in roofs], py1, py0, LABEL_GAP)
    for r, (line, end), ly in zip(s.roofs, roofs, label_ys, strict=True):
        out.append(_roof_label(r, line, end, ly, px1))
    longest = max((p.ms for p in s.points), default=1.0) or 1.0
    order = sorted(range(len(s.points)), key=lambda i: -s.points[i].ms)  # small ones on top
    for i in order:
        out.append(_point(s.points[i], heights[i], x, y, longest, px0))
    out.append("</svg>")
    return "".join(out)


def _grid(x, y, xd: tuple[int, int], yd: tuple[int, int], px0: float, px1: float,
          py0: float, py1: float) -> list[str]:
    out = []
    for d in range(xd[0], xd[1] + 1):
        xv = _f(x(10.0**d))
        out.append(f'<line class="grid" x1="{xv}" x2="{xv}" y1="{_f(py1)}" y2="{_f(py0)}"/>')
        out.append(f'<text class="tick" x="{xv}" y="{_f(py0 + 14)}" text-anchor="middle">{10.0**d:g}</text>')
    for d in range(yd[0], yd[1] + 1):
        yv = _f(y(10.0**d))
        out.append(f'<line class="grid" x1="{_f(px0 - STRIP)}" x2="{_f(px1)}" y1="{yv}" y2="{yv}"/>')
        out.append(f'<text class="tick" x="{_f(px0 - STRIP - 6)}" y="{yv}" dy="0.35em" '
                   f'text-anchor="end">{10.0**d:g}</text>')
    out.append(f'<line class="grid" x1="{_f(px0 - 4)}" x2="{_f(px0 - 4)}" y1="{_f(py1)}" y2="{_f(py0)}" '
               'stroke-dasharray="2 3"/>')
    out.append(f'<text class="tick" x="{_f(px0 - STRIP / 2 - 2)}" y="{_f(py0 + 28)}" '
               'text-anchor="middle">no FLOPs</text>')
    out.append(f'<text class="tick" x="{_f((px0 + px1) / 2)}" y="{_f(py0 + 32)}" text-anchor="middle">'
               "arithmetic intensity, FLOP/byte (log)</text>")
    return out


def _roof(r: Roof, x, y, xd: tuple[int, int]) -> tuple[str, float]:
    """The bandwidth slope up to the ridge, then flat at the compute ceiling; and the y where
    it ends, at the plot's right edge."""
    lo, hi = 10.0**xd[0], 10.0**xd[1]
    ridge = r.tflops * 1e3 / r.gbps if r.tflops else hi
    ridge = min(max(ridge, lo), hi)
    pts = [(lo, lo * r.gbps / 1e3), (ridge, ridge * r.gbps / 1e3)]
    if r.tflops:
        pts.append((hi, r.tflops))
    path = " ".join(f"{_f(x(a))},{_f(y(b))}" for a, b in pts)
    dash = ' stroke-dasharray="6 4"' if r.dashed else ""
    return f'<polyline class="wh" fill="none" points="{path}"{dash}/>', y(pts[-1][1])


def spread(ys: list[float], top: float, bottom: float, gap: float) -> list[float]:
    """Label heights as near ``ys`` as they can be with ``gap`` between any two, in the same
    order, within [top, bottom] where they fit: a GPU's ceilings (measured and datasheet, fp8
    and int8) end a few pixels apart, and their names must not print over each other."""
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    out = list(ys)
    for a, b in pairwise(order):  # down from the top ...
        out[b] = max(out[b], out[a] + gap)
    limit = bottom
    for i in reversed(order):  # ... and back up from the bottom
        out[i] = max(min(out[i], limit), top)
        limit = out[i] - gap
    return out


def _roof_label(r: Roof, line: str, end: float, label_y: float, px1: float) -> str:
    """The roof and its name at ``label_y``; a name moved off its line's end is joined to it."""
    lead = (f'<line class="wh" stroke-width="0.6" x1="{_f(px1)}" y1="{_f(end)}" x2="{_f(px1 + 6)}" '
            f'y2="{_f(label_y)}"/>' if abs(label_y - end) > 0.5 else "")
    x = px1 + (9 if lead else 6)
    return (f'<g><title>{_e(r.tip or r.label)}</title>{line}{lead}'
            f'<text class="tick" x="{_f(x)}" y="{_f(label_y)}" dy="0.35em">{_e(r.label)}</text></g>')


def _point(p: Point, height: float | None, x, y, longest: float, px0: float) -> str:
    radius = max(2.5, MAX_R * math.sqrt(max(p.ms, 0.0) / longest))
    if height is None:
        return ""
    if p.intensity is not None:
        cx, extra = x(p.intensity), ""
    else:
        cx, extra = px0 - STRIP / 2 - 2, ' fill-opacity="0.3" stroke-width="1.5"'
    return (f'<circle class="{series_class(p.series)}" cx="{_f(cx)}" cy="{_f(y(height))}" '
            f'r="{radius:.1f}" stroke="#555"{extra}><title>{_e(p.label)}</title></circle>')


def legend(s: Scatter) -> str:
    items = "".join(f'<li><span class="sw {series_class(k)}"></span>{_e(v)}</li>'
                    for k, v in s.legend.items())
    return f'<ul class="legend">{items}</ul>' if items else ""


def scatter_figure(s: Scatter) -> str:
    note = f'<p class="fine">{_e(s.note)}</p>' if s.note else ""
    return f"<figure><figcaption>{_e(s.title)}</figcaption>{legend(s)}{scatter_svg(s)}{note}</figure>"
