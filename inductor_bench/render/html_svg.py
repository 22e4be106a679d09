"""A ``Chart`` as inline SVG, drawn here in Python: horizontal bars with a labelled value axis,
stacked segments, negative values to the left of zero, whiskers, a note per row and an HTML
legend. No script draws anything: the chart is there without JavaScript, prints, and costs
about 150 bytes a bar. Colours come from CSS classes (``html_page.series_class``)."""

from __future__ import annotations

import html
import math

from .doc import Bar, Chart
from .format import shorten
from .html_page import series_class

WIDTH = 760  # px; the SVG scales down on a narrower screen
ROW = 18  # bar height
GAP = 6  # between bars
TOP = 6
AXIS = 38  # tick labels and the axis title under the bars
CHAR = 7.0  # px per character of 12 px sans-serif text, a safe average
MAX_LABEL = 300  # px of row label, longer ones cut in the middle (the tooltip has them whole)
MAX_NOTE = 170
TICKS = 5


def _e(s: str) -> str:
    return html.escape(s, quote=True)


def _num(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def nice_step(span: float, n: int = TICKS) -> float:
    """A round tick spacing (1, 2, 2.5 or 5 times a power of ten) giving about ``n`` ticks."""
    raw = span / n
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw * (1 - 1e-9):
            return m * mag
    return 10 * mag


def _tick_label(v: float, step: float) -> str:
    """As many decimals as the tick spacing needs (0.25 -> 2, 5 -> 0)."""
    d = 0
    while d < 6 and abs(step * 10**d - round(step * 10**d)) > 1e-6 * step * 10**d:
        d += 1
    return f"{v:,.{d}f}"


def _extent(bars: list[Bar]) -> tuple[float, float]:
    lo = hi = 0.0
    for b in bars:
        pos = sum(s.value for s in b.segments if s.value > 0)
        neg = sum(s.value for s in b.segments if s.value < 0)
        lo, hi = min(lo, neg), max(hi, pos)
        if b.spread:
            lo, hi = min(lo, b.spread[0]), max(hi, b.spread[1])
    return lo, hi


def _domain(c: Chart) -> tuple[float, float, float]:
    lo, hi = _extent(c.bars)
    if c.max_value is not None:
        hi = max(hi, c.max_value)
    if hi - lo <= 0:
        hi = lo + 1.0
    step = nice_step(hi - lo)
    return math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step, step


def legend(c: Chart) -> str:
    entries = dict(c.legend)
    if not entries:
        for b in c.bars:
            for s in b.segments:
                entries.setdefault(s.series, s.label or s.series)
    items = [f'<li><span class="sw {series_class(k)}"></span>{_e(v)}</li>' for k, v in entries.items()]
    if c.whisker:
        items.append(f'<li><span class="sw whisker"></span>{_e(c.whisker)}</li>')
    if len(items) < 2 and not c.whisker:
        return ""
    return f'<ul class="legend">{"".join(items)}</ul>'


def svg(c: Chart) -> str:
    chars = min(int(MAX_LABEL / CHAR), max((len(b.label) for b in c.bars), default=4))
    label_w = chars * CHAR + 10
    note_w = min(MAX_NOTE, max((len(b.note) for b in c.bars), default=0) * CHAR + 8)
    x0, x1 = label_w, WIDTH - note_w - 8
    lo, hi, step = _domain(c)

    def x(v: float) -> float:
        return x0 + (v - lo) / (hi - lo) * (x1 - x0)

    height = TOP + len(c.bars) * (ROW + GAP) + AXIS
    bottom = TOP + len(c.bars) * (ROW + GAP)
    out = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" '
        f'width="{WIDTH}" height="{height}" role="img" aria-label="{_e(c.title)}">'
    ]
    n = round((hi - lo) / step)
    for i in range(n + 1):
        v = lo + i * step
        xv = _num(x(v))
        cls = "zero" if abs(v) < step * 1e-6 and lo < 0 else "grid"
        out.append(f'<line class="{cls}" x1="{xv}" x2="{xv}" y1="{TOP - 2}" y2="{bottom}"/>')
        out.append(_text(xv, bottom + 13, _tick_label(v, step), "tick", "middle"))
    out.append(_text(_num((x0 + x1) / 2), bottom + 31, _e(c.unit), "tick", "middle"))
    for i, b in enumerate(c.bars):
        out.append(_row(b, c, TOP + i * (ROW + GAP), x, x0, x1, chars))
    out.append("</svg>")
    return "".join(out)


def _text(x: str | float, y: str | float, content: str, cls: str = "", anchor: str = "") -> str:
    """A text element; ``y`` is the middle of the line."""
    attrs = (f' class="{cls}"' if cls else "") + (f' text-anchor="{anchor}"' if anchor else "")
    return f'<text x="{x}" y="{y}" dy="0.35em"{attrs}>{content}</text>'


def _row(b: Bar, c: Chart, y: float, x, x0: float, x1: float, chars: int) -> str:
    mid = _num(y + ROW / 2)
    name = shorten(b.label, chars)
    tip = (b.full or b.label) + (f"\n{b.tip}" if b.tip else "")
    parts = ['<g class="faint">' if b.faint else "<g>"]
    parts.append(_text(_num(x0 - 6), mid, f"<title>{_e(tip)}</title>{_e(name)}", "", "end"))
    pos = neg = 0.0
    for s in b.segments:
        if s.value >= 0:
            a, pos = pos, pos + s.value
            left, right = x(a), x(pos)
        else:
            a, neg = neg, neg + s.value
            left, right = x(neg), x(a)
        what = f"{b.label}\n{s.label or s.series}: {s.value:,.4g} {c.unit}" + (f"\n{b.tip}" if b.tip else "")
        parts.append(
            f'<rect class="b {series_class(s.series)}" x="{_num(left)}" y="{_num(y)}" '
            f'width="{_num(max(right - left, 0.0))}" height="{ROW}"><title>{_e(what)}</title></rect>'
        )
    if b.spread:
        lo, hi = (_num(x(v)) for v in b.spread)
        top, bot = _num(y + 3), _num(y + ROW - 3)
        parts.append(
            f'<path class="wh" d="M{lo} {mid}H{hi}M{lo} {top}V{bot}M{hi} {top}V{bot}" fill="none">'
            f"<title>{_e(c.whisker or 'spread')}: {b.spread[0]:,.4g} to {b.spread[1]:,.4g} "
            f"{_e(c.unit)}</title></path>"
        )
    if b.note:
        parts.append(_text(_num(x1 + 8), mid, _e(b.note)))
    parts.append("</g>")
    return "".join(parts)


def figure(c: Chart) -> str:
    """The chart with its title, legend and note."""
    note = f'<p class="fine">{_e(c.note)}</p>' if c.note else ""
    return f"<figure><figcaption>{_e(c.title)}</figcaption>{legend(c)}{svg(c)}{note}</figure>"
