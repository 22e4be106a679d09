"""One document interface for every report, with a text (terminal) and a markdown (pull
request) implementation. A renderer says *what* a report holds (a title, a table, fine
print); the document decides how that looks. A new format is one more ``Doc`` subclass.

A document is a list of blocks separated by blank lines, ending in one newline. Inline
helpers (``strong``, ``code``, ``quote``, ...) return strings to compose lines with.
"""

from __future__ import annotations

from tabulate import tabulate

TEXT = "text"
MARKDOWN = "markdown"


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

    def table(self, rows: list[list[str]], headers: list[str], align: tuple[str, ...] | None = None) -> None:
        self.blocks.append(self.table_text(rows, headers, align))

    def table_text(
        self, rows: list[list[str]], headers: list[str], align: tuple[str, ...] | None = None
    ) -> str:
        # Cells are preformatted strings: keep tabulate from re-parsing "1.000" into 1.
        return tabulate(
            rows, headers=headers, tablefmt=self.table_style, disable_numparse=True, colalign=align
        )

    def title(self, s: str) -> None:
        raise NotImplementedError

    def heading(self, s: str) -> None:
        raise NotImplementedError

    def captioned(self, caption: str, body: str) -> None:
        """A caption directly above a table or text it names."""
        raise NotImplementedError

    def details(self, summary: str, body: str) -> None:
        """Supporting detail under a one-line summary (folded where the format can fold)."""
        raise NotImplementedError

    def lines(self, *lines: str) -> None:
        """Lines that must stay on lines of their own, in every format."""
        raise NotImplementedError

    def sentences(self, *lines: str) -> None:
        """Short statements, one per line or paragraph."""
        raise NotImplementedError

    def fine_print(self, *lines: str) -> None:
        """Notes on how to read the numbers above."""
        raise NotImplementedError

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


class TextDoc(Doc):
    format = TEXT
    table_style = "simple"

    def title(self, s: str) -> None:
        self.blocks.append(f"{s}\n{'=' * len(s)}")

    def heading(self, s: str) -> None:
        self.blocks.append(f"{s}\n{'-' * len(s)}")

    def captioned(self, caption: str, body: str) -> None:
        self.blocks.append(f"{caption}\n{body}")

    def details(self, summary: str, body: str) -> None:
        self.captioned(summary, body)

    def lines(self, *lines: str) -> None:
        self.paragraph(*lines)

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
        return f"== {s} =="

    def byline(self, command: str, rest: str) -> str:
        return f"{command}: {rest}"


class MarkdownDoc(Doc):
    format = MARKDOWN
    table_style = "github"

    def title(self, s: str) -> None:
        self.blocks.append(f"## {s}")

    def heading(self, s: str) -> None:
        self.blocks.append(f"### {s}")

    def captioned(self, caption: str, body: str) -> None:
        self.blocks += [caption, body]

    def details(self, summary: str, body: str) -> None:
        self.blocks += [f"<details><summary>{summary}</summary>", body, "</details>"]

    def lines(self, *lines: str) -> None:
        self.paragraph(*(ln + "  " for ln in lines))  # two trailing spaces: a line break

    def sentences(self, *lines: str) -> None:
        self.blocks += [ln + "." for ln in lines]

    def fine_print(self, *lines: str) -> None:
        brk = "<br>" if len(lines) > 1 else ""
        self.paragraph(*(f"<sub>{ln}</sub>{brk}" for ln in lines))

    def strong(self, s: str) -> str:
        return f"**{s}**"

    def alert(self, s: str) -> str:
        return self.strong(s)

    def code(self, s: str) -> str:
        return f"`{s}`"

    def quote(self, s: str) -> str:
        return f"> {s}"

    def item(self, s: str) -> str:
        return f"- {s}"

    def section(self, s: str) -> str:
        return f"#### {s}"

    def byline(self, command: str, rest: str) -> str:
        return f"{self.code(command)} {rest}"


FORMATS: dict[str, type[Doc]] = {TEXT: TextDoc, MARKDOWN: MarkdownDoc}


def new_doc(fmt: str = TEXT) -> Doc:
    """An empty document of the format named ``fmt`` (``text`` or ``markdown``)."""
    return FORMATS[fmt]()
