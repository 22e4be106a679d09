"""The compiled graphs of one run: copied into the run directory, labelled, and each
profiled in a worker and analysed."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..core import errors, subgraphs
from ..core.analysis import analyze_profile, save_profile
from ..core.call_sizes import chosen
from ..core.compiles import compile_name
from ..core.devices import DEVICE, backend
from ..core.modparse import ModuleInfo, read_module, role_of
from ..core.processes import merge_responses
from ..core.replay_plan import plan as replay_plan
from ..core.results import GraphResult
from ..core.rundir import (
    CACHE_DIR,
    CALL_INPUTS_DIR,
    CALL_INPUTS_FILE,
    KERNELS_DIR,
    LAUNCH_TRACE_FILE,
    LOGS_DIR,
    MODULE_FILE,
    MODULES_LOG,
    PIPELINED_TRACE_FILE,
    SOURCES_FILE,
    SOURCES_LOG,
    TRACE_FILE,
    graph_dir,
)
from ..core.source_store import AOT_ID, read_log
from ..core.step import NOT_PROFILED
from ..core.vocab import Role, Status
from . import cudagraph_state
from . import device as dev
from .batch import BatchItem, Standby, run_batch
from .capture import measuring_env
from .dynamo_frame import CODE_KEY
from .rundir import copy_atomic, link_or_copy, record_digests, record_inputs
from .settings import RunSettings
from .standbys import PROFILE_WORKER, process_shares
from .trace_log import COMPILED_AUTOGRAD
from .window_plan import MAX_WINDOWS_S

ROLE_ORDER = {Role.FORWARD: 0, Role.INFERENCE: 1, Role.BACKWARD: 2}


@dataclass
class GraphSource:
    graph: GraphResult
    module_path: Path  # the copy inside the run directory
    info: ModuleInfo
    kernel_files: dict[str, str]  # kernel name -> path relative to the run directory
    cudagraph_skip: str | None = None  # why torch.compile left it out of CUDA graphs (its log)
    cudagraph_state: dict[str, Any] | None = None  # torch's own state of it (runner/cudagraph_state.py)
    sources: dict[str, Any] | None = None  # what it was made from (runner/sources.py)
    origin: str = ""  # the module as Inductor wrote it (the compile worker's path)


def collect_graphs(
    modules: list[dict[str, Any]],
    run_dir: Path,
    default_device: str,
    left_out: list[dict[str, Any]] | None = None,
) -> list[GraphSource]:
    """Copy each compiled module (and the Triton kernel files it names) into the run
    directory and label it with its frame / compile id and role. Autotuning subgraphs
    (``core/subgraphs.py``: flagged by the compile worker, or recognised from the module's
    text) are not graphs of the model: they are left out, and appended to ``left_out`` with
    ``subgraph: true`` and the reason."""
    sources: list[GraphSource] = []
    used: set[str] = set()
    records = read_log(run_dir / SOURCES_LOG)
    states = _cudagraph_states(run_dir / MODULES_LOG)
    record_inputs(run_dir)  # the steps the compile worker profiled
    for m in modules:
        path = Path(m["path"])
        if not path.exists():
            continue
        marked = subgraphs.mark(dict(m), path.read_text(errors="replace"))
        if marked.get(subgraphs.SUBGRAPH_KEY):
            if left_out is not None:
                left_out.append(marked)
            continue
        record = records.get(m["path"])
        sources.append(_collect(m, run_dir, default_device, used, record))
        sources[-1].cudagraph_state = states.get(cudagraph_state.text_sha(path.read_text(errors="replace")))
        sources[-1].sources = _save_record(record, sources[-1].module_path.parent)
    sources.sort(
        key=lambda s: (
            s.graph.frame_id if s.graph.frame_id is not None else 1 << 30,
            s.graph.frame_compile_id or 0,
            ROLE_ORDER.get(s.graph.role, 3),
        )
    )
    _share_code([s.graph for s in sources])
    return sources


def _share_code(graphs: list[GraphResult]) -> None:
    """A graph compiled with no Dynamo frame on the stack (a backward, at the first backward)
    takes the code of the graph of the same compile (frame id and compile id)."""
    code = {(g.frame_id, g.frame_compile_id): g.compiled_from for g in graphs if g.compiled_from}
    for g in graphs:
        if g.compiled_from is None and g.frame_id is not None:
            g.compiled_from = code.get((g.frame_id, g.frame_compile_id))


def _collect(m: dict[str, Any], run_dir: Path, default_device: str, used: set[str],
             record: dict[str, Any] | None = None) -> GraphSource:
    src = Path(m["path"])
    info = read_module(src)
    aot_id = (record or {}).get(AOT_ID)
    if info.role == Role.UNKNOWN and aot_id:  # a C++ wrapper's module says none
        info.role = role_of(str(aot_id))
    autograd = bool(m.get(COMPILED_AUTOGRAD))  # compiled autograd's backward: AOT's inference
    info.role = Role.BACKWARD if autograd and info.role == Role.INFERENCE else info.role
    gid = _graph_id(m, info, used)
    gdir = graph_dir(run_dir, gid)
    (gdir / KERNELS_DIR).mkdir(parents=True, exist_ok=True)
    dst = gdir / MODULE_FILE
    copy_atomic(src, dst)
    kernel_files = {}
    for k in info.kernels.values():
        if k.kernel_path and Path(k.kernel_path).exists():
            kdst = gdir / KERNELS_DIR / f"{k.name}.py"
            copy_atomic(k.kernel_path, kdst)
            kernel_files[k.name] = str(kdst.relative_to(run_dir))
    copied = [dst, *(run_dir / f for f in kernel_files.values())]
    records = run_dir / CALL_INPUTS_DIR  # its first call's, and at each other size's (call_inputs.py)
    for record in [records / f"{src.stem}.pt", *sorted(records.glob(f"{src.stem}.*.pt"))]:
        if record.exists():
            mine = gdir / (Path(CALL_INPUTS_FILE).stem + record.name[len(src.stem):])
            link_or_copy(record, mine)
            copied.append(mine)
    record_digests(run_dir, copied)
    g = GraphResult(
        id=gid,
        role=info.role,
        aot_id=info.aot_id,
        frame_id=m.get("frame_id"),
        frame_compile_id=m.get("frame_compile_id"),
        compiled_from=m.get(CODE_KEY),
        compiled_autograd=autograd,
        module=str(dst.relative_to(run_dir)),
        device=info.device or default_device,
    )
    return GraphSource(g, dst, info, kernel_files, m.get("cudagraph_skip"), origin=str(m["path"]))


def _cudagraph_states(log: Path) -> dict[str, dict[str, Any]]:
    """module text SHA-256 -> torch's CUDA-graph state of its graph, from the modules log."""
    lines = []
    if log.exists():
        for line in log.read_text().splitlines():
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a torn last line
    return cudagraph_state.states_by_sha([ln for ln in lines if isinstance(ln, dict)])


def _save_record(record: dict[str, Any] | None, gdir: Path) -> dict[str, Any] | None:
    """The module's lowering record beside its copy (``sources.json``), for re-analysis."""
    if record is not None:
        (gdir / SOURCES_FILE).write_text(json.dumps(record))
    return record


def _graph_id(m: dict[str, Any], info: ModuleInfo, used: set[str]) -> str:
    frame = m.get("frame_id")
    head = compile_name(frame if frame is not None else info.aot_id.split("_", 1)[0] or "g",
                        m.get("frame_compile_id"))
    gid, n = f"{head}-{info.role}", 2
    while gid in used:
        gid = f"{head}-{info.role}-{n}"
        n += 1
    used.add(gid)
    return gid


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
