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

Each step's window is the Python call of the function around it
(``runner/step_profile.py``'s ``_profiled_step``): under the Python tracer, torch 2.5 writes
the ``ProfilerStep#N`` range of ``record_function`` at the step's end, not around it.

``trace_python`` does the same for any trace recorded with ``with_stack`` (``analyze``): its
``ProfilerStep#N`` ranges, the moments no thread spends in an op or a runtime call, the thread
with the most Python calls; read from the trace's columns, an event at a time.
"""

from __future__ import annotations

import functools
import math
import re
import sys
from array import array
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import compress

from .columns import STEP_NAME, TraceColumns
from .range_starts import PROFILER_FILES
from .timeline import complement, merged
from .trace import PYTHON_FUNCTION as PYTHON_FUNCTION  # the category of its events
from .trace import Event

STEP_FUNCTION = "_profiled_step"  # runner/step_profile.py: one call per profiled step
STEP_FILE = "step_profile.py"
NO_FRAME = "(no Python frame of its own)"
FRAME = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<func>.+)$")
DYNAMO_FRAME = re.compile(r"^Torch-Compiled Region")  # Dynamo's frame: its ops count, not it
_MODULE = re.compile(r"(^|/)c[a-z0-9]{40,}\.py$")  # a module Inductor wrote (its hash's name)
_STDLIB = frozenset(sys.stdlib_module_names)

INDUCTOR = "Inductor (the compiled modules' Python)"
# (layer, the file prefixes that name it), the first match wins; paths as the tracer writes
# them: relative to the sys.path entry they were found under.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the profiler itself", PROFILER_FILES),
    ("Dynamo (frame entry, guards, its wrappers)", ("torch/_dynamo/",)),
    ("AOTAutograd (runtime wrappers)", ("torch/_functorch/",)),
    (INDUCTOR, ("torch/_inductor/",)),
    ("autograd (backward entry, its engine, Function.apply)", ("torch/autograd/",)),
    ("torch.nn (module calls and hooks, parameters)", ("torch/nn/",)),
    ("the optimizer", ("torch/optim/",)),
    ("torch.cuda (its synchronize waits for the device)", ("torch/cuda/",)),
    ("the tool's step harness (its calls around the model)", ("inductor_bench/",)),
    ("other torch Python", ("torch/",)),
)
MODEL = "the model and its libraries"
Owner = tuple[str, str] | None  # (layer, frame) of the innermost call with a layer; None: no call
Gaps = list[tuple[float, float]]  # disjoint, sorted [start, end) in µs
Split = dict[tuple[str, str], float]  # (layer, frame) -> µs


@dataclass(frozen=True)
class PythonFrame:
    """A frame's time in no op in one step of a trace (``trace_python``)."""

    layer: str
    frame: str
    ms: float


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


@functools.lru_cache(maxsize=1 << 16)
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


def step_windows(c: TraceColumns) -> list[tuple[str, float, float, int]]:
    """The profiled steps as ``(name, start, end, thread index)``, by start: the calls of
    ``STEP_FUNCTION`` among the trace's Python calls."""
    py, names = c.python, c.names.values
    step = {i for i in set(py.name) if _is_step(names[i])}
    at = sorted((py.ts[j], j) for j in range(len(py)) if py.name[j] in step)
    return [(f"ProfilerStep#{k}", t, t + py.dur[j], py.where[j]) for k, (t, j) in enumerate(at)]


def _is_step(name: str) -> bool:
    m = FRAME.match(name)
    return bool(m) and m.group("func") == STEP_FUNCTION and m.group("file").endswith(STEP_FILE)


Call = tuple[float, float, str]  # a Python call: start, end (µs), its frame's name


def attribute(calls: list[Event], gaps: Gaps) -> Split:
    """µs of ``gaps`` (disjoint, sorted) per (layer, owning frame): the innermost call of
    ``calls`` (one thread's) with a layer at each moment (``NO_FRAME`` where none)."""
    ordered = sorted(((c.ts, c.end, c.name) for c in calls), key=lambda c: (c[0], c[0] - c[1]))
    return attribute_steps(ordered, [gaps])[0]


def attribute_steps(calls: Iterable[Call], gaps: list[Gaps]) -> list[Split]:
    """``attribute`` for several steps' gaps (disjoint across steps), in one pass over
    ``calls`` (by start, the longer first at one start): a stack of the calls open, each
    piece of time between two starts or ends given to the top of the stack."""
    flat = sorted((a, b, k) for k, step in enumerate(gaps) for a, b in step if b > a)
    acc = _Gaps(flat, [{} for _ in gaps])
    if not flat:
        return acc.out
    start, end = flat[0][0], max(b for _, b, _ in flat)
    stack: list[tuple[float, Owner]] = []  # (end, owner) of the calls open
    cur = start
    for ts, c_end, name in calls:
        if c_end <= start or ts >= end:
            continue
        while stack and stack[-1][0] <= ts:
            cur = acc.add(cur, *stack.pop())
        cur = acc.add(cur, ts, stack[-1][1] if stack else None)
        if stack:
            c_end = min(c_end, stack[-1][0])  # a child ends with its caller
        layer = layer_of(name)
        stack.append((c_end, (layer, name) if layer else (stack[-1][1] if stack else None)))
    while stack:
        cur = acc.add(cur, *stack.pop())
    acc.add(cur, end, None)
    return acc.out


class _Gaps:
    """Adds pieces of time, in increasing order, to the steps whose gaps they overlap."""

    def __init__(self, flat: list[tuple[float, float, int]], out: list[Split]) -> None:
        self.flat, self.out, self.i = flat, out, 0

    def add(self, cur: float, until: float, owner: Owner) -> float:
        """Give ``[cur, until)`` to ``owner``; returns where the next piece starts."""
        if until <= cur:
            return cur
        flat, i = self.flat, self.i
        while i < len(flat) and flat[i][1] <= cur:
            i += 1
        self.i = i
        key = owner or (NO_FRAME, "")
        while i < len(flat) and flat[i][0] < until:
            g0, g1, k = flat[i]
            step = self.out[k]
            step[key] = step.get(key, 0.0) + min(until, g1) - max(cur, g0)
            i += 1
        return until


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
        # summed exactly, then rounded once: the same in every process (a set's order is not)
        out.append(PythonLayer(name, math.fsum(ms.values()), top, ms[top]))
    return sorted(out, key=lambda p: (-p.ms, p.name))



Window = tuple[str, float, float]  # a step: name, start and end on the CPU (µs)


def trace_python(c: TraceColumns, windows: list[Window]) -> tuple[str, list[list[PythonFrame]]]:
    """A trace's steps: in each, the time no thread spends in an op (Dynamo's frame and the
    steps' own ranges aside) or a runtime call, by the Python running then on the thread with
    the most calls (the loop's: the tracer also writes a few long frames of threads begun
    before it, as thread 0), and that thread (``thread <tid>``); nothing where the trace holds
    no Python calls."""
    py = c.python
    if not len(py) or not windows:
        return "", []
    main = Counter(py.where).most_common(1)[0][0]
    steps = attribute_steps(thread_calls(c, main), _gaps(_busy(c), windows))
    frames = [[PythonFrame(layer, frame, us / 1e3) for (layer, frame), us in sorted(d.items())]
              for d in steps]
    return f"thread {c.threads.values[main][1]}", frames


def thread_calls(c: TraceColumns, thread: int) -> Iterable[Call]:
    """The Python calls of ``thread`` by start, the longer first at one start: the file's
    order where it is that (kineto writes a thread's calls as they began), else sorted."""
    py, names = c.python, c.names.values
    mine = array("q", compress(range(len(py)), map(thread.__eq__, py.where)))
    if not _in_order(py.ts, py.dur, mine):
        mine = array("q", sorted(mine, key=lambda j: (py.ts[j], -py.dur[j])))
    return ((py.ts[j], py.ts[j] + py.dur[j], names[py.name[j]]) for j in mine)


def _in_order(ts: array, dur: array, mine: array) -> bool:
    prev_t, prev_d = -math.inf, math.inf
    for j in mine:
        t, d = ts[j], dur[j]
        if t < prev_t or (t == prev_t and d > prev_d):
            return False
        prev_t, prev_d = t, d
    return True


def _busy(c: TraceColumns) -> Gaps:
    """Where some thread is in an op or a runtime call: disjoint, sorted."""
    names = c.names.values
    skip = {i for i, n in enumerate(names) if STEP_NAME.match(n) or DYNAMO_FRAME.match(n)}
    op, launch = c.op, c.launch
    return merged([(op.ts[j], op.ts[j] + op.dur[j]) for j in range(len(op)) if op.name[j] not in skip]
                  + [(t, t + d) for t, d in zip(launch.ts, launch.dur, strict=True)])


def _gaps(busy: Gaps, windows: list[Window]) -> list[Gaps]:
    """Each window less ``busy``."""
    ends = [b for _, b in busy]
    out = []
    for _, start, end in windows:
        near = busy[bisect_right(ends, start):bisect_right(ends, end) + 1]
        out.append(complement([(a, b) for a, b in near if a < end], start, end))
    return out


def typical(steps: list[list[PythonFrame]], mean: Callable[[list[float]], float]) -> list[PythonLayer]:
    """``layers`` of ``trace_python``'s steps (those to average: the policy's)."""
    return layers([{(f.layer, f.frame): f.ms * 1e3 for f in step} for step in steps], mean)
