"""Table and heading helpers shared by every renderer (text and markdown)."""

from __future__ import annotations

from tabulate import tabulate


def table(
    rows: list[list], headers: list[str], *, markdown: bool = False, align: tuple[str, ...] | None = None
) -> str:
    # Cells are preformatted strings: keep tabulate from re-parsing "1.000" into 1.
    return tabulate(
        rows,
        headers=headers,
        tablefmt="github" if markdown else "simple",
        disable_numparse=True,
        colalign=align,
    )


def heading(s: str, *, markdown: bool = False) -> str:
    return f"### {s}" if markdown else f"{s}\n{'-' * len(s)}"
