"""The compiled graphs of one run profiled: each graph measured in a profiling worker (in one
or more processes, each its share of the windows) and analysed as its answer lands."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..core import errors
from ..core.analysis import analyze_profile, save_profile
from ..core.call_sizes import chosen
from ..core.devices import DEVICE, backend
from ..core.processes import merge_responses
from ..core.replay_plan import plan as replay_plan
from ..core.results import GraphResult
from ..core.rundir import (
    CACHE_DIR,
    LAUNCH_TRACE_FILE,
    LOGS_DIR,
    PIPELINED_TRACE_FILE,
    TRACE_FILE,
)
from ..core.step import NOT_PROFILED
from ..core.vocab import Status
from . import device as dev
from .batch import BatchItem, Standby, run_batch
from .capture import measuring_env
from .graph_sources import GraphSource
from .rundir import record_inputs
from .settings import RunSettings
from .standbys import PROFILE_WORKER, process_shares
from .window_plan import MAX_WINDOWS_S


def profile_request(
    src: GraphSource,
    settings: RunSettings,
    *,
    preload: str | None = None,
    mode: str = "",
    torch_values: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The profiling worker's request for one graph. ``preload``: a model file the worker
    imports first (custom ops it registers are then there for the module). ``mode``: the
    run's compile mode (a CUDA-graph mode has the graph replayed from a CUDA graph, as it
    ran); ``torch_values``: the model's precision/backend settings, applied in the worker
    before the module loads."""
    g = src.graph
    gdir = src.module_path.parent
    on_device = backend(g.device).timeline == DEVICE
    text = src.module_path.read_text(errors="replace")
    plan = _cuda_graph_plan(g, mode, src.cudagraph_skip, text, src.cudagraph_state)
    return {
        "module": str(src.module_path),
        "device": g.device,
        "iterations": settings.iterations,
        "trace": str(gdir / TRACE_FILE),
        "preload": preload,
        "windows": settings.windows,
        "torch_settings": torch_values,
        "cuda_graph": bool(g.cuda_graphs),
        "replay_plan": plan,
        "launch_trace": str(gdir / LAUNCH_TRACE_FILE) if g.cuda_graphs else None,
        "pipelined_trace": str(gdir / PIPELINED_TRACE_FILE) if on_device else None,
        "sizes": chosen(text, settings.sizes, g.call_sizes),
    }


def take_response(src: GraphSource, run_dir: Path, data: dict[str, Any] | errors.BenchError) -> GraphResult:
    """Save what the worker measured for one graph, raw, then analyse it (``core/analysis.py``);
    or record why it failed: status failed / timeout, never raised."""
    g = src.graph
    try:
        if isinstance(data, errors.BenchError):
            raise data
        save_profile(src.module_path.parent, g, data)
        record_inputs(run_dir, src.module_path.parent)  # the answer and the traces it names, as kept
        return analyze_profile(run_dir, g, data)
    except errors.WorkerTimeout as e:
        g.status, g.error = Status.TIMEOUT, str(e)
    except errors.BenchError as e:
        g.status, g.error = Status.FAILED, str(e).splitlines()[0]
    return g


def profile_graphs(
    sources: list[GraphSource],
    run_dir: Path,
    settings: RunSettings,
    *,
    preload: str | None = None,
    mode: str = "",
    torch_values: dict[str, Any] | None = None,
    on_start: Callable[[GraphSource, int], None] = lambda s, p: None,
    on_done: Callable[[GraphSource, GraphResult], None] = lambda s, g: None,
    cache_dir: Path | None = None,
    standbys: list[Standby] | tuple[()] = (),
) -> list[GraphResult]:
    """Profile every graph in ONE worker (torch and the model file imported once), each
    analysed as soon as its response lands. A graph that crashes or hangs the worker is
    recorded as failed (or timed out; ``settings.timeout`` is per graph) and a new worker
    takes the graphs after it: nothing measured is lost.

    The windows are shared among ``settings.processes`` such workers, one after the other
    (``core/processes.py``): the first answers every graph; each next one profiles the graphs
    that were measured again, for as many iterations, and a graph is analysed again from the
    fastest window of all. ``on_start(source, process)`` counts processes from 0; ``on_done``
    runs once per graph and process, with the graph's figures so far."""
    shares = process_shares(settings)
    requests = {
        s.graph.id: profile_request(s, settings, preload=preload, mode=mode, torch_values=torch_values)
        for s in sources
    }
    passes = _Passes(sources, run_dir, on_done)  # after the requests labelled each graph
    env = measuring_env(cache_dir or run_dir / CACHE_DIR)
    for p, windows in enumerate(shares):
        # the fastest machine-speed reading of the workers before; the run's own workers on standby
        extra = {"speed_reference_s": passes.speed_reference(), "ours": [s.proc.pid for s in standbys]}
        items = [
            BatchItem(gid, _request_for(requests[gid], p, windows, sum(shares), passes.first(gid)) | extra)
            for gid in requests
            if p == 0 or passes.first(gid) is not None
        ]
        if p > 0 and not items:
            break
        try:
            run_batch(
                PROFILE_WORKER,
                items,
                timeout=settings.timeout,
                env=env,
                log_path=run_dir / LOGS_DIR / "profile.log",
                echo=settings.echo,
                on_start=lambda key, p=p: on_start(passes.by_id[key], p),
                on_done=lambda key, data, p=p: passes.take(key, p, data),
                standby=standbys[p] if p < len(standbys) else None,
            )
        finally:
            if p > 0:
                for s in sources:
                    _discard(s.module_path.parent, p)
    return [passes.results[s.graph.id] for s in sources if s.graph.id in passes.results]


class _Passes:
    """What the processes answered for each graph, and its figures from all of them so far."""

    def __init__(self, sources: list[GraphSource], run_dir: Path,
                 on_done: Callable[[GraphSource, GraphResult], None]) -> None:
        self.by_id = {s.graph.id: s for s in sources}
        self.blank = {s.graph.id: copy.deepcopy(s.graph) for s in sources}
        self.answers: dict[str, list[dict[str, Any]]] = {}
        self.results: dict[str, GraphResult] = {}
        self.run_dir, self.on_done = run_dir, on_done

    def speed_reference(self) -> float | None:
        refs = [a.get("speed_reference_s") for ans in self.answers.values() for a in ans]
        refs = [r for r in refs if r]
        return min(refs) if refs else None

    def first(self, key: str) -> dict[str, Any] | None:
        """The first process's answer for a graph it measured (None: it failed)."""
        return (self.answers.get(key) or [None])[0]

    def take(self, key: str, p: int, data: dict[str, Any] | errors.BenchError) -> None:
        src = self.by_id[key]
        if p == 0:
            if not isinstance(data, errors.BenchError):
                self.answers[key] = [data]
            self.results[key] = take_response(src, self.run_dir, data)
        elif not isinstance(data, errors.BenchError):  # else it keeps what was measured before
            self.answers[key].append(data)
            merged, kept = merge_responses(self.answers[key])
            _keep_files(src.module_path.parent, p, kept == p)
            fresh = replace(src, graph=copy.deepcopy(self.blank[key]))
            self.results[key] = take_response(fresh, self.run_dir, merged)
        self.on_done(src, self.results[key])


# The trace files a profiling process writes, each named apart for the processes after the first.
_TRACES = (
    ("trace", TRACE_FILE),
    ("launch_trace", LAUNCH_TRACE_FILE),
    ("pipelined_trace", PIPELINED_TRACE_FILE),
)


def _process_file(name: str, p: int) -> str:
    return name if p == 0 else f"p{p}-{name}"


def _request_for(request: dict[str, Any], p: int, windows: int, total: int,
                 first: dict[str, Any] | None) -> dict[str, Any]:
    """Process ``p``'s request for a graph: its share of the ``total`` windows and of the time
    they may take, its own trace files, and after the first process the first one's iteration
    count (every window alike)."""
    out = {**request, "windows": windows, "windows_budget_s": MAX_WINDOWS_S * windows / total}
    if p > 0 and first is not None:
        out["iterations"] = first.get("iterations") or request.get("iterations")
        for key, name in _TRACES:
            if request.get(key):
                out[key] = str(Path(request[key]).with_name(_process_file(name, p)))
    return out


def _keep_files(gdir: Path, p: int, kept: bool) -> None:
    """Process ``p``'s trace files in place of the kept ones where its window is kept, else gone."""
    for _, name in _TRACES:
        path = gdir / _process_file(name, p)
        if kept and path.exists():
            path.replace(gdir / name)
    _discard(gdir, p)


def _discard(gdir: Path, p: int) -> None:
    for _, name in _TRACES:
        (gdir / _process_file(name, p)).unlink(missing_ok=True)


def _cuda_graph_plan(g: GraphResult, mode: str, skip: str | None, text: str | None = None,
                     state: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """Whether the run's mode put this graph under CUDA graphs, how (partitions, the eager work
    between them, the inputs it copies), and why not where it left it out: from the module's
    ``text``, torch's recorded ``state`` and its logged ``skip`` (``core/replay_plan.py``; with
    no text, from the log alone). The worker's plan, None when the mode uses no CUDA graphs."""
    if not mode or not dev.uses_cuda_graphs(g.device, mode):
        return None
    if text is None:
        g.cuda_graphs = skip is None
        if skip is not None:
            g.cuda_graphs_note = f"torch.compile left it out of CUDA graphs: {skip}"
        return None
    p = replay_plan(text, True, state, skip)
    g.cuda_graphs, g.how_it_ran = p.graphed, p.how_it_ran()
    if not p.graphed:
        unlogged = "" if p.logged else " (torch logged nothing)"
        g.cuda_graphs_note = f"torch.compile left it out of CUDA graphs: {p.reason}{unlogged}"
    return p.request()


def not_profiled(sources: list[GraphSource], graphs: list[GraphResult]) -> str | None:
    """The line a run stopped before some of its graphs were profiled keeps in its errors,
    naming them (``not profiled: 0-backward``); None where every graph was."""
    done = {g.id for g in graphs}
    left = [s.graph.id for s in sources if s.graph.id not in done]
    return NOT_PROFILED + ", ".join(left) if left else None
