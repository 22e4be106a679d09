"""`inductor-bench analyze TRACE.json[.gz]`: the breakdown of any trace torch.profiler wrote;
`inductor-bench analyze DIR_OR_TRACES...`: several ranks' traces side by side."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer

from ..core.analyze import analyze_file
from ..core.analyze_ranks import analyze_ranks
from ..core.analyze_result import AnalyzeResult
from ..core.rank_cycles import RankCyclesResult, analyze_rank_cycles, repeats_ranks
from ..core.ranks import RanksResult
from ..core.trace_files import TraceFiles as FoundTraces
from ..core.trace_files import trace_files
from ..core.trace_sets import CyclesResult, analyze_cycles, graph_traces, one_process
from ..render.analyze import DEFAULT_TOP, render_analyze
from ..render.analyze_cycles import render_cycles
from ..render.ranks import render_rank_cycles, render_ranks
from . import options as o
from .exit_status import failure_first
from .output import emit
from .progress import note

AnyResult = TypeVar("AnyResult", AnalyzeResult, CyclesResult, RankCyclesResult, RanksResult)

TraceFiles = Annotated[
    list[Path],
    typer.Argument(
        parser=o.a_path,
        metavar="TRACE",
        help="A kineto chrome trace (.json or .json.gz) written by torch.profiler; several (one "
        "per rank), or a directory holding them, for the per-rank view and the stragglers; one "
        "process's profiler cycles (a tensorboard_trace_handler directory): each cycle in turn; "
        "several ranks' cycles: each cycle's ranks in turn; an inductor-bench run's graph traces "
        "(RUN/graphs/*/trace.json.gz): each alone."
    ),
]

Top = Annotated[int, typer.Option(
    "--top", min=1,
    help="Rows shown per ranked table: the top kernels (a CPU-only trace's ops), the named ranges "
    "(per rank too) and the GEMMs by shape; the JSON holds them all.")]


def analyze(
    traces: TraceFiles,
    fmt: o.FormatOpt = o.Format.text,
    json_out: o.JsonOut = None,
    top: Top = DEFAULT_TOP,
    html_out: o.HtmlOut = None,
) -> None:
    """Break down any profiler trace, no torch needed: per step, busy and idle per device,
    time by kernel category, and the top kernels with the op that launched them. Given
    several ranks' traces: per rank and step, compute, communication and their overlap,
    and the straggler of each step. Several traces of one process (a profiler schedule's
    cycles, as tensorboard_trace_handler writes them to a directory): each cycle in turn;
    a cycle with nothing profiled is skipped and named. Several ranks' cycles (each rank
    once per cycle): each cycle's ranks in turn. The graph traces of an inductor-bench run
    (no ranks: each graph profiled on its own): each alone, in the order given."""
    o.one_stdout(fmt, json_out, html_out)
    json_text, document = analysed(trace_files(traces), top)
    with failure_first(None):  # a stop or a full disk as it is written: said as every command says it
        emit(json_text, document, fmt, json_out, html_out)


def analysed(found: FoundTraces, top: int) -> tuple[str, Callable[[str], str]]:
    """The analysis of the traces ``found``, as its JSON and its report in a format: one trace;
    one process's cycles or a run's graph traces; several ranks' cycles; several ranks. The
    traces cut short among them (found before they are read, or as they are) are left out,
    named on stderr and in the report; left with one, the report is that trace's."""
    for path, why in found.cut.items():
        note(f"inductor-bench: {path}: left out, {why}")
    result = _read(found)
    for path, why in result.cut_short.items():  # found cut short as they were read
        note(f"inductor-bench: {path}: left out, {why}")
    rest = [f for f in found.files if str(f) not in result.cut_short]
    if len(rest) == 1 and not isinstance(result, AnalyzeResult):
        cut, result = result.cut_short, analyze_file(rest[0])
        result.cut_short = cut
    result = _set_aside(result, found)
    return result.to_json(), lambda f: _render(result, f, top)


def _read(found: FoundTraces) -> AnalyzeResult | CyclesResult | RankCyclesResult | RanksResult:
    """The traces ``found`` read as the set they are (one trace, cycles, ranks' cycles, ranks)."""
    files = found.files
    if len(files) == 1:  # a file, or a directory holding one trace
        return analyze_file(files[0])
    if (graphs := graph_traces(files)) or one_process(files):
        return analyze_cycles(files, graphs=graphs)
    if repeats_ranks(files):
        return analyze_rank_cycles(files, cut_before=list(found.cut))
    return analyze_ranks(files)


def _render(result: AnalyzeResult | CyclesResult | RankCyclesResult | RanksResult, fmt: str, top: int) -> str:
    if isinstance(result, AnalyzeResult):
        return render_analyze(result, fmt, top=top)
    if isinstance(result, CyclesResult):
        return render_cycles(result, fmt, top=top)
    if isinstance(result, RankCyclesResult):
        return render_rank_cycles(result, fmt, top=top)
    return render_ranks(result, fmt, top=top)


def _set_aside(result: AnyResult, found: FoundTraces) -> AnyResult:
    """``result`` naming the files left out of it: a directory's JSON files that are no
    trace, and the traces cut short (before they were read, then as they were)."""
    result.not_traces = [str(f) for f in found.not_traces]
    result.cut_short = {**{str(f): why for f, why in found.cut.items()}, **result.cut_short}
    return result
