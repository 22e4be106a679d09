"""The HTML document: the same ``Doc`` interface as text and markdown, written as one
self-contained page (``html_page``) with charts as inline SVG (``html_svg``).

Renderers hand a document plain text, composed with its inline helpers (``strong``, ``code``,
``link``, ...) through f-strings and joins. So that markup survives that composition and text
is still escaped, an inline helper returns a placeholder (two private-use characters around a
number) for the markup it made; a block escapes its text, then puts the markup back.
"""

from __future__ import annotations

import html
import re

from ..core.step_totals import ALL_GRAPHS
from .chart_model import Chart
from .doc import FORMATS, HTML, Doc
from .html_page import page, plain_file_path, url_of
from .html_svg import figure
from .roofline_svg import Scatter, scatter_figure
from .table_fit import Droppable

_OPEN, _CLOSE = "\ue000", "\ue001"
_PLACEHOLDER = re.compile(f"{_OPEN}(\\d+){_CLOSE}")
# Trailing rows that sum up the rows above (``total``, ``total (profiled)``, ``steady mean (2 left
# out)``, a breakdown's ``all graphs``) or stand for what the table leaves out (``(in no
# op: Python between ops)``, ``12 other ops``, ``… 3 more groups``) stay at the foot of a table when
# it is sorted. Matched against the row's first cell, or any cell for the ``…`` of a cut table.
FOOT_ROWS = re.compile(
    rf"^(total|steady mean)\b|^({re.escape(ALL_GRAPHS)}|median)$|^\(in no op\b|^\d+ other \w+$")
CUT_ROW = "… "
# A group's further members (by-module and by-line views): "+ name", the other leading cells empty.
MEMBER = "+ "
# Longer cells (fused kernel names, op lists) may wrap; the others keep to one line.
LONG_CELL = 40
# A cell that is a number is right-aligned: a value (``~`` for an estimate), a fraction (``27/34``)
# or a change (``1 -> 14``), a unit, then a spread (``±2.1%``), an interval (``[1.1x-1.2x]``) and a
# word in brackets. A shape list (``512, 64x512``) or a name with a number (``0 (FFTMix)``) is text.
_VALUE = r"[~≈<>]?[+\-±]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[+-]?\d+)?"
_UNIT = r" ?(?:%|x|pp|ms|µs|us|ns|s|[kKMGT]i?B|[kMGT]?FLOP(?:/s)?|GB/s|FLOP/B)"
_ANNOT = r" (?:±\S+|\[[^\]]*\])"
_NUMBER = re.compile(
    rf"^{_VALUE}(?:/\d+| -> {_VALUE})?(?:(?:{_UNIT}|{_ANNOT})(?:{_ANNOT})*(?: \(.*\))?)?$|^-$")
# A word where a number column has no number (``ok``, ``skipped``, ``new``) keeps it right-aligned.
_WORD = re.compile(r"^[a-z][a-z/ -]{0,11}$")
# Where a long identifier may break: after ``_ . / , :`` (``triton_poi_fused_add_0``, ``blocks.0.up``).
_BREAK = re.compile(r"(?<=[_./,:])(?=[^\s_./,:])")
_URL = re.compile(r"https://[\w.-]+(/[\w./%#?=&;-]*)?(?<![.;])")
# A code span in a line of text (a command to run, which a message writes between backticks:
# `inductor-bench report RUN --reanalyze`), as markdown reads it: from a run of backticks to the
# next run as long, on one line.
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")


class HtmlDoc(Doc):
    format = HTML

    def __init__(self) -> None:
        super().__init__()
        self._frags: list[str] = []  # markup, by placeholder number
        self._texts: list[str] = []  # the same as plain text
        self.page_title = ""

    # -- placeholders ------------------------------------------------------------------------
    def _frag(self, markup: str, text: str = "") -> str:
        self._frags.append(markup)
        self._texts.append(text)
        return f"{_OPEN}{len(self._frags) - 1}{_CLOSE}"

    def _html(self, text: str) -> str:
        """Escaped text with the markup of inline helpers put back; code spans (`...`) as code;
        newlines as line breaks; web addresses as links (opened only when clicked)."""
        escaped = _CODE_SPAN.sub(r"<code>\2</code>", html.escape(text, quote=False)).replace("\n", "<br>\n")
        linked = _URL.sub(lambda m: f'<a href="{m[0]}" target="_blank" rel="noopener">{m[0]}</a>', escaped)
        return _PLACEHOLDER.sub(lambda m: self._frags[int(m[1])], linked)

    def _body(self, body: str) -> str:
        """A table or text handed to ``captioned`` / ``details``."""
        if _PLACEHOLDER.fullmatch(body):
            return self._html(body)
        return f"<pre>{self._html(body)}</pre>"

    def _plain(self, text: str) -> str:
        """The text a reader sees, without markup."""
        return _PLACEHOLDER.sub(lambda m: self._texts[int(m[1])], text)

    # -- blocks ------------------------------------------------------------------------------
    def paragraph(self, *lines: str) -> None:
        items = [ln for ln in lines if _PLACEHOLDER.fullmatch(ln) and self._html(ln).startswith("<li>")]
        if lines and len(items) == len(lines):
            self.blocks.append("<ul>" + "".join(self._html(ln) for ln in lines) + "</ul>")
        else:
            self.blocks.append("<p>" + "<br>\n".join(self._html(ln) for ln in lines) + "</p>")

    def table(
        self, rows: list[list[str]], headers: list[str], align: tuple[str, ...] | None = None,
        optional: tuple[Droppable, ...] = (),
    ) -> tuple[str, ...]:
        self.blocks.append(self._table(rows, headers, align))
        return ()

    def table_text(
        self, rows: list[list[str]], headers: list[str], align: tuple[str, ...] | None = None,
        optional: tuple[Droppable, ...] = (),
    ) -> str:
        return self._frag(self._table(rows, headers, align), "(table)")

    def _table(self, rows: list[list[str]], headers: list[str], align: tuple[str, ...] | None) -> str:
        width = max([len(headers)] + [len(r) for r in rows])
        plain = [[self._plain(c) for c in r] for r in rows]
        if align is None:
            align = tuple(_column_align([r[i] for r in plain if i < len(r) and r[i]]) for i in range(width))
        cls = ["" if a != "right" else ' class="r"' for a in align] + [""] * width

        def cells(row: list[str], tag: str) -> str:
            out = []
            for i, c in enumerate(row):
                wraps = tag == "td" and not cls[i] and len(self._plain(c)) > LONG_CELL
                attr = ' class="w"' if wraps else cls[i]
                out.append(f"<{tag}{attr}>{_breakable(self._html(c)) if wraps else self._html(c)}</{tag}>")
            return "".join(out)

        foot = len(rows)
        while foot > 1 and _foot_row(plain[foot - 1]):
            foot -= 1
        groups = _groups(plain[:foot])
        grouped = any(len(g) > 1 for g in groups)
        # rows of quantities under columns of the things compared (a first header left empty):
        # no sorting, its order is the reading order
        kind = ' class="g"' if grouped else ' class="fixed"' if headers and not headers[0] else ""
        out = [f'<div class="scroll"><table{kind}>']
        out.append(f"<thead><tr>{cells(headers, 'th')}</tr></thead>")
        if grouped:  # one body per group: sorting moves a group's rows together
            out += ["<tbody>" + "".join(f"<tr>{cells(rows[i], 'td')}</tr>" for i in g) + "</tbody>"
                    for g in groups]
        else:
            out += ["<tbody>", *(f"<tr>{cells(r, 'td')}</tr>" for r in rows[:foot]), "</tbody>"]
        if foot < len(rows):
            out.append("<tfoot>" + "".join(f"<tr>{cells(r, 'td')}</tr>" for r in rows[foot:]) + "</tfoot>")
        out.append("</table></div>")
        return "\n".join(out)

    def title(self, s: str) -> None:
        self.page_title = self.page_title or self._plain(s)
        self.blocks.append(f"<h1>{self._html(s)}</h1>")

    def headline(self, s: str) -> None:
        self.title(s)

    def heading(self, s: str) -> None:
        self.blocks.append(f"<h2>{self._html(s)}</h2>")

    def captioned(self, caption: str, body: str) -> None:
        self.blocks.append(f'<p class="caption">{self._html(caption)}</p>\n{self._body(body)}')

    def details(self, summary: str, body: str) -> None:
        self.blocks.append(f"<details><summary>{self._html(summary)}</summary>\n{self._body(body)}</details>")

    def lines(self, *lines: str) -> None:
        if lines:  # a report without a title (kernel) is named by its first line
            self.page_title = self.page_title or f"inductor-bench: {self._plain(lines[0])}"
        self.blocks.append('<p class="lines">' + "<br>\n".join(self._html(ln) for ln in lines) + "</p>")

    def sentences(self, *lines: str) -> None:
        self.blocks += [f"<p>{self._html(ln)}.</p>" for ln in lines]

    def fine_print(self, *lines: str) -> None:
        self.blocks.append('<p class="fine">' + "<br>\n".join(self._html(ln) for ln in lines) + "</p>")

    def chart(self, chart: Chart | Scatter | None) -> None:
        if isinstance(chart, Scatter):  # the roofline (render/roofline_svg.py)
            self.blocks.append(scatter_figure(chart))
        elif chart is not None and _draws(chart):
            self.blocks.append(figure(chart))

    def links(self, title: str, links: list[tuple[str, str]], *notes: str) -> None:
        if not links:
            return
        items = "".join(f"<li>{self._html(self.link(text, href))}</li>" for text, href in links)
        self.blocks.append(f"<h2>{self._html(title)}</h2>\n<ul>{items}</ul>")
        if notes:
            self.fine_print(*notes)

    def render(self) -> str:
        return page(self.page_title or "inductor-bench", "\n\n".join(self.blocks))

    # -- inline ------------------------------------------------------------------------------
    def _wrap(self, tag: str, s: str, cls: str = "") -> str:
        attr = f' class="{cls}"' if cls else ""
        return self._frag(f"<{tag}{attr}>{self._html(s)}</{tag}>", self._plain(s))

    def strong(self, s: str) -> str:
        return self._wrap("strong", s)

    def alert(self, s: str) -> str:
        return self._wrap("strong", s, "alert")

    def code(self, s: str) -> str:
        return self._wrap("code", s)

    def named(self, label: str, full: str) -> str:
        if self._plain(label) == full:
            return label
        return self._frag(f'<span title="{html.escape(full)}">{self._html(label)}</span>', self._plain(label))

    def quote(self, s: str) -> str:
        return self._wrap("span", s, "quote")

    def item(self, s: str) -> str:
        return self._wrap("li", s)

    def section(self, s: str) -> str:
        return self._wrap("span", s, "section")

    def byline(self, command: str, rest: str) -> str:
        self.page_title = self.page_title or f"{command}: {self._plain(rest)}"
        return f"{self.code(command)} {rest}"

    def link(self, text: str, href: str) -> str:
        """A link to a file; any other target (a scheme such as ``javascript:``, a path with
        ``..``) is text alone."""
        if not plain_file_path(href):
            return self._frag(self._html(text), self._plain(text))
        return self._frag(f'<a href="{html.escape(url_of(href))}">{self._html(text)}</a>', self._plain(text))


def _draws(chart: Chart) -> bool:
    """Whether a bar chart draws anything: a chart of empty bars (kernel time by category in a
    run of no kernels: each bar 0.000 ms on an axis of nothing) is left out."""
    return any(s.value for b in chart.bars for s in b.segments) or any(b.spread for b in chart.bars)


def _column_align(texts: list[str]) -> str:
    """Right for a column of numbers (a dash or a word such as ``ok`` among them), else left."""
    numbers = [t for t in texts if _NUMBER.match(t)]
    if numbers and all(_NUMBER.match(t) or _WORD.match(t) for t in texts):
        return "right"
    return "left"


def _foot_row(row: list[str]) -> bool:
    return bool(row) and (bool(FOOT_ROWS.match(row[0])) or any(c.startswith(CUT_ROW) for c in row))


def _groups(rows: list[list[str]]) -> list[list[int]]:
    """Row numbers by group: a member row ("+ name" after empty cells) goes with the row above."""
    groups: list[list[int]] = []
    for i, row in enumerate(rows):
        lead = next((c for c in row if c), "")
        if groups and not row[0] and lead.startswith(MEMBER):
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def _breakable(markup: str) -> str:
    """A wrapping cell's text with break opportunities (``<wbr>``) after the separators of long
    identifiers, so it wraps between their parts and not inside one; tags are left alone."""
    return re.sub(r"(<[^>]*>)|([^<]+)", lambda m: m[1] or _BREAK.sub("<wbr>", m[2]), markup)


FORMATS[HTML] = HtmlDoc
