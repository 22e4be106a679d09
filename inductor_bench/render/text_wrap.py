"""A text report's prose on a terminal: each line broken at spaces to the terminal's width, at
most ``WRAP`` columns, a word, a path or a kernel's name never cut."""

from __future__ import annotations

import re
import textwrap

WRAP = 100  # the widest a text report's prose runs on a terminal (tables fit the terminal)
_BULLET = re.compile(r"\s*(?:[-*] |\d+[.)] )?")


def wrapped(line: str, width: int = WRAP) -> str:
    """``line`` broken at spaces to lines of at most ``width`` characters where its words allow;
    the lines after the first indented under its text (past any indent and ``- `` bullet)."""
    if len(line) <= width:
        return line
    indent = " " * len(_BULLET.match(line).group(0))
    return textwrap.fill(line, width, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False, drop_whitespace=True, replace_whitespace=False)
