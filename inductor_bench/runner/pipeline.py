"""One breakdown run, end to end: compile (worker, ``compile_run.py``) → profile each graph
(worker per graph) → analyse (in process, pure) → saved in a fresh run directory
(``core/rundir.py``). Whatever happens in the user's model, what was measured before the
failure is saved."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from ..core import compiles, errors, graph_breaks, modes, resize, subgraphs
from ..core.devices import HOST_BACKEND
from ..core.outside import outside_of
from ..core.processes import lost_windows
from ..core.results import BreakdownResult, CompileCache, GraphResult, PeakMemory, StepTurns, TorchSettings
from ..core.rundir import CACHE_DIR
from ..core.step_totals import listed_categories
from ..core.vocab import CompileMode, Status
from ..core.workload import WorkloadOptions, factory_lookalikes
from . import stop
from .cache import check_caches
from .compile_run import CompileOutcome, compile_workload, preload_path
from .graph_sources import GraphSource, collect_graphs
from .graphs import not_profiled, profile_graphs
from .presence import check_requested
from .rundir import header, new_run_dir, planned_run_dir, save_meta, save_result, writing
from .settings import RunSettings
from .standbys import process_shares


def new_result(opts: WorkloadOptions, run_dir: Path) -> BreakdownResult:
    return BreakdownResult(
        **header(opts, run_dir), mode=opts.mode, freezing=opts.freezing, script_args=list(opts.script_args)
    )


def _take_outcome(result: BreakdownResult, opts: WorkloadOptions, comp: CompileOutcome) -> None:
    """What the compile worker measured, into the result."""
    result.device = comp.device or result.device
    result.device_name, result.versions, result.script = comp.device_name, comp.versions, comp.script
    result.compile_s, result.script_stopped_s = comp.compile_s, comp.script_stopped_s
    result.graph_breaks, result.compiles = list(comp.graph_breaks or []), list(comp.compiles or [])
    result.mode = modes.of_script(comp.script_compiles, result.mode) if result.script else result.mode
    result.step_samples_ms = list(comp.step_samples_ms)
    if comp.step_profile:
        result.outside = outside_of(comp.step_profile)
    if comp.peak_memory_bytes is not None:
        result.peak_memory = PeakMemory(comp.peak_memory_bytes, comp.peak_memory_kind)
    if comp.torch_settings:
        result.torch_settings = TorchSettings(**comp.torch_settings)
    if comp.cache_dir:
        result.compile_cache = CompileCache.of_record(comp.cache_dir, comp.cache_shared, comp.fx_cache)
    if comp.error:
        result.errors.append(str(comp.error))


def step_turns(raw: dict[str, Any] | None, graph_of: dict[str, str]) -> StepTurns | None:
    """The compile worker's turns (blocks per module path, the step's first) per graph id, for
    the modules that became graphs (an autotuning subgraph found only now: the step never runs it)."""
    if not raw:
        return None
    if raw.get("error"):
        return StepTurns(error=str(raw["error"]))
    paths, blocks = raw.get("paths") or [], raw.get("blocks") or []
    if len(blocks) != len(paths) + 1:
        return StepTurns(error="the turns do not match the modules timed")
    keep = [i for i, p in enumerate(paths) if p in graph_of]
    graphs, kept = [graph_of[paths[i]] for i in keep], [blocks[0]] + [blocks[i + 1] for i in keep]
    return StepTurns(graphs=graphs, blocks=kept, load=raw.get("load"))


def breakdown_from_outcome(
    opts: WorkloadOptions,
    run_dir: Path,
    comp: CompileOutcome,
    settings: RunSettings,
    result: BreakdownResult | None = None,
    *,
    save: bool = True,
) -> tuple[BreakdownResult, errors.BenchError | None]:
    """Profile and analyse every graph a compile worker captured; fill ``result`` (a new one
    by default) and, with ``save``, save it in ``run_dir``. Returns it and the first error
    met (the compile's own error included)."""
    result = result or new_result(opts, run_dir)
    _take_outcome(result, opts, comp)
    left_out: list[dict[str, Any]] = []
    sources = collect_graphs(comp.modules, run_dir, comp.device or HOST_BACKEND.name, left_out)
    result.step_turns = step_turns(comp.step_turns, {s.origin: s.graph.id for s in sources})
    for s in sources:
        s.graph.calls = counted_calls(comp.graph_calls, s)
        s.graph.call_sizes = (comp.graph_sizes or {}).get(Path(s.origin).stem, [])
    result.subgraphs_left_out = [
        {"path": str(m.get("path", "")), "reason": str(m.get(subgraphs.REASON_KEY, ""))} for m in left_out
    ]
    first_error = comp.error
    if settings.sizes and sources and (size_error := _unknown_sizes(settings.sizes, sources)):
        first_error = first_error or size_error
        result.errors.append(str(size_error))
        sources = []  # nothing profiled at sizes other than the ones asked for
    if not sources and first_error is None:
        first_error = errors.WorkloadError(
            graph_breaks.nothing_compiled(opts.path, result.script, result.graph_breaks, comp.dynamo_graphs,
                                          factory_lookalikes(opts.path) if result.script else None,
                                          comp.script_compiles, comp.script_stopped_s,
                                          compiles.first_failure(result.compiles)))
        result.errors.append(str(first_error))
    if result.script and sources:
        result.device = sources[0].graph.device
    profile_error = _profile_all(opts, run_dir, comp, sources, result, settings)
    first_error = first_error or profile_error
    result.iterations = max((g.iterations for g in result.graphs), default=0)
    result.status = _status(result, first_error)
    if save:
        save_result(run_dir, result, settings.on_saved)
        save_meta(run_dir, opts, result, status=result.status)
    return result, first_error


def counted_calls(counts: dict[str, float] | None, src: GraphSource) -> float | None:
    """How many times the model called the graph (``runner/call_inputs.py``); None where not
    counted, or where torch ran it under CUDA graphs, whichever mode asked for them (a replay
    bypasses the call that is counted), not where it skipped them (on the host: its device)."""
    state = src.cudagraph_state or {}
    if counts is None or (state.get("cudagraphs_requested") and not state.get("disabled_cudagraphs_reason")):
        return None
    return counts.get(Path(src.origin).stem, 0.0)


def _unknown_sizes(wanted: dict[str, int], sources: list[GraphSource]) -> errors.UsageError | None:
    texts = {s.graph.id: s.module_path.read_text(errors="replace") for s in sources}
    why = resize.unknown_sizes(wanted, texts)
    return errors.UsageError(why) if why else None


def _profile_all(
    opts: WorkloadOptions,
    run_dir: Path,
    comp: CompileOutcome,
    sources: list[GraphSource],
    result: BreakdownResult,
    settings: RunSettings,
) -> errors.BenchError | None:
    """Profile every graph (``graphs.profile_graphs``: one worker for all, then again in each
    further process) into ``result.graphs``, each kept when analysed, replaced when measured
    faster; the first error met, if any; interrupted, the graphs not profiled named in errors."""
    mode = f"{opts.mode}: " if opts.mode != CompileMode.DEFAULT else ""
    prefix = f"{settings.model_label}:{opts.mode}: " if settings.model_label else mode  # compare's column
    preload = None if comp.script else preload_path(opts)
    first_error: errors.BenchError | None = None
    position = {s.graph.id: i for i, s in enumerate(sources, 1)}
    open_phases: dict[str, tuple[Any, dict[str, str]]] = {}

    def on_start(src: GraphSource, process: int) -> None:
        gid = src.graph.id
        again = f", again in fresh process {process + 1}" if process else ""
        cm = settings.progress.phase(f"{prefix}profiling graph {gid} [{position[gid]}/{len(sources)}]{again}")
        open_phases[gid] = (cm, cm.__enter__())

    def on_done(src: GraphSource, g: GraphResult) -> None:
        nonlocal first_error
        cm, ph = open_phases.pop(g.id, (None, {}))
        within = f" in {n} processes" if (n := len(set(g.window_process))) > 1 else ""  # all so far
        ph["done"] = (f"{len(g.windows_ms) or 1} x {g.iterations} iterations{within}, {_kernels(g)}" if g.ok
                      else f"{g.status}: {g.error}")
        if cm is not None:
            cm.__exit__(None, None, None)
        if any(old.id == g.id for old in result.graphs):  # measured again in another process
            result.graphs = [g if old.id == g.id else old for old in result.graphs]
            return
        result.graphs.append(g)
        if not g.ok:
            result.errors.append(f"graph {g.id}: {g.error}")
            first_error = first_error or _graph_error(g.id, g.status, g.error or "")

    try:
        profile_graphs(
            sources,
            run_dir,
            settings,
            preload=preload,
            mode=opts.mode,
            torch_values=result.torch_settings.values if result.torch_settings else None,
            on_start=on_start,
            on_done=on_done,
            cache_dir=Path(comp.cache_dir) if comp.cache_dir else run_dir / CACHE_DIR,
            standbys=comp.standbys,
        )
    finally:  # a phase still open (interrupted mid-graph, or never reported) ends as the call did
        for cm, _ in open_phases.values():
            cm.__exit__(*sys.exc_info())
        if sys.exc_info()[0]:  # stopped: what it had not measured yet, in its errors
            processes = len(process_shares(settings))
            lost = (not_profiled(sources, result.graphs), lost_windows(result.graphs, processes))
            result.errors += [x for x in lost if x]
    return first_error


def _graph_error(graph_id: str, status: str, error: str) -> errors.BenchError:
    if status == Status.TIMEOUT:
        return errors.WorkerTimeout(error)
    return errors.WorkerError(f"graph {graph_id}: {error}")


@writing()  # its run directory held as being written until it returns (or the command's block ends)
def run_breakdown(
    opts: WorkloadOptions,
    settings: RunSettings | None = None,
    *,
    out: Path | str | None = None,
    root: Path | str = "runs",
) -> tuple[BreakdownResult, Path, errors.BenchError | None]:
    """The whole breakdown. Returns the result (also saved in the run directory), the run
    directory, and the first error met (None when everything was measured). ``settings.steps``
    steady-state steps of the real model are timed after the compile."""
    settings = settings or RunSettings()
    opts.validate()
    if opts.mode == CompileMode.EAGER:
        raise errors.UsageError("--mode eager compiles nothing to break down; "
                                "use `compare` for an eager baseline")
    check_requested(opts.device)  # before any worker or run directory, as is its cache's path
    check_caches(planned_run_dir(opts.name, opts.mode, root=root, out=out), fresh=settings.fresh_cache,
                 freezing=opts.freezing, device=opts.device, came_from="--out" if out else "--runs-dir")
    run_dir = new_run_dir(opts.name, opts.mode, root=root, out=out)
    started = time.time()
    result = new_result(opts, run_dir)
    save_meta(run_dir, opts, result, status=Status.RUNNING)
    first_error: errors.BenchError | None = None
    comp: CompileOutcome | None = None
    try:
        comp = compile_workload(opts, run_dir, settings, profile_after=True)
        result, first_error = breakdown_from_outcome(opts, run_dir, comp, settings, result, save=False)
    except KeyboardInterrupt:
        result.errors.append("interrupted")
        first_error = errors.Interrupted(f"interrupted; {_kept(result, run_dir)}")
    finally:  # saved once, here, whatever happened; a stop signal meanwhile waits for it
        with stop.saved_first(first_error, _kept(result, run_dir)):
            if comp is not None:
                comp.close()
            result.status = _status(result, first_error)
            result.elapsed_s = round(time.time() - started, 2)
            save_result(run_dir, result, settings.on_saved)
            save_meta(run_dir, opts, result, status=result.status)
    return result, run_dir, first_error


def _kept(result: BreakdownResult, run_dir: Path) -> str:
    """Where what a stopped run measured is saved, as its line says it."""
    return (f"what was measured is saved in {run_dir}" if result.measured()
            else f"no graph was measured; see {run_dir}")


def _status(result: BreakdownResult, err: errors.BenchError | None) -> str:
    if isinstance(err, errors.Interrupted):
        return Status.INTERRUPTED
    if not result.measured():
        return Status.FAILED
    return Status.PARTIAL if err is not None or any(not g.ok for g in result.graphs) else Status.OK


def _kernels(g: GraphResult) -> str:  # the rows the graph's kernel tables will list
    n = len(listed_categories(g))
    return f"{n} " + ("kernel or extern call" if n == 1 else "kernels and extern calls")
