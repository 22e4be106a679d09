"""A ``Chart`` as inline SVG, drawn here in Python: horizontal bars with a labelled value axis,
stacked segments, negative values to the left of zero, whiskers, a note per row and an HTML
legend. No script draws anything: the chart is there without JavaScript, prints, and costs
about 150 bytes a bar. Colours come from CSS classes (``html_page.series_classes``)."""

from __future__ import annotations

import html
import math

from .chart_model import Bar, Chart
from .format import KERNEL_CHARS, kernel_labels, ms, shorten
from .html_page import series_classes
from .kernel_names import widest_label

WIDTH = 760  # px; the SVG scales down on a narrower screen
ROW = 18  # bar height
GAP = 6  # between bars
TOP = 6
AXIS = 38  # tick labels and the axis title under the bars
FONT = 12  # px, the charts' text
MAX_LABEL = 320  # px of row label, longer ones cut in the middle (the tooltip has them whole)
MAX_NOTE = 170
TICKS = 5
# The advance of each printable ASCII character (space to ~) in DejaVu Sans, in hundredths of
# an em: the widest of the usual sans-serif faces (what system-ui is on Linux), so a label sized
# with it fits in any of them. Any other character counts as a whole em.
_ADVANCE = (
    32, 40, 46, 84, 64, 95, 78, 27, 39, 39, 50, 84, 32, 36, 32, 34, 64, 64, 64, 64, 64, 64, 64, 64,
    64, 64, 34, 34, 84, 84, 84, 53, 100, 68, 69, 70, 77, 63, 58, 77, 75, 29, 29, 66, 56, 86, 75, 79,
    60, 79, 69, 63, 61, 73, 68, 99, 69, 61, 69, 39, 34, 39, 84, 50, 50, 61, 63, 55, 63, 62, 35, 63,
    63, 28, 28, 58, 28, 97, 63, 61, 63, 63, 41, 52, 39, 63, 59, 82, 59, 59, 52, 64, 34, 64, 84,
)


def _e(s: str) -> str:
    return html.escape(s, quote=True)


def _num(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def text_width(s: str, px: float = FONT) -> float:
    """The width of ``s`` in px, at ``px`` px, by the widest common face (``_ADVANCE``)."""
    return sum(_ADVANCE[o - 32] if 32 <= (o := ord(c)) < 127 else 100 for c in s) * px / 100


def fit(s: str, px: float) -> str:
    """``s``, cut in the middle (``format.shorten``) until it is at most ``px`` wide."""
    n = len(s)
    while n > 4 and text_width(shorten(s, n)) > px:
        n -= 1
    return shorten(s, n)


def bar_names(bars: list[Bar]) -> list[str]:
    """Each bar's label, cut to ``MAX_LABEL`` px (``fit``; a kernel's as a table's column cuts
    it, ``widest_label``: ``splitKreduce_kernel<32, 16, int, …``). Bars whose labels differ but
    cut to the same text (two CUDA kernels that differ in the middle of an 80-character label,
    ``…MulFunctor<float>…`` and ``…DivFunctor<float>…``) are named again from their whole names
    (``kernel_labels``) at the widest that fits, so no two bars of a chart read alike."""
    names = [widest_label(b.label, _fits) if b.full else fit(b.label, MAX_LABEL) for b in bars]
    by_name: dict[str, list[int]] = {}
    for i, n in enumerate(names):
        by_name.setdefault(n, []).append(i)
    for rows in by_name.values():
        whole = [bars[i].full or bars[i].label for i in rows]
        if len(set(whole)) < 2:
            continue
        for i, n in zip(rows, _widest_labels(whole), strict=True):
            names[i] = n
    return names


def _fits(label: str) -> bool:
    return text_width(label) <= MAX_LABEL


def _widest_labels(names: list[str]) -> list[str]:
    """``kernel_labels`` of ``names`` at the most characters (a binary search up to a table's
    ``KERNEL_CHARS``) whose every label fits ``MAX_LABEL`` px."""
    lo, hi = 8, min(max(len(n) for n in names), KERNEL_CHARS)
    fits = kernel_labels(names, lo)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        labels = kernel_labels(names, mid)
        if all(text_width(x) <= MAX_LABEL for x in labels):
            lo, fits = mid, labels
        else:
            hi = mid - 1
    return fits


def value_text(v: float, unit: str) -> str:
    """A value as the tables print it, by the chart's unit: ms as in the breakdown tables
    (``format.ms``), seconds with two decimals, anything else to 4 significant figures; never
    in scientific notation."""
    first = unit.split()[0] if unit else ""
    sign = "-" if v < 0 else ""
    if first == "ms":
        return sign + ms(abs(v))
    if first in ("s", "seconds"):
        return f"{v:.2f}"
    digits = 3 - math.floor(math.log10(abs(v))) if v else 0
    return f"{v:,.{max(digits, 0)}f}"


def _value(c: Chart, v: float) -> str:
    """A value of ``c`` as its table prints it (``Chart.value_format``), else by its unit."""
    return c.value_format(v) if c.value_format else value_text(v, c.unit)


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


def _domain(c: Chart, width: float) -> tuple[float, float, float]:
    """The axis's ends and tick spacing: about ``TICKS`` ticks, fewer where their labels would
    not fit ``width`` px a few px apart (a diff's small changes between long kernel names and
    notes: '-0.00075' every 43 px)."""
    lo, hi = _extent(c.bars)
    if c.max_value is not None:
        hi = max(hi, c.max_value)
    if hi - lo <= 0:
        hi = lo + 1.0
    for n in range(TICKS, 1, -1):
        step = nice_step(hi - lo, n)
        a, b = math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step
        ticks = round((b - a) / step)
        widest = max(text_width(_tick_label(a + i * step, step)) for i in range(ticks + 1))
        if width / ticks >= widest + 6:
            break
    return a, b, step


def _classes(c: Chart) -> dict[str, str]:
    """Each series of the chart -> the class that colours it, the legend's and the bars' alike."""
    return series_classes([*dict(c.legend), *(s.series for b in c.bars for s in b.segments)])


def legend(c: Chart) -> str:
    entries = dict(c.legend)
    if not entries:
        for b in c.bars:
            for s in b.segments:
                entries.setdefault(s.series, s.label or s.series)
    cls = _classes(c)
    items = [f'<li><span class="sw {cls[k]}"></span>{_e(v)}</li>' for k, v in entries.items()]
    if c.whisker:
        items.append(f'<li><span class="sw whisker"></span>{_e(c.whisker)}</li>')
    if len(items) < 2 and not c.whisker:
        return ""
    return f'<ul class="legend">{"".join(items)}</ul>'


def svg(c: Chart) -> str:
    names = bar_names(c.bars)
    label_w = max((text_width(n) for n in names), default=0.0) + 12  # 6 px either side
    note_w = min(MAX_NOTE, max((text_width(b.note) for b in c.bars), default=0.0) + 8)
    x0, x1 = label_w, WIDTH - note_w - 8
    lo, hi, step = _domain(c, x1 - x0)

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
    colours = _classes(c)
    for i, b in enumerate(c.bars):
        out.append(_row(b, names[i], c, TOP + i * (ROW + GAP), x, x0, x1, colours))
    out.append("</svg>")
    return "".join(out)


def _text(x: str | float, y: str | float, content: str, cls: str = "", anchor: str = "") -> str:
    """A text element; ``y`` is the middle of the line."""
    attrs = (f' class="{cls}"' if cls else "") + (f' text-anchor="{anchor}"' if anchor else "")
    return f'<text x="{x}" y="{y}" dy="0.35em"{attrs}>{content}</text>'


def _row(b: Bar, name: str, c: Chart, y: float, x, x0: float, x1: float, colours: dict[str, str]) -> str:
    mid = _num(y + ROW / 2)
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
        value = s.text or f"{_value(c, s.value)} {c.unit}"
        what = f"{b.full or b.label}\n{s.label or s.series}: {value}" + (f"\n{b.tip}" if b.tip else "")
        parts.append(
            f'<rect class="b {colours[s.series]}" x="{_num(left)}" y="{_num(y)}" '
            f'width="{_num(max(right - left, 0.0))}" height="{ROW}"><title>{_e(what)}</title></rect>'
        )
    if b.spread:
        lo, hi = (_num(x(v)) for v in b.spread)
        top, bot = _num(y + 3), _num(y + ROW - 3)
        parts.append(
            f'<path class="wh" d="M{lo} {mid}H{hi}M{lo} {top}V{bot}M{hi} {top}V{bot}" fill="none">'
            f"<title>{_e(c.whisker or 'spread')}: {_value(c, b.spread[0])} to "
            f"{_value(c, b.spread[1])} {_e(c.unit)}</title></path>"
        )
    if b.note:
        parts.append(_text(_num(x1 + 8), mid, _e(b.note)))
    parts.append("</g>")
    return "".join(parts)


def figure(c: Chart) -> str:
    """The chart with its title, legend and note."""
    note = f'<p class="fine">{_e(c.note)}</p>' if c.note else ""
    return f"<figure><figcaption>{_e(c.title)}</figcaption>{legend(c)}{svg(c)}{note}</figure>"
