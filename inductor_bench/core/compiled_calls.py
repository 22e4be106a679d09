"""Which graph each compiled-graph call record of a CPU-only trace ran (pure, no torch).

torch 2.9+ wraps every call of a compiled graph in ``## Call CompiledFxGraph <key> ##``, named
by its FX graph cache key: in an op table two such rows read as two hashes. The ops it runs
inside say which graph it is: AOTAutograd's ``CompiledFunction`` (a forward) or
``CompiledFunctionBackward`` (a backward), and Dynamo's ``Torch-Compiled Region: 0/0`` (the
frame it was compiled from; a backward runs from autograd's engine, outside any frame).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .columns import Events
from .trace import COMPILED_CALL

FRAME = re.compile(r"^Torch-Compiled Region: (\S+)")
ROLES = {"CompiledFunction": "forward", "CompiledFunctionBackward": "backward"}


def call_contexts(op: Events, names: list[str], ops: Sequence[int]) -> dict[int, str]:
    """Name id of each compiled-graph call record among ``ops`` -> what it ran as
    (``forward, frame 0/0``, ``backward``, ``frame 1/0``), where an enclosing op says so."""
    calls = {n for n, s in enumerate(names) if COMPILED_CALL.match(s)}
    if not calls:
        return {}
    marks = {n: _mark(s) for n, s in enumerate(names) if n not in calls}
    marks = {n: m for n, m in marks.items() if m is not None}
    threads: dict[int, list[int]] = {}
    for j in ops:
        if op.name[j] in calls or op.name[j] in marks:
            threads.setdefault(op.where[j], []).append(j)
    out: dict[int, str] = {}
    for js in threads.values():
        _walk(sorted(js, key=lambda j: (op.ts[j], -op.dur[j])), op, calls, marks, out)
    return out


def _mark(name: str) -> tuple[str, str] | None:
    """(what, its words) of an op that says what a call inside it runs as."""
    if name in ROLES:
        return "role", ROLES[name]
    m = FRAME.match(name)
    return ("frame", f"frame {m.group(1)}") if m else None


def _walk(js: list[int], op: Events, calls: set[int], marks: dict[int, tuple[str, str]],
          out: dict[int, str]) -> None:
    """One thread's calls and marks by start: each call named by the marks open around it."""
    open_marks: list[tuple[float, tuple[str, str]]] = []  # (end, mark)
    for j in js:
        t = op.ts[j]
        while open_marks and t >= open_marks[-1][0]:
            open_marks.pop()
        n = op.name[j]
        if n in calls:
            found = dict(m for _, m in open_marks)  # the innermost of each kind
            words = [found[k] for k in ("role", "frame") if k in found]
            if words and n not in out:
                out[n] = ", ".join(words)
        else:
            open_marks.append((t + op.dur[j], marks[n]))
