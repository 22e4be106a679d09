"""The time outside the compiled graphs: the step against its graphs (``core/step.py``), and by
the ops that took it, a few profiled steps of the model split by ``core/outside.py``."""

from __future__ import annotations

from ..core.devices import HOST_BACKEND
from ..core.host_python import PythonLayer, short_frame
from ..core.load import Load
from ..core.outside import OutsideProfile
from ..core.results import BreakdownResult
from ..core.steady import steady_mean
from ..core.step import (
    OUTSIDE_ABOVE,
    STEP_SLOWER,
    StepSplit,
    gain_frame,
    not_all_profiled,
    profiled_outside_in_place,
    set_aside,
    split_step,
    turns_slowdown,
)
from . import format as fmt
from .doc import Doc

SHOWN = 8  # ops shown; the rest in one row
# Below this share of the step outside the graphs, the ops are one line: there the profiler's
# own cost (about a microsecond per op, more per step) is most of what it would show.
TABLE_PCT = 10.0
BACKWARD = "autograd::engine::evaluate_function: "


def op_label(name: str) -> str:
    """An op as the table names it: an autograd node's evaluation as the node, eager backward."""
    return f"{name[len(BACKWARD):]} (eager backward)" if name.startswith(BACKWARD) else name


def render_outside_ops(doc: Doc, r: BreakdownResult) -> None:
    """The table of the ops outside the graphs, the most time first (a line where the steps
    could not be profiled), and the graphs' wrappers by whose Python they are."""
    p = r.outside
    if p is None:
        return
    _outside_ops(doc, r, p)
    _graph_python(doc, p)


def _outside_ops(doc: Doc, r: BreakdownResult, p: OutsideProfile) -> None:
    if p.error:
        doc.paragraph(f"outside the graphs, by op: not profiled ({p.error}).")
        return
    if not p.ops and p.uncovered_ms <= 0:
        return
    s = split_step(r)
    if s is not None and s.outside_pct < TABLE_PCT:  # a line: the profiler's cost would weigh most
        top = ", ".join(f"{op_label(o.name)} {fmt.ms(o.ms)} ms" for o in p.ops[:3])
        doc.paragraph(f"outside the graphs, by op (profiled steps, per step; the profiler's own cost "
                      f"included): {top}.")
        return
    doc.heading("Outside the graphs, by op (profiled steps)")
    total = p.outside_ms
    rows = [_row(op_label(o.name), fmt.count(o.calls), o.ms, total) for o in p.ops[:SHOWN]]
    rest = p.ops[SHOWN:]
    if rest:
        rows.append(_row(f"{len(rest)} other ops", fmt.count(sum(o.calls for o in rest)),
                         sum(o.ms for o in rest), total))
    if p.uncovered_ms > 0:
        waiting = "" if r.device == HOST_BACKEND.name else ", waiting for the device"
        rows.append(_row(f"(in no op: Python between ops{waiting})", "", p.uncovered_ms, total))
    rows.append(["total (profiled)", "", fmt.ms(total), fmt.pct(100.0)])
    doc.table(rows, ["op", "calls", "ms", "% outside"], ("left", "right", "right", "right"))
    doc.paragraph(_note(r, p, s))
    _python(doc, p)


def _unprofiled_step_ms(r: BreakdownResult, s: StepSplit) -> float:
    """The step the profiled steps are held against: the split's, or where its turns' step was set
    aside as slower than the step timed just before them (``STEP_SLOWER``), that one: a profiled
    1.759 ms step read "against 2.696 ms timed without it" beside the warning that set 2.696 aside
    for the 1.140 ms before it."""
    aside = set_aside(r, s)
    return steady_mean(r.step_samples_ms) if aside is not None and aside[0] == STEP_SLOWER else s.step_ms


def _row(name: str, calls: str, ms: float, total: float) -> list[str]:
    return [name, calls, fmt.ms(ms), fmt.pct(fmt.share(ms, total))]


def _note(r: BreakdownResult, p: OutsideProfile, s: StepSplit | None) -> str:
    timed = f" against {fmt.ms(_unprofiled_step_ms(r, s))} ms timed without it" if s is not None else ""
    kept = f"{p.kept} of {p.steps}" if p.kept != p.steps else f"{p.steps}"
    return (
        f"{kept} steps of the model profiled on the host after the timed ones, per step: "
        f"{fmt.ms(p.step_ms)} ms{timed} (the profiler adds its own cost to every op: the shares "
        f"are the guide), {fmt.ms(p.graphs_ms)} ms of it inside the compiled graphs. An op is "
        "counted whole, the ops it calls included; an eager backward is the autograd node's "
        "evaluation; calls and ms per step."
    )


def _python(doc: Doc, p: OutsideProfile) -> None:
    """The time in no op by whose Python it is (``core/host_python.py``)."""
    if p.python_error:
        doc.paragraph(f"Python between ops, by whose it is: not profiled ({p.python_error}).")
    _python_section(
        doc, "Python between ops, by whose it is (profiled steps)", p.python, p.uncovered_ms,
        "Each moment in no op goes to the innermost Python frame then running on the step's thread "
        "with a source file of its own (a built-in or the standard library counts for the frame "
        f"that called it), and its file to a layer. The shares come from {p.python_steps} more "
        f"steps profiled with Python's calls recorded ({fmt.ms(p.python_step_ms)} ms a step, "
        f"{fmt.ms(p.python_uncovered_ms)} ms of it in no op; the tracer adds its own cost to every "
        f"call), applied to the {fmt.ms(p.uncovered_ms)} ms in no op above (docs/breakdown.md).")


def _graph_python(doc: Doc, p: OutsideProfile) -> None:
    """Inside the graphs' calls, the time in none of their ops (their wrappers), by whose
    Python it is (``core/outside.py``)."""
    if p.error or p.graphs_uncovered_ms is None:  # not derived: nothing to split
        return
    _python_section(
        doc, "The graphs' wrappers, by whose Python (profiled steps)", p.graph_python, p.graphs_uncovered_ms,
        f"Inside the compiled graphs' calls ({fmt.ms(p.graphs_ms)} ms a profiled step), the time in "
        f"none of the ops they hold (their kernels, their extern calls), {fmt.ms(p.graphs_uncovered_ms)} "
        "ms: the wrappers around the kernels (allocation, checks, launches, AOTAutograd's saving "
        "and restoring), split as the time outside them is, with the shares of the steps "
        f"profiled with Python's calls ({fmt.ms(p.python_graphs_uncovered_ms)} ms there), by the "
        "Python of the step's thread: where autograd runs the backward on a thread of its own (on "
        "a GPU), its wrapper's time reads as autograd, where the step's thread waits for it.")


def _python_section(doc: Doc, title: str, layers: list[PythonLayer], total_ms: float, note: str) -> None:
    if not layers or total_ms <= 0:
        return
    doc.heading(title)
    python_table(doc, layers, total_ms)
    doc.paragraph(note)


def python_table(doc: Doc, layers: list[PythonLayer], total_ms: float) -> None:
    """The time in no op by whose Python it is (``core/host_python.py``), the most first."""
    rows = [[x.name, fmt.ms(x.ms), fmt.pct(fmt.share(x.ms, total_ms)),
             f"{short_frame(x.top)} {fmt.ms(x.top_ms)}" if x.top else ""] for x in layers]
    rows.append(["total (in no op)", fmt.ms(total_ms), fmt.pct(100.0), ""])
    doc.table(rows, ["whose Python", "ms", "% in no op", "its frame with the most time, ms"],
              ("left", "right", "right", "left"))


def _rounds(s: StepSplit) -> str:
    if not s.left_out:
        return f"{s.rounds} rounds"
    return f"{s.rounds} steady rounds of {s.rounds + s.left_out}, {s.left_out} left out as disturbed"


def _eager_work(r: BreakdownResult) -> str:
    """What runs outside the graphs in the tool's step of a model file (``runner/workload.py``)."""
    own = " and the step's own eager work (the loss's sum, zero_grad)" if r.train else ""
    return f"guards, the AOT autograd wrapper, all eager code between graphs{own}"


def _set_aside(r: BreakdownResult, s: StepSplit) -> str | None:
    """Where a check set the turns' own time outside the graphs aside (``step.set_aside``: their
    step at another speed than the step timed before them, their time outside the graphs far
    above the profiled steps', their graphs' calls at another speed than the profile): the line
    that leads with what max gain takes instead, and says why. None where the turns' figure
    stands."""
    aside = set_aside(r, s)
    if aside is None:
        return None
    why, ratio = aside
    frame = gain_frame(r)
    turns = (f"the turns' {fmt.ms(s.outside_ms)} ms outside the graphs (of a {fmt.ms(s.step_ms)} ms "
             f"step, {_rounds(s)}) is set aside")
    profiled = _profiled_in_place(r, frame.outside_ms)
    if why == STEP_SLOWER:
        lead = profiled if frame.outside_ms > 0 else (
            "outside the graphs: not measured (no step was profiled), none counted in max gain")
        return (f"{lead}. WARNING: the step took {ratio:.1f}x as long in its turns with the graphs as the "
                f"{fmt.ms(s.step_ms / ratio)} ms it took just before them in the same process (the machine "
                f"busier while they ran): {turns}.")
    if why == OUTSIDE_ABOVE:
        return (f"{profiled}. WARNING: the turns' time outside the graphs was {ratio:.1f}x the profiled "
                f"steps' (the step's blocks met stalls the graphs' blocks missed): {turns}.")
    times = _times(ratio)
    return (f"outside the graphs: {fmt.ms(frame.outside_ms)} ms per step, at the profile's speed. WARNING: "
            f"the graphs' own calls took {times}x their profiled {fmt.ms(frame.graphs_ms)} ms in the "
            f"step's turns (the machine {'busier' if ratio > 1 else 'quieter'} while the step was timed): "
            f"{turns}, and taken at the profile's speed ({fmt.ms(s.outside_ms)} / {times}).")


def _profiled_in_place(r: BreakdownResult, outside_ms: float) -> str:
    """The lead of the outside line where the profiled steps' figure stands in for the turns'
    (``profiled_outside_in_place``): theirs, or their share of the step timed before the turns
    where they ran far slower than it."""
    _, slower = profiled_outside_in_place(r)
    if slower is None or r.outside is None:
        return (f"outside the graphs: {fmt.ms(outside_ms)} ms per step, the profiled steps' (the "
                "profiler's own cost included)")
    p = r.outside
    return (f"outside the graphs: {fmt.ms(outside_ms)} ms per step, the profiled steps' share "
            f"({fmt.ms(p.outside_ms)} of their {fmt.ms(p.step_ms)} ms) of the "
            f"{fmt.ms(steady_mean(r.step_samples_ms))} ms step timed before the turns, as they ran "
            f"{_times(slower)}x slower than it (the profiler's own cost, a busier machine)")


def _times(ratio: float) -> str:
    """A speed ratio as the outside line reads it: quieter turns 0.0094, not 0.0."""
    return f"{ratio:.1f}" if ratio >= 1 else f"{ratio:.2g}"


def _turns_speed(r: BreakdownResult, s: StepSplit) -> str:
    """Where the graphs' own calls in the turns ran at another speed than their profile (the
    figure the graph table shows), how many times it: the turns' graphs time is not the table's."""
    ratio = turns_slowdown(r, s)
    if ratio is None:
        return ""
    return (f" ({_times(ratio)}x their profiled {fmt.ms(r.totals().wall_ms)} ms, the graph table's: the "
            f"machine {'busier' if ratio > 1 else 'quieter'} while the turns ran)")


def _turns_load(r: BreakdownResult, then: str = "the time outside the graphs, a difference of two "
                "times, may be far off") -> str:
    """A warning where other processes disturbed the turns: the time outside the graphs is a
    difference of two times the load slowed, each by its own stalls, and the checks against
    the profile pass where the profile was as disturbed; ``then``: what that means for the line."""
    load = Load.from_dict(r.step_turns.load if r.step_turns else None)
    if load is None or not load.disturbed:
        return ""
    return f" WARNING: the step and its graphs were timed in turns while {load.describe()}: {then}."


def render_outside_split(doc: Doc, r: BreakdownResult) -> None:
    """The step against its graphs: the time outside them, how it was timed, and what max gain
    takes where the timing disagreed with the profile."""
    s = split_step(r)
    if s is None:
        if not_all_profiled(r) and r.step_samples_ms:
            doc.paragraph("outside the graphs: not measured: the run was interrupted before every graph "
                          "was profiled, and the step holds the graphs it lacks")
        return
    frame = "pipelined graph times" if s.pipelined else "graph wall times"
    if s.rounds and s.outside_ms >= 0:
        doc.paragraph(_set_aside(r, s) or (
            f"outside the graphs: {fmt.ms(s.outside_ms)} ms per step ({fmt.pct(s.outside_pct)} of "
            f"the {fmt.ms(s.step_ms)} ms step, its graphs' own calls the other {fmt.ms(s.graphs_ms)} "
            f"ms; the step and each graph timed in turns in one process, {_rounds(s)}): "
            f"{_eager_work(r)}.{_turns_load(r)}"))
    elif s.rounds:
        doc.paragraph(
            f"outside the graphs: not measurable: the graphs' own calls took {fmt.ms(s.graphs_ms)} "
            f"ms, more than the {fmt.ms(s.step_ms)} ms step timed in turns with them"
            f"{_turns_speed(r, s)}; max gain counts no time outside the graphs."
            f"{_turns_load(r, 'each block met its own stalls')}"
        )
    elif s.outside_ms >= 0:
        doc.paragraph(
            f"outside the graphs: {fmt.ms(s.outside_ms)} ms per step ({fmt.pct(s.outside_pct)} of "
            f"the {fmt.ms(s.step_ms)} ms step timed on the model, less the sum of {frame}, "
            f"{fmt.ms(s.graphs_ms)} ms): {_eager_work(r)}."
        )
    else:
        doc.paragraph(
            f"outside the graphs: not measurable: the {frame} sum to {fmt.ms(s.graphs_ms)} ms, more "
            f"than the {fmt.ms(s.step_ms)} ms step timed on the model (the graphs' own harnesses "
            "ran slower than inside the model)."
        )
