"""Whose Python the time in no op is: the profiled steps' ``python_function`` events (the
profiler's Python tracer, ``with_stack=True``), read for the moments no thread spends in an
op or a compiled graph (``core/outside.py``); pure, no torch.

Each such moment goes to the innermost Python frame running then on the step's thread that
has a source file of its own: a built-in (``<built-in method addmm ...>``) and a frame of the
standard library (``contextlib.py``, ``<frozen ...>``) stand for the frame that called them.
That frame's file names its layer (``LAYERS``, the first rule that matches): Dynamo's frame
and its wrappers, AOTAutograd's runtime wrappers, the compiled modules Inductor wrote,
autograd, ``torch.nn``, the optimizer, ``torch.cuda``, the profiler itself, the tool's own
step, other torch Python, and the rest: the model and the libraries it uses (a model file
named like a module of the standard library, ``test.py``, counts for its caller too). A
moment with no such frame is ``NO_FRAME``. The layers of a step sum to its time in no op
exactly.

Each step's window is the ``python_function`` event of the function around it
(``runner/step_profile.py``'s ``_profiled_step``): under the Python tracer, torch 2.5 writes
the ``ProfilerStep#N`` range of ``record_function`` at the step's end, not around it.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_right
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path

from .trace import Event, load_trace

PYTHON_FUNCTION = "python_function"
STEP_FUNCTION = "_profiled_step"  # runner/step_profile.py: one call per profiled step
STEP_FILE = "step_profile.py"
NO_FRAME = "(no Python frame of its own)"
FRAME = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<func>.+)$")
_MODULE = re.compile(r"(^|/)c[a-z0-9]{40,}\.py$")  # a module Inductor wrote (its hash's name)
_STDLIB = frozenset(sys.stdlib_module_names)

INDUCTOR = "Inductor (the compiled modules' Python)"
# (layer, the file prefixes that name it), the first match wins; paths as the tracer writes
# them: relative to the sys.path entry they were found under.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the profiler itself", ("torch/profiler/", "torch/autograd/profiler")),
    ("Dynamo (frame entry, guards, its wrappers)", ("torch/_dynamo/",)),
    ("AOTAutograd (runtime wrappers)", ("torch/_functorch/",)),
    (INDUCTOR, ("torch/_inductor/",)),
    ("autograd (backward entry, its engine, Function.apply)", ("torch/autograd/",)),
    ("torch.nn (module calls and hooks, parameters)", ("torch/nn/",)),
    ("the optimizer", ("torch/optim/",)),
    ("torch.cuda (its synchronize waits for the device)", ("torch/cuda/",)),
    ("the tool's step harness (the loss, the backward call)", ("inductor_bench/",)),
    ("other torch Python", ("torch/",)),
)
MODEL = "the model and its libraries"
Owner = tuple[str, str] | None  # (layer, frame) of the innermost call with a layer; None: no call
Pieces = Generator[tuple[float, float, Owner], None, float]  # (start, end, owner); returns the end


@dataclass(frozen=True)
class PythonLayer:
    """A layer's share of a profiled step's time in no op."""

    name: str
    ms: float  # per step
    top: str  # its frame with the most time ("file(line): function")
    top_ms: float


def frame_file(name: str) -> str | None:
    """The source file of a ``python_function`` event's frame; None for a built-in."""
    m = FRAME.match(name)
    return m.group("file") if m else None


def layer_of(name: str) -> str | None:
    """The layer of a frame (see the module docstring); None where its caller stands for it
    (a built-in, the standard library)."""
    path = frame_file(name)
    if path is None or path.startswith("<"):
        return None
    path = path.replace("\\", "/")
    if _MODULE.search(path):
        return INDUCTOR
    for layer, prefixes in LAYERS:
        if path.startswith(prefixes):
            return layer
    if path.split("/", 1)[0].removesuffix(".py") in _STDLIB:
        return None
    return MODEL


def short_frame(name: str) -> str:
    """A frame as a table shows it: a file by an absolute path by its name alone, a module
    Inductor wrote by the start of its hash."""
    m = FRAME.match(name)
    if not m or not m.group("file").startswith("/"):
        return name
    file = m.group("file").rsplit("/", 1)[-1]
    if _MODULE.search(file):
        file = f"{file[:7]}… (a compiled module)"
    return f"{file}({m.group('line')}): {m.group('func')}"


def python_calls(path: str | Path) -> list[Event]:
    """The ``python_function`` events of the trace at ``path`` (none: recorded without
    Python's calls). Raises ``TraceError`` as ``load_trace`` does."""
    return load_trace(path, categories=(PYTHON_FUNCTION,), args=()).events


def step_windows(calls: list[Event]) -> list[tuple[str, float, float, int | str]]:
    """The profiled steps as ``(name, start, end, thread)``, by start: the calls of
    ``STEP_FUNCTION``."""
    steps = sorted((c for c in calls if _is_step(c.name)), key=lambda c: c.ts)
    return [(f"ProfilerStep#{i}", c.ts, c.end, c.tid) for i, c in enumerate(steps)]


def _is_step(name: str) -> bool:
    m = FRAME.match(name)
    return bool(m) and m.group("func") == STEP_FUNCTION and m.group("file").endswith(STEP_FILE)


def attribute(calls: list[Event], gaps: list[tuple[float, float]]) -> dict[tuple[str, str], float]:
    """µs of ``gaps`` (disjoint, sorted) per (layer, owning frame): the innermost call of
    ``calls`` (one thread's) with a layer at each moment (``NO_FRAME`` where none)."""
    out: dict[tuple[str, str], float] = {}
    for a, b, owner in _segments(calls, gaps[0][0], gaps[-1][1]) if gaps else ():
        for g0, g1 in _overlapping(gaps, a, b):
            key = owner or (NO_FRAME, "")
            out[key] = out.get(key, 0.0) + min(b, g1) - max(a, g0)
    return out


def _segments(calls: list[Event], start: float, end: float) -> Pieces:
    """``(a, b, owner)`` pieces of ``[start, end)``: who owned each piece (the innermost
    call with a layer, as ``(layer, frame)``; None: no call)."""
    stack: list[tuple[float, Owner]] = []  # (end, owner)
    cur = start
    for c in sorted(calls, key=lambda c: (c.ts, -c.dur)):
        if c.end <= start or c.ts >= end:
            continue
        while stack and stack[-1][0] <= c.ts:
            cur = yield from _piece(cur, *stack.pop())
        cur = yield from _piece(cur, c.ts, stack[-1][1] if stack else None)
        c_end = min(c.end, stack[-1][0]) if stack else c.end  # a child ends with its caller
        layer = layer_of(c.name)
        stack.append((c_end, (layer, c.name) if layer else (stack[-1][1] if stack else None)))
    while stack:
        cur = yield from _piece(cur, *stack.pop())
    return (yield from _piece(cur, end, None))


def _piece(cur: float, until: float, owner: Owner) -> Pieces:
    if until > cur:
        yield cur, until, owner
        return until
    return cur


def _overlapping(gaps: list[tuple[float, float]], a: float, b: float) -> Iterator[tuple[float, float]]:
    i = max(bisect_right(gaps, (a, float("inf"))) - 1, 0)
    while i < len(gaps) and gaps[i][0] < b:
        if gaps[i][1] > a:
            yield gaps[i]
        i += 1


def layers(per_step: list[dict[tuple[str, str], float]],
           mean: Callable[[list[float]], float]) -> list[PythonLayer]:
    """Each layer's time per step (``mean`` over the steps: the policy's), the most first,
    with its frame that took the most."""
    names = {layer for d in per_step for layer, _ in d}
    out = []
    for name in names:
        frames = {f for d in per_step for layer, f in d if layer == name}
        ms = {f: mean([d.get((name, f), 0.0) for d in per_step]) / 1e3 for f in frames}
        top = max(sorted(ms), key=ms.__getitem__)
        out.append(PythonLayer(name, sum(ms.values()), top, ms[top]))
    return sorted(out, key=lambda p: (-p.ms, p.name))

