"""The lines that called a kernel's line: a layer class's one ``forward`` told apart by caller.

Each FX node's line is the innermost frame of its stack trace outside torch. For a model whose
layers are classes of a library outside torch, that frame is the library layer's own
``forward``, shared by every layer of the class: every GEMM of a Hugging Face GPT-2 is
``Conv1D.forward``'s ``torch.addmm`` (``transformers/pytorch_utils.py:119``), whichever
projection it is. The compile worker therefore records, after each node's line, the lines
outside torch that called it (``callers``, innermost first, a few deep; ``runner/sources.py``),
and a ``SourceLine`` carries them as ``via``.

The view by line splits a line by its callers only where that tells something apart: a line
reached from several distinct calling lines among the lines of the view is one row per caller
(``pytorch_utils.py:119 via modeling_gpt2.py:187``, the ``self.c_attn(hidden_states)`` line),
and so on outward while the rows so made are still reached from several callers; a line
reached from one caller only (``self.conv1(x)`` of a block a loop calls) keeps its one row, as
does every line of a record made before callers were kept. Pure data; no torch.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .source_store import CALLERS
from .sources import VIA, SourceLine


def record_line(rec: dict[str, Any]) -> SourceLine:
    """A node record's line (``frame``) with the lines that called it (``callers``)."""
    file, line, func, code = rec["frame"]
    via = tuple(SourceLine(str(f), int(n), str(fn), str(c)) for f, n, fn, c in rec.get(CALLERS) or ())
    return SourceLine(file, int(line), func, code, via)


def labels(lines: Iterable[SourceLine]) -> dict[SourceLine, SourceLine]:
    """Each of ``lines`` -> the line it is shown as: its callers cut after the last one needed
    to tell it from a line of ``lines`` that shares its line and callers so far but is reached
    from another caller (see the module doc)."""
    known = set(lines)
    callers: dict[tuple[tuple[str, int], ...], set[tuple[str, int]]] = {}  # a chain's start -> next
    for o in known:
        for depth in range(len(o.via)):
            callers.setdefault(o.chain[: depth + 1], set()).add(o.chain[depth + 1])
    out: dict[SourceLine, SourceLine] = {}
    for ln in known:
        depth = 0
        while depth < len(ln.via) and len(callers[ln.chain[: depth + 1]]) > 1:
            depth += 1
        out[ln] = SourceLine(ln.file, ln.line, ln.function, ln.code, ln.via[:depth])
    return out


def label_text(ln: SourceLine) -> str:
    """``transformers/pytorch_utils.py:119 via transformers/models/gpt2/modeling_gpt2.py:187``."""
    return VIA.join(x.short for x in (ln, *ln.via))


def label_code(ln: SourceLine) -> str:
    """The text of the line a row is told apart by: its outermost caller shown, else its own."""
    return (ln.via[-1] if ln.via else ln).code
