"""One breakdown run, end to end: compile (worker) → profile each graph (worker per graph)
→ analyse (in process, pure) → saved in a fresh run directory (``core/rundir.py``). Whatever
happens in the user's model, what was measured before the failure is saved."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core import compiles, errors, graph_breaks, modes, resize, subgraphs
from ..core.devices import HOST_BACKEND
from ..core.outside import outside_of
from ..core.results import BreakdownResult, CompileCache, GraphResult, PeakMemory, StepTurns, TorchSettings
from ..core.rundir import CACHE_DIR, LOGS_DIR, MODULES_LOG, SOURCES_LOG, STEP_TRACE_FILE
from ..core.step_totals import listed_categories
from ..core.vocab import CompileMode, Status
from ..core.workload import SCRIPT_KIND, WorkloadOptions, factory_lookalikes
from . import cudagraph_log, stop
from .batch import Standby
from .cache import check_caches, run_cache
from .capture import inductor_env
from .compile_phase import named_on_timeout, phase_file
from .graph_sources import GraphSource, collect_graphs
from .graphs import not_profiled, profile_graphs
from .presence import check_requested, device_words
from .rundir import header, new_run_dir, planned_run_dir, save_meta, save_result, writing
from .settings import RunSettings
from .standbys import profile_standbys
from .worker import run_worker

COMPILE_WORKER = "inductor_bench.runner.capture"


@dataclass
class CompileOutcome:
    """What the compile worker reported (also used by ``compare``)."""

    device: str = ""
    device_name: str = ""
    versions: dict[str, str] = field(default_factory=dict)
    modules: list[dict[str, Any]] = field(default_factory=list)
    script: bool = False
    compile_s: float | None = None
    step_samples_ms: list[float] = field(default_factory=list)
    peak_memory_bytes: int | None = None
    peak_memory_kind: str = ""
    torch_settings: dict[str, Any] | None = None
    step_load: dict[str, Any] | None = None  # load from other processes while steps were timed
    step_turns: dict[str, Any] | None = None  # the step and each module in turns (runner/turns.py)
    step_profile: dict[str, Any] | None = None  # a few steps profiled (runner/step_profile.py)
    fx_cache: dict[str, Any] | None = None  # FX graph cache hits, misses, bypasses; kernels built
    dynamo_graphs: int | None = None  # the graphs Dynamo captured, whichever backend compiled them
    script_compiles: dict[str, Any] | None = None  # what a script asked to compile (runner/script_compiles)
    script_stopped_s: float | None = None  # --script-seconds stopped the script this long after it started
    graph_calls: dict[str, float] | None = None  # module -> its calls: per timed step (factory), all (script)
    graph_sizes: dict[str, list[dict[str, Any]]] | None = None  # module name -> GraphResult.call_sizes
    graph_breaks: list[dict[str, Any]] = field(default_factory=list)  # core/graph_breaks.py
    compiles: list[dict[str, Any]] = field(default_factory=list)  # core/compiles.py
    cache_dir: str = ""
    cache_shared: bool = False
    error: errors.BenchError | None = None
    standbys: list[Standby] = field(default_factory=list)  # the profiling workers, started before the compile

    def close(self) -> None:
        """Stop the standby profiling workers, those nothing used."""
        for standby in self.standbys:
            standby.close()


_REPORTED = (
    "device", "device_name", "versions", "script", "compile_s", "step_samples_ms", "peak_memory_bytes",
    "peak_memory_kind", "torch_settings", "step_load", "step_turns", "step_profile", "fx_cache",
    "dynamo_graphs", "graph_breaks", "compiles", "graph_calls", "graph_sizes", "script_compiles",
    "script_stopped_s")


def compile_workload(
    opts: WorkloadOptions, run_dir: Path, settings: RunSettings, *, profile_after: bool = False
) -> CompileOutcome:
    """Run the compile worker. Errors are kept in ``outcome.error`` with whatever modules
    were captured before them (read back from ``modules.jsonl``).

    With ``profile_after``, the profiling workers start now, on standby (``outcome.standbys``;
    ``outcome.close()`` stops those unused), and the compile worker waits for them to be ready
    before timing steps."""
    modules_log, log_path = run_dir / MODULES_LOG, run_dir / LOGS_DIR / f"compile-{opts.mode}.log"
    request = {
        "options": opts.to_dict(),
        "modules_log": str(modules_log), "log": str(log_path),  # the log: quoted by a script's error
        "sources_log": str(run_dir / SOURCES_LOG),
        "steps": settings.steps, "step_budget_s": settings.step_budget_s,
        "min_steps": settings.min_steps,
        "step_trace": str(run_dir / STEP_TRACE_FILE), "phase_file": str(phase_file(log_path)),
    }
    out = CompileOutcome()
    cache, shared = run_cache(run_dir, fresh=settings.fresh_cache, freezing=opts.freezing, device=opts.device)
    out.cache_dir, out.cache_shared = str(cache), shared
    if profile_after:
        out.standbys = profile_standbys(run_dir, settings, cache, _preload_path(opts))
        request["wait_ready"] = [s.ready_spec for s in out.standbys]
    label = "running" if opts.mode == CompileMode.EAGER else "compiling"
    try:
        # a script's own output: what a terminal shows meanwhile
        follow = str(log_path) if opts.kind == SCRIPT_KIND else None
        with settings.progress.phase(f"{label} {opts.file_and_args()} ({_describe(opts)})", follow) as ph, \
                named_on_timeout(phase_file(log_path), settings.timeout, opts.mode != CompileMode.EAGER, ph):
            data = run_worker(COMPILE_WORKER, request, timeout=settings.timeout, log_path=log_path,
                              env=inductor_env(cache, freezing=opts.freezing), echo=settings.echo)
            ph["done"] = f"{len(data.get('modules', []))} compiled module(s)"
    except errors.BenchError as e:
        out.error = e
        data = getattr(e, "partial", None) or {}
    except BaseException:  # Ctrl-C: no worker of ours is left running
        out.close()
        raise
    for k in _REPORTED:
        if data.get(k) is not None:
            setattr(out, k, data[k])
    out.modules = _read_modules_log(modules_log) or list(data.get("modules", []))
    return out


def _preload_path(opts: WorkloadOptions) -> str | None:
    """The model file the profiling worker imports first (a script is not: it would run)."""
    return None if opts.kind == SCRIPT_KIND else str(Path(opts.path).resolve())


def _describe(opts: WorkloadOptions) -> str:
    if opts.kind == SCRIPT_KIND:  # it chooses the rest itself
        stop = [f"stopped after {opts.script_seconds:g} s"] if opts.script_seconds else []
        return ", ".join(["a script", f"device {device_words(opts.device)}", f"mode {opts.mode}"]
                         + (["freezing"] if opts.freezing else []) + stop)
    parts = [
        "train" if opts.train else "inference",
        f"device {device_words(opts.device)}",
        f"mode {opts.mode}",
        opts.dtype + (" autocast" if opts.autocast else ""),
    ]
    if opts.batch_size:
        parts.append(f"batch {opts.batch_size}")
    if opts.freezing:
        parts.append("freezing")
    return ", ".join(parts)


def _read_modules_log(path: Path) -> list[dict[str, Any]]:
    """The modules the compile worker recorded, in order, each with the reason torch gave
    for not putting it under CUDA graphs (``cudagraph_skip``) where it gave one."""
    if not path.exists():
        return []
    mods, seen, lines = [], set(), []
    for line in path.read_text().splitlines():
        try:
            m = json.loads(line)
        except json.JSONDecodeError:
            continue  # a worker killed mid-write leaves at most one torn line
        lines.append(m)
        if m.get("path") and m["path"] not in seen:
            seen.add(m["path"])
            mods.append(m)
    skips = cudagraph_log.skips_by_order(lines)
    for m in mods:
        if m.get("order") in skips:
            m["cudagraph_skip"] = skips[m["order"]]
    return mods


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
    preload = None if comp.script else _preload_path(opts)
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
        result.errors += [x] if sys.exc_info()[0] and (x := not_profiled(sources, result.graphs)) else []
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
        kept = "what was measured is saved in" if result.measured() else "no graph was measured; see"
        first_error = errors.Interrupted(f"interrupted; {kept} {run_dir}")
    finally:  # saved once, here, whatever happened; a stop signal meanwhile waits for it
        with stop.shielded():
            if comp is not None:
                comp.close()
            result.status = _status(result, first_error)
            result.elapsed_s = round(time.time() - started, 2)
            save_result(run_dir, result, settings.on_saved)
            save_meta(run_dir, opts, result, status=result.status)
    return result, run_dir, first_error


def _status(result: BreakdownResult, err: errors.BenchError | None) -> str:
    if isinstance(err, errors.Interrupted):
        return Status.INTERRUPTED
    if not result.measured():
        return Status.FAILED
    return Status.PARTIAL if err is not None or any(not g.ok for g in result.graphs) else Status.OK


def _kernels(g: GraphResult) -> str:  # the rows the graph's kernel tables will list
    n = len(listed_categories(g))
    return f"{n} " + ("kernel or extern call" if n == 1 else "kernels and extern calls")
