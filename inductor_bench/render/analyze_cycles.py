"""Several traces each analysed alone, one after another: one process's profiler cycles, or
the traces of graphs inductor-bench profiled (``core/trace_sets.py``)."""

from __future__ import annotations

from pathlib import Path

from ..core.analyze import WHOLE_TRACE
from ..core.analyze_result import AnalyzeResult
from ..core.columns import ITERATION_MARKER
from ..core.rerun import tool_command
from ..core.steps import ITERATION_STEP
from ..core.trace_sets import CyclesResult
from .analyze import DEFAULT_TOP, analysis
from .analyze_facts import skipped_facts
from .analyze_top import step_code
from .doc import TEXT, Doc, new_doc


def render_cycles(c: CyclesResult, fmt_name: str = TEXT, *, top: int = DEFAULT_TOP) -> str:
    """One process's profiler cycles (or graph traces), each analysed alone, one after another;
    the traces with nothing profiled named first."""
    doc = new_doc(fmt_name)
    skipped = skipped_facts(doc, c.skipped, c.not_traces, c.times_lost, c.times_lost_why,
                            cut_short=c.cut_short)
    n = len(c.cycles)
    if n == 1:
        title = f"inductor-bench analyze: {_name(c.cycles[0], c.graphs)}"
        analysis(doc, c.cycles[0], top, title, _graphs(doc, c) + skipped)
        return doc.render()
    what, each, item = (("graph traces, each alone", "Trace", "trace") if c.graphs
                        else ("profiler cycles of one process", "Profiler cycle", "cycle"))
    doc.title(f"inductor-bench analyze: {n} {what}")
    listed = [f"{item} {i}: {_name(r, c.graphs, doc)}, {_step_span(doc, r)}"
              for i, r in enumerate(c.cycles, 1)]
    doc.paragraph(*(doc.item(f) for f in _graphs(doc, c) + listed + skipped))
    for i, r in enumerate(c.cycles, 1):
        analysis(doc, r, top, f"{each} {i} of {n}: {_name(r, c.graphs, doc)}")
    return doc.render()


def _name(r: AnalyzeResult, graphs: bool, doc: Doc | None = None) -> str:
    """A cycle's file name; a graph trace's with its graph's directory (each is trace.json.gz)."""
    path = Path(r.trace)
    name = f"{path.parent.name}/{path.name}" if graphs and path.parent.name else path.name
    return doc.code(name) if graphs and doc is not None else name


def _graphs(doc: Doc, c: CyclesResult) -> list[str]:
    """Why graph traces are read one by one, and the command that shows their run."""
    if not c.graphs:
        return []
    runs = ", ".join(doc.code(tool_command("report", d)) for d in c.run_dirs) or \
        doc.code("inductor-bench report RUN_DIR")
    return [f"traces of graphs inductor-bench profiled (their {ITERATION_MARKER} ranges; no rank named): "
            "each graph is profiled in a profiler session of its own, one after another, so they are no "
            "ranks of one run and their iterations no steps in common: each trace is analysed alone, in "
            f"the order given; {runs} shows a run's graphs with its breakdown"]


def _step_span(doc: Doc, r: AnalyzeResult) -> str:
    first, last = step_code(doc, r.steps[0].name), step_code(doc, r.steps[-1].name)
    if r.steps[0].name == WHOLE_TRACE:
        return "no ProfilerStep# markers"
    if r.steps[0].name.startswith(f"{ITERATION_STEP} "):
        return f"{len(r.steps)} iteration{'' if len(r.steps) == 1 else 's'}"
    return first if len(r.steps) == 1 else f"{len(r.steps)} steps, {first} to {last}"
