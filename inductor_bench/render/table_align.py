"""Which columns of a table read as numbers, so that a table that names no alignment still
right-aligns them (as every table that names one does): a column whose every cell is a number,
with at most a mark before it (``~``, ``^``, ``!``, ``<``, ``±``, a sign) and a unit or ``%`` after, or a
dash; or two such, ``^200%, ~25%``."""

from __future__ import annotations

import re

# 12, 0.0028, 1,024, ~143%, ±0.7%, -1.3 pp, 2.50x, 0.436 ms, 512 MiB, 4,238 GB/s, 30/36
_NUMBER = re.compile(
    r"[~^!<>≈±+\-−]?\d[\d,]*(?:\.\d+)?(?:/\d+)?\s?(?:%|x|pp|ms|µs|us|ns|s|[KMG]i?B|GB/s|TFLOP/s)?"
)
_EMPTY = {"", "-", "—", "–"}


def numeric_align(rows: list[list[str]], n_columns: int) -> tuple[str, ...] | None:
    """``right`` for each column all of whose cells are numbers (one at least), ``left`` for
    the others; None when no column is numeric (tabulate's own default)."""
    align = []
    for i in range(n_columns):
        cells = [r[i].strip() for r in rows if i < len(r) and r[i].strip() not in _EMPTY]
        numbers = [n for c in cells for n in c.split(", ")]  # a cell of two figures: ^200%, ~25%
        align.append("right" if cells and all(_NUMBER.fullmatch(n) for n in numbers) else "left")
    return tuple(align) if "right" in align else None
