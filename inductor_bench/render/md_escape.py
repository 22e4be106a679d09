"""Escaping for the text and markdown documents (``render/doc.py``): names come from the
user's model and from traces (module, model and kernel names), and may hold anything.

One policy per format: text keeps every line a line (a
newline in a name is a space, another control character U+FFFD), markdown also keeps
tables whole (``|`` escaped), code spans closed (fenced with more backticks than the name
holds), and HTML tags, entities, emphasis and strikethrough inert outside code spans, where
GitHub would render them (``<`` as ``&lt;``; ``\\``, ``*``, ``~``, a run of ``_`` at a word's
edge and the ``]`` of ``](`` backslash-escaped); HTML escapes everything (``render/html.py``).
"""

from __future__ import annotations

import re

_NEWLINES = re.compile(r"[\r\n\u2028\u2029]+")
# the other control characters (a terminal's escape sequences, a tab, freed bytes a tracer wrote)
_CONTROLS = re.compile(r"[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)


def one_line(s: str) -> str:
    """``s`` with its line breaks as spaces (a name cannot start a line of its own) and its
    other control characters as U+FFFD (nor move the cursor, clear the screen or shift a
    column)."""
    return _CONTROLS.sub("\ufffd", _NEWLINES.sub(" ", s))


def md_inert(s: str) -> str:
    """Markdown text on one line, read as written: HTML tags, entities, emphasis and
    strikethrough inert (a frame's ``__getattr__``, a kernel's ``_scaled_dot...``, a model's
    ``a*b``); code spans kept as they are."""
    out, at = [], 0
    for m in _CODE_SPAN.finditer(s):
        out += [_md_text(one_line(s[at : m.start()])), one_line(m[0])]
        at = m.end()
    out.append(_md_text(one_line(s[at:])))
    return "".join(out)


# What markdown would read as markup in plain text: a backslash, emphasis (``*``; a run of
# ``_`` but inside a word, where CommonMark takes it as letters: ``fused__relu``),
# strikethrough, a link (only ``](`` makes one of brackets: a C++ frame's
# ``c10::str[abi:cxx11](int)`` would link "abi:cxx11" to ``int``), an entity.
_MD_SPECIAL = re.compile(r"[\\*~]|_+|\](?=\()")
_ENTITY = re.compile(r"&(?=#?[0-9A-Za-z]+;)")
STRONG_MARKS = ("\ue010", "\ue011")  # MarkdownDoc.strong's marks, ``**`` once rendered


def _md_text(s: str) -> str:
    def escaped(m: re.Match[str]) -> str:
        before, after = s[m.start() - 1 : m.start()], s[m.end() : m.end() + 1]
        if m[0][0] == "_" and before.isalnum() and after.isalnum():
            return m[0]
        return "".join("\\" + c for c in m[0])
    return _ENTITY.sub("&amp;", _MD_SPECIAL.sub(escaped, s)).replace("<", "&lt;")


_BLOCK_START = re.compile(r"^(\s*)(#|=+\s*$|-+\s*$)", re.M)


def md_lines(s: str) -> str:
    """Markdown lines (a renderer's own line breaks kept) with HTML tags inert, none of them
    able to start a heading (a leading ``#``, or a ``===`` / ``---`` underline, escaped)."""
    return "\n".join(_BLOCK_START.sub(r"\1\\\2", md_inert(ln)) for ln in _NEWLINES.split(s))


def md_cell(s: str) -> str:
    """A markdown table cell: ``md_inert``, and ``|`` escaped (inside code spans too, as GitHub
    tables need)."""
    return md_inert(s).replace("|", "\\|")


def hard_breaks(text: str, brk: str = "  ") -> str:
    """Markdown lines, each that the next would join (not blank, nor before a list item) ending
    in a hard break (``brk``: two spaces, for CommonMark and GitHub): kept apart when rendered."""
    rows = text.split("\n")
    for i in range(len(rows) - 1):
        if rows[i].strip() and not rows[i].endswith(brk) and not rows[i + 1].startswith("- "):
            rows[i] += brk
    return "\n".join(rows)


def md_code(s: str) -> str:
    """``s`` as one markdown code span, whatever backticks it holds."""
    s = one_line(s)
    fence = "`" * (max((len(r) for r in re.findall("`+", s)), default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"
