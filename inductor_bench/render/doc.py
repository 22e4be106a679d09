"""One document interface for every report, with a text (terminal), a markdown (pull
request) and an HTML (``render/html.py``: a page to open) implementation. A renderer says
*what* a report holds (a title, a table, a chart, fine print); the document decides how that
looks. A new format is one more ``Doc`` subclass.

A document is a list of blocks separated by blank lines, ending in one newline. Inline
helpers (``strong``, ``code``, ``quote``, ``link``, ...) return strings to compose lines with.

Charts (``Chart``: horizontal bars, stacked, diverging or with a whisker) and lists of files
(``links``) are drawn by the HTML document only: text and markdown leave them out, since their
tables already hold the same numbers and their footers name the same files.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from tabulate import tabulate

from .chart_model import Chart
from .distinct_labels import kernel_labels
from .format import truncate
from .kernel_names import KERNEL_CHARS, kernel_label
from .md_escape import STRONG_MARKS, hard_breaks, md_cell, md_code, md_inert, md_lines, one_line
from .table_align import numeric_align
from .table_fit import Droppable, fitted
from .table_fit import middle as middle
from .text_wrap import WRAP, wrapped

TEXT = "text"
MARKDOWN = "markdown"
HTML = "html"


class Doc:
    """The interface, and the parts that read the same in every format."""

    format = ""
    table_style = ""

    def __init__(self) -> None:
        self.blocks: list[str] = []

    # -- blocks --------------------------------------------------------------------------
    def paragraph(self, *lines: str) -> None:
        """Lines kept together in one block (a terminal shows each on its own line)."""
        self.blocks.append("\n".join(lines))

    def table(
        self, rows: list[list[str]], headers: list[str], align: tuple[str, ...] | None = None,
        optional: tuple[Droppable, ...] = (),
    ) -> tuple[str, ...]:
        """``optional``: the headers of columns a terminal too narrow for the table may leave out,
        in that order (``table_fit``); every other format keeps them. Returns the headers left
        out, so that the notes under the table explain only the columns shown."""
        self.blocks.append(self.table_text(rows, headers, align, optional))
        return ()

    def table_text(
        self, rows: list[list[str]], headers: list[str], align: tuple[str, ...] | None = None,
        optional: tuple[Droppable, ...] = (),
    ) -> str:
        # Cells are preformatted strings: keep tabulate from re-parsing "1.000" into 1.
        align = align or numeric_align(rows, len(headers))
        return tabulate(
            rows, headers=headers, tablefmt=self.table_style, disable_numparse=True, colalign=align
        )

    def title(self, s: str) -> None:
        raise NotImplementedError

    def heading(self, s: str) -> None:
        raise NotImplementedError

    def headline(self, s: str) -> None:
        """The title of a report that opens with its verdict (compare, diff): a page's heading;
        text and markdown leave it out, their first line is the verdict and their byline names
        what they are."""

    def captioned(self, caption: str, body: str) -> None:
        """A caption directly above a table or text it names."""
        raise NotImplementedError

    def details(self, summary: str, body: str) -> None:
        """Supporting detail under a one-line summary (folded where the format can fold)."""
        raise NotImplementedError

    def lines(self, *lines: str) -> None:
        """Lines that must stay on lines of their own, in every format."""
        self.paragraph(*lines)

    def sentences(self, *lines: str) -> None:
        """Short statements, one per line or paragraph."""
        raise NotImplementedError

    def fine_print(self, *lines: str) -> None:
        """Notes on how to read the numbers above."""
        raise NotImplementedError

    def chart(self, chart: Chart | None) -> None:
        """A chart of numbers a table beside it holds; text and markdown leave it out."""

    def links(self, title: str, links: list[tuple[str, str]], *notes: str) -> None:
        """Files to open, as (text, path relative to the run directory), with how to open them;
        text and markdown leave it out (their footers name the files)."""

    def render(self) -> str:
        return "\n\n".join(self.blocks) + "\n"

    # -- inline --------------------------------------------------------------------------
    def strong(self, s: str) -> str:
        raise NotImplementedError

    def alert(self, s: str) -> str:
        """A status the reader must not miss."""
        raise NotImplementedError

    def code(self, s: str) -> str:
        raise NotImplementedError

    def named(self, label: str, full: str) -> str:
        """``label`` (a shortened name, ``format.kernel_label``) where the whole name ``full``
        can be had on hover (HTML); the label alone elsewhere (JSON keeps the whole name)."""
        return label

    def quote(self, s: str) -> str:
        raise NotImplementedError

    def item(self, s: str) -> str:
        """One entry of a list of facts."""
        raise NotImplementedError

    def section(self, s: str) -> str:
        """The label of one section of several alike (a compile mode of a diff)."""
        raise NotImplementedError

    def byline(self, command: str, rest: str) -> str:
        """``inductor-bench diff: <what>`` naming the command that made the report."""
        raise NotImplementedError

    def link(self, text: str, href: str) -> str:
        """``text`` linking to a file (a path relative to the run directory, or as given on the
        command line); text and markdown show the text alone."""
        return text

    # -- kernel names --------------------------------------------------------------------
    def whole_names(self) -> bool:
        """Whether plain kernel names (``plain_name``) are shown whole: in markdown (a pull
        request wraps its tables) and in text for a file or a pipe (no width: a name copied from
        the profiler is found by grep); a terminal's text and HTML (the whole name on hover)
        shorten them."""
        return False

    def kernel_labels(self, names: list[str], width: int = KERNEL_CHARS) -> list[str]:
        """The labels of a column of kernels, each cut to ``width`` and told apart
        (``distinct_labels.kernel_labels``); where ``whole_names``, a plain name whole."""
        labels = kernel_labels(names, width)
        return [n if self.whole_names() and plain_name(n) else x for n, x in zip(names, labels, strict=True)]

    def kernel_label(self, name: str, width: int = KERNEL_CHARS) -> str:
        """One kernel's name alone, as ``kernel_labels`` shows it."""
        return name if self.whole_names() and plain_name(name) else kernel_label(name, width)

    def op_label(self, name: str, width: int) -> str:
        """An op's or a range's name (what launched a kernel: ``fbgemm::…_function``, ``no op, in
        forward``) as ``kernel_label`` shows a kernel's, whole where ``whole_names`` but for a
        C++ name (``CppNode<…>``, past 100 characters), which is compacted."""
        return name if self.whole_names() and not cpp_name(name) else kernel_label(name, width)

    def whole_cell(self, text: str, width: int) -> str:
        """A long cell of names that are no kernel's (a kernel's origin ATen ops, a
        record_function range's name), whole where ``whole_names`` (found by grep as the trace
        names them), else cut at its end to ``width``."""
        return text if self.whole_names() else truncate(text, width)


class TextDoc(Doc):
    format = TEXT
    table_style = "simple"
    # The widest a table may be (the terminal's width), which it is fitted to (``table_fit``:
    # long text cells cut in the middle, optional columns left out). None: no limit. Markdown and
    # HTML keep full cells (plain kernel names come whole in a file, a pipe and markdown: ``whole_names``).
    width: int | None = None

    def whole_names(self) -> bool:
        return self.width is None

    def table_text(
        self, rows: list[list[str]], headers: list[str], align: tuple[str, ...] | None = None,
        optional: tuple[Droppable, ...] = (),
    ) -> str:
        return self._fitted(rows, headers, align, optional)[0]

    def table(
        self, rows: list[list[str]], headers: list[str], align: tuple[str, ...] | None = None,
        optional: tuple[Droppable, ...] = (),
    ) -> tuple[str, ...]:
        text, left_out = self._fitted(rows, headers, align, optional)
        self.blocks.append(text)
        return left_out

    def _fitted(self, rows: list[list[str]], headers: list[str], align: tuple[str, ...] | None,
                optional: tuple[Droppable, ...]) -> tuple[str, tuple[str, ...]]:
        rows, headers = [[one_line(c) for c in r] for r in rows], [one_line(h) for h in headers]
        return fitted(rows, headers, align or numeric_align(rows, len(headers)), self.width, optional,
                      lambda r, h, a: Doc.table_text(self, r, h, a))

    def paragraph(self, *lines: str) -> None:
        """Lines kept together; for a terminal (``width`` set) each wrapped to it, at most
        ``WRAP`` columns (a word, a path or a kernel's name is never cut). A file or a pipe gets
        a line per paragraph, whole, for grep and diff."""
        if self.width is None:
            super().paragraph(*lines)
            return
        wrap = min(self.width, WRAP)
        self.blocks.append("\n".join(wrapped(part, wrap) for line in lines for part in line.split("\n")))

    def lines(self, *lines: str) -> None:
        """Lines that stay as they are, on a terminal too (a command to copy, a header)."""
        Doc.paragraph(self, *lines)

    def title(self, s: str) -> None:
        self.blocks.append(self._underlined(s, "="))

    def heading(self, s: str) -> None:
        self.blocks.append(self._underlined(s, "-"))

    def _underlined(self, s: str, rule: str) -> str:
        """``s`` over a rule as long as it; on a terminal narrower than it, broken at spaces (a
        file name stays whole, and may run past the terminal) over its longest line's rule."""
        s = one_line(s) if self.width is None else wrapped(one_line(s), self.width)
        return f"{s}\n{rule * max(len(ln) for ln in s.splitlines())}"

    def captioned(self, caption: str, body: str) -> None:
        self.blocks.append(f"{caption}\n{body}")

    def details(self, summary: str, body: str) -> None:
        self.captioned(summary, body)

    def sentences(self, *lines: str) -> None:
        self.paragraph(*lines)

    def fine_print(self, *lines: str) -> None:
        self.paragraph(*lines)

    def strong(self, s: str) -> str:
        return s

    def alert(self, s: str) -> str:
        return s.upper()

    def code(self, s: str) -> str:
        return s

    def quote(self, s: str) -> str:
        return s

    def item(self, s: str) -> str:
        return s

    def section(self, s: str) -> str:
        return f"== {one_line(s)} =="

    def byline(self, command: str, rest: str) -> str:
        return f"{command}: {rest}"


class MarkdownDoc(Doc):
    format = MARKDOWN
    # "pipe" writes each column's alignment into the delimiter row (``|----:|``), so that a
    # renderer (GitHub's included) right-aligns the columns of numbers as the text table does;
    # "github" leaves it out and every column reads left-aligned.
    table_style = "pipe"

    def whole_names(self) -> bool:
        return True

    def table_text(
        self, rows: list[list[str]], headers: list[str], align: tuple[str, ...] | None = None,
        optional: tuple[Droppable, ...] = (),
    ) -> str:
        align = align or numeric_align(rows, len(headers))  # as written: ~33% a number, \~33% not
        return super().table_text([[md_cell(c) for c in r] for r in rows], list(map(md_cell, headers)), align)

    def paragraph(self, *lines: str) -> None:
        """Each line on its own (CommonMark would join a paragraph's or a quote's lines)."""
        self.blocks.append(hard_breaks("\n".join(md_lines(ln) for ln in lines)))

    def title(self, s: str) -> None:
        self.blocks.append(f"## {md_inert(s)}")

    def heading(self, s: str) -> None:
        self.blocks.append(f"### {md_inert(s)}")

    def captioned(self, caption: str, body: str) -> None:
        self.blocks += [md_inert(caption), body]

    def details(self, summary: str, body: str) -> None:
        self.blocks += [f"<details><summary>{md_inert(summary)}</summary>", body, "</details>"]

    def sentences(self, *lines: str) -> None:
        self.blocks += [md_inert(ln) + "." for ln in lines]

    def fine_print(self, *lines: str) -> None:
        brk = "<br>" if len(lines) > 1 else ""
        self.blocks.append("\n".join(f"<sub>{md_inert(ln)}</sub>{brk}" for ln in lines))

    def strong(self, s: str) -> str:
        """Bold, marked by two private-use characters that escaping leaves alone and ``render``
        writes as ``**``: the text inside is escaped as any other (``md_inert``)."""
        return f"{STRONG_MARKS[0]}{s}{STRONG_MARKS[1]}"

    def alert(self, s: str) -> str:
        return self.strong(s)

    def render(self) -> str:
        return super().render().replace(STRONG_MARKS[0], "**").replace(STRONG_MARKS[1], "**")

    def code(self, s: str) -> str:
        return md_code(s)

    def quote(self, s: str) -> str:
        return f"> {s}"

    def item(self, s: str) -> str:
        return f"- {s}"

    def section(self, s: str) -> str:
        return f"#### {md_inert(s)}"

    def byline(self, command: str, rest: str) -> str:
        return f"{self.code(command)} {rest}"


# ``render/html.py`` adds ``HTML: HtmlDoc`` when the ``render`` package is imported (the HTML
# document builds on this module, so this module cannot import it).
FORMATS: dict[str, type[Doc]] = {TEXT: TextDoc, MARKDOWN: MarkdownDoc}


# The terminal's width while a command renders its report for it (``for_terminal``); None:
# a file or a pipe.
_TERMINAL: ContextVar[int | None] = ContextVar("terminal_width", default=None)


@contextmanager
def for_terminal(width: int | None) -> Iterator[None]:
    """Text documents made inside fit a terminal ``width`` wide (None: no terminal)."""
    token = _TERMINAL.set(width)
    try:
        yield
    finally:
        _TERMINAL.reset(token)


def plain_name(name: str) -> bool:
    """Whether a kernel's name is one word (Inductor's ``cpp_fused_…_6``, cuBLAS's
    ``sm90_xmma_gemm_…_cublas``), which a cut through its middle leaves nowhere to be found; a
    demangled C++ name (``void at::native::…<…>(…)``, up to 800 characters) is compacted
    everywhere but JSON, keeping its function's name and first template arguments whole."""
    return " " not in name and not cpp_name(name)


def cpp_name(name: str) -> bool:
    """Whether a name holds C++ template arguments or parameters (``CppNode<…>``, ``void f<…>(…)``)."""
    return any(c in name for c in "<(")


def new_doc(fmt: str = TEXT, width: int | None = None) -> Doc:
    """An empty document of the format named ``fmt`` (``text``, ``markdown`` or ``html``);
    ``width``: the terminal's (by default ``for_terminal``'s), which a text document's tables
    fit and its prose wraps to (other formats keep full names and lines)."""
    doc = FORMATS[fmt]()
    if isinstance(doc, TextDoc):
        doc.width = width if width is not None else _TERMINAL.get()
    return doc
