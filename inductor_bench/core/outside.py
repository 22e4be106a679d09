"""What the time outside the compiled graphs is spent on: a few real steps of the model,
profiled on the host (``runner/step_profile.py``), split into the ops that ran outside every
graph; pure, no torch.

A step's host timeline (``cpu_op`` events, ``ProfilerStep#N`` ranges around each step) holds,
per thread, ops nested in ops. Walking each thread's ops by start (the longer first at one
start), the first op met that is not inside another counted one is:

- **a graph** when it is a compiled graph's call: ``CompiledFunction`` (its forward),
  ``CompiledFunctionBackward`` (inside autograd's ``evaluate_function``), or a compiled
  module's own record function (``## Call CompiledFxGraph <key> ##``, an inference graph);
  its time is the graphs', nothing inside it is looked at;
- **a frame** when it is ``Torch-Compiled Region: ...`` (Dynamo's frame): it is not counted
  itself, the ops directly inside it are (a frame holds its graphs and, after a graph break,
  the eager code that Dynamo ran instead: an ``aten::lstm`` it does not support);
- **an op outside the graphs** otherwise (an eager ``aten::`` op, an autograd node's
  ``evaluate_function`` of the eager backward, Dynamo's guard check, the AOT wrapper's
  prologue): its whole duration, the ops inside it included, is its own.

What no thread spends in a counted op or graph (Python between ops, Dynamo's frame itself)
is counted apart, and where the trace holds Python's calls, split by whose Python it is
(``core/host_python.py``). Every figure is the policy's (``core/steady.py``) mean over the
steps whose wall it keeps.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from . import host_python
from .columns import STEP_NAME, TraceColumns, load_columns
from .errors import TraceError
from .host_python import PythonLayer
from .steady import steady
from .timeline import complement, merged
from .trace import MODULE_CALL

FRAME = host_python.DYNAMO_FRAME
GRAPH = re.compile(r"^(CompiledFunction|CompiledFunctionBackward|"
                   r"autograd::engine::evaluate_function: CompiledFunctionBackward)$")
US_PER_MS = 1000.0


@dataclass(frozen=True)
class OutsideOp:
    name: str  # as the profiler names it (an eager backward: its evaluate_function)
    calls: float  # per step
    ms: float  # per step, profiled


@dataclass
class OutsideProfile:
    """A profiled step's host time: inside the graphs, in each op outside them, and in none."""

    steps: int = 0  # steps profiled
    kept: int = 0  # the steps the policy kept
    step_ms: float = 0.0  # a profiled step's wall
    graphs_ms: float = 0.0  # inside the compiled graphs
    uncovered_ms: float = 0.0  # no thread in an op or a graph (Python between ops)
    ops: list[OutsideOp] = field(default_factory=list)  # the most time first
    error: str = ""
    # uncovered_ms by whose Python it is (the most first), from python_steps more steps profiled
    # with Python's calls, python_step_ms a step, python_uncovered_ms of it in no op
    python: list[PythonLayer] = field(default_factory=list)
    python_steps: int = 0
    python_step_ms: float = 0.0
    python_uncovered_ms: float = 0.0
    python_error: str = ""
    # inside the graphs' calls, in none of the ops they hold (their kernels, extern calls): the
    # graphs' wrappers; by whose Python it is as above (python_graphs_uncovered_ms in those steps);
    # None: not derived (a result saved before the figure, re-analysed without its steps' trace)
    graphs_uncovered_ms: float | None = None
    graph_python: list[PythonLayer] = field(default_factory=list)
    python_graphs_uncovered_ms: float = 0.0

    @property
    def outside_ms(self) -> float:
        """The ops outside the graphs and the time in no op."""
        return sum(o.ms for o in self.ops) + self.uncovered_ms

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> OutsideProfile | None:
        if not d:
            return None
        ops = [OutsideOp(**o) for o in d.get("ops") or []]
        python = [PythonLayer(**p) for p in d.get("python") or []]
        graph_python = [PythonLayer(**p) for p in d.get("graph_python") or []]
        kept = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        return cls(**{**kept, "ops": ops, "python": python, "graph_python": graph_python})


@dataclass
class _Step:
    wall: float = 0.0  # µs
    graphs: float = 0.0
    uncovered: float = 0.0
    ops: dict[str, list[float]] = field(default_factory=dict)  # name -> [calls, µs]
    gaps: list[tuple[float, float]] = field(default_factory=list)  # the uncovered time
    graph_uncovered: float = 0.0  # inside the graphs' calls, in none of their ops: the wrapper
    graph_gaps: list[tuple[float, float]] = field(default_factory=list)


def outside_profile(c: TraceColumns) -> OutsideProfile:
    """The split of every ``ProfilerStep#N`` of a host trace (see the module docstring)."""
    windows = sorted((m[:3] for m in c.markers if STEP_NAME.match(m[0])), key=lambda m: m[1])
    if not windows:
        return OutsideProfile(error=f"{c.path or 'the trace'}: no profiled step in it")
    steps = _steps(c, windows)
    kept = steady([s.wall for s in steps])
    names = {n for s in steps for n in s.ops}
    ops = [OutsideOp(n, kept.mean([s.ops.get(n, [0, 0.0])[0] for s in steps]),
                     kept.mean([s.ops.get(n, [0, 0.0])[1] for s in steps]) / US_PER_MS) for n in names]
    return OutsideProfile(
        steps=len(steps), kept=len(kept.kept),
        step_ms=kept.mean([s.wall for s in steps]) / US_PER_MS,
        graphs_ms=kept.mean([s.graphs for s in steps]) / US_PER_MS,
        uncovered_ms=kept.mean([s.uncovered for s in steps]) / US_PER_MS,
        ops=sorted(ops, key=lambda o: (-o.ms, o.name)),
        graphs_uncovered_ms=kept.mean([s.graph_uncovered for s in steps]) / US_PER_MS,
    )


def _steps(c: TraceColumns, windows: list[tuple[str, float, float]]) -> list[_Step]:
    by_start = sorted(range(len(c.op)), key=c.op.ts.__getitem__)
    starts = [c.op.ts[j] for j in by_start]
    return [_split(c, by_start[bisect_left(starts, start):bisect_right(starts, end)], start, end)
            for _, start, end in windows]


def with_python(p: OutsideProfile, c: TraceColumns) -> OutsideProfile:
    """``p`` with its time in no op split by whose Python it is: the shares of each layer in
    the steps of ``c`` (profiled with Python's calls), applied to ``p``'s time in no op (the
    Python tracer's own cost per call makes those steps' Python slower)."""
    windows = host_python.step_windows(c)
    if not windows:
        return replace(p, python_error=f"{c.path or 'the trace'}: no profiled step with Python's calls in it")
    steps = _steps(c, [w[:3] for w in windows])
    kept = steady([s.wall for s in steps])
    thread = windows[0][3]  # the worker's: every step's call is made there

    def split(gaps: list[list[tuple[float, float]]]) -> list[PythonLayer]:
        return host_python.layers(host_python.attribute_steps(host_python.thread_calls(c, thread), gaps),
                                  kept.mean)

    outside, inside = split([s.gaps for s in steps]), split([s.graph_gaps for s in steps])
    return replace(
        p, python=_scaled(outside, p.uncovered_ms),
        graph_python=_scaled(inside, p.graphs_uncovered_ms or 0.0),
        python_steps=len(steps), python_step_ms=kept.mean([s.wall for s in steps]) / US_PER_MS,
        python_uncovered_ms=sum(x.ms for x in outside), python_graphs_uncovered_ms=sum(x.ms for x in inside))


def _scaled(layers: list[PythonLayer], to_ms: float) -> list[PythonLayer]:
    """``layers`` brought to add up to ``to_ms``: their shares applied to it."""
    total = sum(x.ms for x in layers)
    scale = to_ms / total if total > 0 else 0.0
    return [replace(x, ms=x.ms * scale, top_ms=x.top_ms * scale) for x in layers]


def outside_of_trace(path: str | Path, python_path: str | Path | None = None) -> OutsideProfile:
    """``outside_profile`` of the trace at ``path``, split ``with_python`` of the trace at
    ``python_path`` (if any); an error where one cannot be read."""
    try:
        p = outside_profile(load_columns(path))
    except (TraceError, OSError) as e:
        return OutsideProfile(error=str(e))
    if p.error or not python_path:
        return p
    try:
        return with_python(p, load_columns(python_path))
    except (TraceError, OSError) as e:
        return replace(p, python_error=str(e))


def outside_of(step_profile: dict[str, Any]) -> OutsideProfile:
    """The compile worker's ``step_profile`` (its traces' paths, or the error that stopped it)."""
    if step_profile.get("trace"):
        p = outside_of_trace(step_profile["trace"], step_profile.get("python_trace"))
        error = step_profile.get("python_error")
        return replace(p, python_error=str(error)) if error and not p.error else p
    return OutsideProfile(error=str(step_profile.get("error") or "no profiled step"))


def _split(c: TraceColumns, inside: list[int], start: float, end: float) -> _Step:
    """One step: ``inside`` (the ops that start in it) by thread, then by start (the longer
    first), walked as above; inside a graph's call, the ops it holds on its thread (its
    kernels, its extern calls) are what leaves the call's own time, its wrapper, uncovered."""
    op, names = c.op, c.names.values
    js = [j for j in inside if not STEP_NAME.match(names[op.name[j]])]
    js.sort(key=lambda j: (op.where[j], op.ts[j], -op.dur[j]))
    out = _Step(wall=end - start)
    covered: list[tuple[float, float]] = []  # the counted ops' and graphs' spans, every thread
    open_until, thread = -float("inf"), None  # the end of the counted op (or graph) last met
    frames: list[float] = []  # the ends of the frames open around the walk
    graph: list[tuple[float, float]] = []  # the graph call open, and the ops in it so far
    for j in js:
        t, e, name = op.ts[j], min(op.ts[j] + op.dur[j], end), names[op.name[j]]
        if op.where[j] != thread:
            thread, open_until, frames = op.where[j], -float("inf"), []
        is_graph = bool(GRAPH.match(name) or MODULE_CALL.match(name))
        if t < open_until:  # inside a counted op or a graph
            if graph and t < graph[0][1] and not is_graph and not FRAME.match(name):
                graph.append((t, min(e, graph[0][1])))
            continue
        _close(out, graph)
        while frames and t >= frames[-1]:
            frames.pop()
        if FRAME.match(name):
            frames.append(e)
            continue
        covered.append((t, e))
        open_until = e
        if is_graph:
            out.graphs += e - t
            graph = [(t, e)]
        else:
            calls_us = out.ops.setdefault(name, [0, 0.0])
            calls_us[0] += 1
            calls_us[1] += e - t
    _close(out, graph)
    out.gaps = complement(merged(covered), start, end)  # no thread in a counted op
    out.uncovered = sum(b - a for a, b in out.gaps)
    out.graph_gaps = merged(out.graph_gaps)
    out.graph_uncovered = sum(b - a for a, b in out.graph_gaps)
    return out


def _close(out: _Step, graph: list[tuple[float, float]]) -> None:
    """A graph call's time in none of the ops it holds, into ``out.graph_gaps``; ``graph``
    emptied (its call first, then its ops)."""
    if graph:
        (t, e), ops = graph[0], graph[1:]
        out.graph_gaps += complement(merged(ops), t, e)
        graph.clear()
