"""Several traces of one process. torch.profiler with a ``schedule`` and
``tensorboard_trace_handler`` writes one file per profiler cycle
(``<host>_<pid>.<ns>.pt.trace.json``), and one more, with no op in it, when the profiler exits
between cycles. Such files are one process's cycles, one after another, not ranks: none names
a rank, and all name one host and one process. Each is analysed as the single trace it is."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .analyze import analyze_file
from .analyze_result import AnalyzeResult
from .columns import ITERATION_MARKER
from .cut_short import every_one_cut
from .errors import CutShort, NothingProfiled, TimesLost
from .ns_figures import ns_json
from .ranks import rank_of
from .rundir import BREAKDOWN_FILE
from .trace_files import trace_head

SCHEMA = "inductor-bench/analyze-cycles"
GRAPHS_SCHEMA = "inductor-bench/analyze-graph-traces"
SCHEMA_VERSION = 1
_PID = re.compile(r'"pid"\s*:\s*"?(\d+)')
_HOST = re.compile(r'"host_name"\s*:\s*"((?:[^"\\]|\\.)*)"')
_BASE_NS = re.compile(r'"baseTimeNanoseconds"\s*:\s*(\d+)')
_HANDLER_NAME = re.compile(r"^(?P<host>.+)_(?P<pid>\d+)\.(?P<ns>\d{10,})\.pt\.trace\.json(?:\.gz)?$")


@dataclass(frozen=True)
class Origin:
    """The process a trace was recorded in, and when its profiler cycle began."""

    host: str | None
    pid: int | None
    began_ns: int | None  # the handler's file-name time, else the trace's baseTimeNanoseconds


def origin_of(path: Path) -> Origin:
    """The host and process from the trace's header and first event (kineto writes the
    process's metadata first), else from the file name ``tensorboard_trace_handler`` gives it;
    when the cycle began from that name, else from the header (whose baseTimeNanoseconds
    every cycle of a process shares)."""
    head = trace_head(path)
    named = _HANDLER_NAME.match(path.name)
    host, pid, base = _HOST.search(head), _PID.search(head), _BASE_NS.search(head)
    return Origin(
        host=host.group(1) if host else named and named["host"],
        pid=int(pid.group(1)) if pid else named and int(named["pid"]),
        # the handler's time first: a process's cycles share one baseTimeNanoseconds
        began_ns=int(named["ns"]) if named else base and int(base.group(1)),
    )


def one_process(paths: list[Path]) -> bool:
    """True for two traces or more from one host and process that name no rank, or one rank
    and were written at different times (one rank's cycles, not one trace given twice)."""
    ranks = {rank_of(p) for p in paths}
    if len(paths) < 2 or len(ranks) > 1:
        return False
    origins = [origin_of(p) for p in paths]
    if ranks != {None} and len(set(origins)) < len(origins):
        return False
    return all(o.pid is not None for o in origins) and len({(o.host, o.pid) for o in origins}) == 1


def graph_trace(path: Path) -> bool:
    """Whether inductor-bench's own profile wrote the trace (a run directory's
    ``graphs/<graph>/trace.json.gz``): its iterations marked with ``ITERATION_MARKER``, whose
    first range is its first event (the worker opens the profiler, then the loop), and no
    ``ProfilerStep#``."""
    head = trace_head(path)
    return f'"{ITERATION_MARKER}"' in head and '"ProfilerStep#' not in head


def graph_traces(paths: list[Path]) -> bool:
    """True for two traces or more among which one is a graph's trace inductor-bench profiled:
    each graph is profiled in a profiler session of its own, one after another (a forward, then
    its backward), so such traces are no ranks of one run, nor one loop's cycles: each is read
    alone."""
    return len(paths) > 1 and any(graph_trace(p) for p in paths)


def run_dirs(paths: list[Path]) -> list[str]:
    """The run directories (a ``breakdown.json`` beside ``graphs/``) the traces are graphs of."""
    found = [p.parents[2] for p in paths if len(p.parents) > 2 and p.parent.parent.name == "graphs"
             and (p.parents[2] / BREAKDOWN_FILE).is_file()]
    return list(dict.fromkeys(str(d) for d in found))


@dataclass
class CyclesResult:
    """One process's profiler cycles in the order they ran, each analysed alone; ``skipped``:
    the cycles with nothing profiled. With ``graphs``, the traces of graphs inductor-bench
    profiled (``graph_traces``), in the order given, and the run directories they are of."""

    cycles: list[AnalyzeResult]
    skipped: list[str] = field(default_factory=list)
    not_traces: list[str] = field(default_factory=list)  # a directory's JSON files that are no trace
    cut_short: dict[str, str] = field(default_factory=dict)  # traces cut short among several: why
    times_lost: list[str] = field(default_factory=list)  # cycles whose device events carry no times
    # of those, each whose reason is not the profiler's loss (ts 0, dur 0): path -> the reason
    times_lost_why: dict[str, str] = field(default_factory=dict)
    graphs: bool = False
    run_dirs: list[str] = field(default_factory=list)
    schema: str = SCHEMA
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        if self.graphs:
            return {"schema": GRAPHS_SCHEMA, "schema_version": self.schema_version,
                    "traces": [c.to_dict() for c in self.cycles], "run_dirs": self.run_dirs,
                    "skipped": self.skipped, "not_traces": self.not_traces, "cut_short": self.cut_short,
                    "times_lost": self.times_lost,
                    "times_lost_why": self.times_lost_why}
        return {
            "schema": self.schema,
            "schema_version": self.schema_version,
            "cycles": [c.to_dict() for c in self.cycles],
            "skipped": self.skipped,
            "not_traces": self.not_traces,
            "cut_short": self.cut_short,
            "times_lost": self.times_lost,
            "times_lost_why": self.times_lost_why,
        }

    def to_json(self) -> str:
        return ns_json(self.to_dict())


def analyze_cycles(paths: list[Path], graphs: bool = False) -> CyclesResult:
    """Each cycle's analysis, in the order the cycles began (then by file name); with
    ``graphs``, each graph trace's, in the order given."""
    ordered = list(paths) if graphs else sorted(paths, key=lambda p: (origin_of(p).began_ns or 0, p.name))
    cycles: list[AnalyzeResult] = []
    skipped: list[str] = []
    lost: list[tuple[str, TimesLost]] = []
    cut: dict[str, str] = {}
    for p in ordered:
        try:
            cycles.append(analyze_file(p))
        except NothingProfiled:
            skipped.append(str(p))
        except TimesLost as e:  # a cycle the profiler lost the times of: the others stand
            lost.append((str(p), e))
        except CutShort as e:  # found cut as it was read: the others stand
            cut[str(p)] = e.why
    if len(cut) == len(ordered):
        raise every_one_cut(ordered)
    if not cycles and lost:
        raise lost[0][1]
    if not cycles:
        raise NothingProfiled.in_any_of(len(paths), cut=len(cut))
    return CyclesResult(cycles=cycles, skipped=skipped, cut_short=cut, times_lost=[p for p, _ in lost],
                        times_lost_why={p: e.why for p, e in lost if e.why}, graphs=graphs,
                        run_dirs=run_dirs(paths) if graphs else [])
