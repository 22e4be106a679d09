"""The sweep's HTML page: the report of ``sweep.py`` with the models by the modes drawn as a
heatmap first. A cell's colour is its speedup over the reference on a log scale (green faster,
red slower, full at 2x either way); a speedup compare found within noise is grey whatever its
size, one it could not judge is blank. Each cell holds the speedup and its interval and names
the rest (busy %, top category, compile time) in its tooltip."""

from __future__ import annotations

import html
import math

from ..core.stats import NOT_JUDGED, SIGNIFICANT, TOO_FEW
from ..core.sweep_table import Figures, SweepTable
from ..core.vocab import Status
from .doc import HTML, new_doc
from .format import interval_x, seconds
from .sweep import DISTURBED_MARK, fill, geomean_text, speedup_text, top_text

FASTER_RGB = "45,164,78"
SLOWER_RGB = "215,58,73"
NOISE_RGB = "160,164,170"
FULL_AT = 2.0  # a speedup (or slowdown) this large gets the strongest colour
FASTER, SLOWER, NOISE = "faster", "slower", "noise"  # what a cell's colour says (``colour_kind``)
STYLE = (
    "<style>.heat td.h{text-align:center;min-width:9em;font-variant-numeric:tabular-nums}"
    ".heat td.h small{display:block;opacity:.8}.heat th.m{text-align:left}</style>"
)


def colour_kind(f: Figures) -> str | None:
    """``faster``, ``slower`` or ``noise``: what the cell's colour says; None for no colour (no
    speedup compare judged, or its job did not run to its end: its figures are out of the geomean)."""
    if f.speedup is None or f.verdict in (None, TOO_FEW, NOT_JUDGED) or f.status != Status.OK:
        return None
    if f.verdict != SIGNIFICANT:
        return NOISE
    return FASTER if f.speedup > 1 else SLOWER


def cell_colour(f: Figures) -> str:
    """The cell's background: ``rgba(...)``, or "" for none (``colour_kind``)."""
    kind = colour_kind(f)
    if kind is None:
        return ""
    if kind == NOISE:
        return f"rgba({NOISE_RGB},0.35)"
    strength = min(1.0, abs(math.log(f.speedup)) / math.log(FULL_AT))
    return f"rgba({FASTER_RGB if kind == FASTER else SLOWER_RGB},{0.2 + 0.65 * strength:.2f})"


def colour_legend(figs: list[Figures]) -> str:
    """What the colours of ``figs`` mean: of green, red and grey, those a cell has; where no cell
    is coloured, why none is."""
    kinds = {colour_kind(f) for f in figs}
    judged = [words for kind, words in ((FASTER, "green faster"), (SLOWER, "red slower")) if kind in kinds]
    parts = [", ".join(judged) + f" (full colour at {FULL_AT:g}x)"] if judged else []
    parts += ["grey within noise"] if NOISE in kinds else []
    if not parts:
        return ("no cell is coloured: none holds a speedup compare judged, timed by a job that ran to its "
                "end (each cell says why)")
    return ", ".join(parts)


def cell_tip(f: Figures, ref: str) -> str:
    timed = f.speedup is not None or f.no_speedup
    parts = [f"{f.model}, {f.mode}: {speedup_text(f) if timed else 'no speedup'} over {ref}"]
    if f.speedup_ci is not None or f.no_interval:
        parts[0] += f" {interval_x(f.speedup_ci, f.min_rel) or f'({f.no_interval})'}"
    if f.verdict or f.no_speedup:
        parts[0] += f" ({f.verdict or f.no_speedup})"
    mark = DISTURBED_MARK * bool(f.disturbed)  # as the table marks them
    if f.busy_pct is not None:
        parts.append(f"busy {f.busy_pct:.1f}%{mark}")
    if f.top_category is not None:
        parts.append(f"top category {top_text(f)}{mark}")
    if f.compile_s is not None:
        parts.append(f"compile {seconds(f.compile_s)}")
    if f.graph_breaks:
        parts.append(f"graph breaks {f.graph_breaks}")
    if f.status != "ok":
        parts.append(f"{f.status}: {f.reason}" if f.reason else f.status)
    if f.disturbed:
        parts.append(f"{mark.strip()} profiled disturbed: {'; '.join(f.disturbed)}")
    return "\n".join(parts)


def _cell(f: Figures, ref: str) -> str:
    colour = cell_colour(f)
    style = f' style="background:{colour}"' if colour else ""
    body = html.escape(speedup_text(f) if f.speedup is not None or f.no_speedup else f.status)
    shown = interval_x(f.speedup_ci, f.min_rel) or f.no_interval
    ci = f"<small>{html.escape(shown)}</small>" if shown else ""
    if f.speedup is not None and f.status != Status.OK:  # measured, left out of the geomean
        ci += f"<small>{html.escape(f.status)}: not in the geomean</small>"
    if f.no_speedup:  # most rounds disturbed: no figure, out of the geomean
        ci += f"<small>{html.escape(f.no_speedup)}</small>"
    tip = html.escape(cell_tip(f, ref))
    return f'<td class="h"{style} title="{tip}" data-speedup="{f.speedup or ""}">{body}{ci}</td>'


def _hover_note(figs: list[Figures]) -> str:
    """What hovering a cell shows beside its speedup and status: of busy %, top category and
    compile time, those a cell has (none where every job stopped or failed before them)."""
    shown = [what for what, has in (("busy %", any(f.busy_pct is not None for f in figs)),
                                    ("top category", any(f.top_category is not None for f in figs)),
                                    ("compile time", any(f.compile_s is not None for f in figs))) if has]
    return f"; hover a cell for {', '.join(shown)}" if shown else ""


def heatmap(table: SweepTable) -> str:
    """The models (rows) by the compiled modes (columns) as a coloured table."""
    modes = [m for m in table.modes if m != table.reference]
    head = "".join(f'<th class="m">{html.escape(m)}</th>' for m in modes)
    rows = []
    for model, figs in table.rows.items():
        cells = "".join(_cell(figs[m], table.reference) for m in modes)
        rows.append(f"<tr><th>{html.escape(model)}</th>{cells}</tr>")
    geo = "".join(
        f'<td class="h"><strong>{geomean_text(table, m)}</strong></td>'
        if table.geomeans.get(m, (None, 0))[0] is not None
        else '<td class="h">-</td>'
        for m in modes
    )
    shown = [figs[m] for figs in table.rows.values() for m in modes]
    caption = f"Speedup over {html.escape(table.reference)}: {colour_legend(shown)}{_hover_note(shown)}"
    return (
        f'{STYLE}<figure class="heat"><figcaption>{caption}</figcaption><div class="scroll"><table>'
        f"<thead><tr><th>model</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody>"
        f"<tfoot><tr><td>geomean</td>{geo}</tr></tfoot></table></div></figure>"
    )


def render_sweep_html(table: SweepTable) -> str:
    doc = new_doc(HTML)
    fill(doc, table, heatmap=heatmap(table))
    return doc.render()
