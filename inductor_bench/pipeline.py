"""One breakdown run, end to end: compile (worker) → profile each graph (worker per graph)
→ analyse (in process, pure) → run directory.

The run directory is created fresh for every run and never overwritten::

    runs/<model>-<mode>-<timestamp>/
      meta.json          options, versions, device, phase timings, status, errors
      cache/             the private Inductor cache this run compiled into
      modules.jsonl      compiled modules as Inductor reported them
      graphs/<id>/       module.py, kernels/<name>.py, trace.json.gz (open in Perfetto)
      logs/              worker logs
      breakdown.json     the result (re-render with `inductor-bench report`)
      report.txt         the text report

Whatever happens in the user's model, what was measured before the failure is written.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import errors
from .capture import inductor_env
from .modparse import ModuleInfo, read_module
from .progress import QUIET, Progress
from .results import BreakdownResult, GraphResult
from .worker import run_worker
from .workload import WorkloadOptions

DEFAULT_TIMEOUT_S = 900.0
ROLE_ORDER = {"forward": 0, "inference": 1, "backward": 2}


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
    error: errors.BenchError | None = None


def new_run_dir(name: str, mode: str, *, root: Path | str = "runs", out: Path | str | None = None) -> Path:
    """A fresh directory for this run; an existing non-empty directory is never reused."""
    if out is not None:
        d = Path(out)
        if d.exists() and (not d.is_dir() or any(d.iterdir())):
            raise errors.UsageError(
                f"--out {d}: already exists and is not empty (runs are never overwritten)"
            )
        d.mkdir(parents=True, exist_ok=True)
        return d
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = Path(root) / f"{_slug(name)}-{mode}-{stamp}"
    for i in range(1000):
        d = base if i == 0 else base.with_name(f"{base.name}-{i}")
        try:
            d.mkdir(parents=True)
            return d
        except FileExistsError:
            continue
    raise errors.UsageError(f"cannot create a run directory under {root}")


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", s) or "model"


def compile_workload(
    opts: WorkloadOptions,
    run_dir: Path,
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    steps: int = 5,
    progress: Progress = QUIET,
    echo: bool = False,
) -> CompileOutcome:
    """Run the compile worker. Errors are kept in ``outcome.error`` with whatever modules
    were captured before them (read back from ``modules.jsonl``)."""
    modules_log = run_dir / "modules.jsonl"
    request = {"options": opts.to_dict(), "modules_log": str(modules_log), "steps": steps}
    out = CompileOutcome()
    label = "running" if opts.mode == "eager" else "compiling"
    try:
        with progress.phase(f"{label} {Path(opts.path).name} ({_describe(opts)})") as ph:
            data = run_worker(
                "inductor_bench.capture",
                request,
                timeout=timeout,
                env=inductor_env(run_dir / "cache", freezing=opts.freezing),
                log_path=run_dir / "logs" / f"compile-{opts.mode}.log",
                echo=echo,
            )
            ph["done"] = f"{len(data.get('modules', []))} compiled module(s)"
    except errors.BenchError as e:
        out.error = e
        data = getattr(e, "partial", None) or {}
    for k in (
        "device",
        "device_name",
        "versions",
        "script",
        "compile_s",
        "step_samples_ms",
        "peak_memory_bytes",
        "peak_memory_kind",
    ):
        if k in data and data[k] is not None:
            setattr(out, k, data[k])
    out.modules = _read_modules_log(modules_log) or list(data.get("modules", []))
    return out


def _describe(opts: WorkloadOptions) -> str:
    parts = [
        "train" if opts.train else "inference",
        f"device {opts.device}",
        f"mode {opts.mode}",
        opts.dtype + (" autocast" if opts.autocast else ""),
    ]
    if opts.batch_size:
        parts.append(f"batch {opts.batch_size}")
    if opts.freezing:
        parts.append("freezing")
    return ", ".join(parts)


def _read_modules_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    mods, seen = [], set()
    for line in path.read_text().splitlines():
        try:
            m = json.loads(line)
        except json.JSONDecodeError:
            continue  # a worker killed mid-write leaves at most one torn line
        if m.get("path") and m["path"] not in seen:
            seen.add(m["path"])
            mods.append(m)
    return mods


@dataclass
class GraphSource:
    graph: GraphResult
    module_path: Path  # the copy inside the run directory
    info: ModuleInfo
    kernel_files: dict[str, str]  # kernel name -> path relative to the run directory


def collect_graphs(modules: list[dict[str, Any]], run_dir: Path, default_device: str) -> list[GraphSource]:
    """Copy each compiled module (and the Triton kernel files it names) into the run
    directory and label it with its frame / compile id and role."""
    sources: list[GraphSource] = []
    used: set[str] = set()
    for m in modules:
        src = Path(m["path"])
        if not src.exists():
            continue
        info = read_module(src)
        gid = _graph_id(m, info, used)
        gdir = run_dir / "graphs" / gid
        (gdir / "kernels").mkdir(parents=True, exist_ok=True)
        dst = gdir / "module.py"
        shutil.copyfile(src, dst)
        kernel_files = {}
        for k in info.kernels.values():
            if k.kernel_path and Path(k.kernel_path).exists():
                kdst = gdir / "kernels" / f"{k.name}.py"
                shutil.copyfile(k.kernel_path, kdst)
                kernel_files[k.name] = str(kdst.relative_to(run_dir))
        g = GraphResult(
            id=gid,
            role=info.role,
            aot_id=info.aot_id,
            frame_id=m.get("frame_id"),
            frame_compile_id=m.get("frame_compile_id"),
            module=str(dst.relative_to(run_dir)),
            device=info.device or default_device,
        )
        sources.append(GraphSource(g, dst, info, kernel_files))
    sources.sort(
        key=lambda s: (
            s.graph.frame_id if s.graph.frame_id is not None else 1 << 30,
            s.graph.frame_compile_id or 0,
            ROLE_ORDER.get(s.graph.role, 3),
        )
    )
    return sources


def _graph_id(m: dict[str, Any], info: ModuleInfo, used: set[str]) -> str:
    frame = m.get("frame_id")
    head = str(frame) if frame is not None else info.aot_id.split("_", 1)[0] or "g"
    if m.get("frame_compile_id"):
        head += f".{m['frame_compile_id']}"
    gid = f"{head}-{info.role}"
    n = 2
    while gid in used:
        gid = f"{head}-{info.role}-{n}"
        n += 1
    used.add(gid)
    return gid


def profile_graph(
    src: GraphSource,
    run_dir: Path,
    *,
    iterations: int | None,
    timeout: float,
    echo: bool = False,
    preload: str | None = None,
    windows: int | None = None,
) -> GraphResult:
    """Profile one graph in a worker and analyse its trace. Failures are recorded in the
    returned GraphResult (status failed / timeout), never raised. ``preload``: a model file
    the worker imports first (custom ops it registers are then there for the module).
    ``windows``: profiler sessions to run, the fastest kept (None: the worker's default)."""
    from .breakdown import analyze_graph
    from .trace import load_for_analysis

    g = src.graph
    trace_path = src.module_path.parent / "trace.json.gz"
    request = {
        "module": str(src.module_path),
        "device": g.device,
        "iterations": iterations,
        "trace": str(trace_path),
        "preload": preload,
        "windows": windows,
    }
    try:
        data = run_worker(
            "inductor_bench.profile",
            request,
            timeout=timeout,
            env=inductor_env(run_dir / "cache"),
            log_path=run_dir / "logs" / f"profile-{g.id}.log",
            echo=echo,
        )
        g.trace = str(trace_path.relative_to(run_dir))
        g.windows_ms = list(data.get("windows_ms") or [])
        g.window_faults = list(data.get("window_faults") or [])
        g.window = data.get("window")
        return analyze_graph(load_for_analysis(trace_path), src.info, g, kernel_files=src.kernel_files)
    except errors.WorkerTimeout as e:
        g.status, g.error = "timeout", str(e)
    except errors.BenchError as e:
        g.status, g.error = "failed", str(e).splitlines()[0]
    return g


def new_result(opts: WorkloadOptions, run_dir: Path) -> BreakdownResult:
    return BreakdownResult(
        model=opts.name,
        model_path=str(Path(opts.path).resolve()),
        device=opts.device,
        mode=opts.mode,
        train=opts.train,
        dtype=opts.dtype,
        autocast=opts.autocast,
        freezing=opts.freezing,
        batch_size=opts.batch_size,
        created=_dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        run_dir=str(run_dir),
    )


def breakdown_from_outcome(
    opts: WorkloadOptions,
    run_dir: Path,
    comp: CompileOutcome,
    result: BreakdownResult | None = None,
    *,
    iterations: int | None = None,
    windows: int | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    progress: Progress = QUIET,
    echo: bool = False,
    write: bool = True,
) -> tuple[BreakdownResult, errors.BenchError | None]:
    """Profile and analyse every graph a compile worker captured; fill ``result`` (a new one
    by default) and, with ``write``, save it in ``run_dir``. Returns it and the first error
    met (the compile's own error included)."""
    result = result or new_result(opts, run_dir)
    first_error = comp.error
    result.device = comp.device or ("cuda" if opts.device == "cuda" else result.device)
    result.device_name, result.versions, result.script = comp.device_name, comp.versions, comp.script
    if comp.compile_s is not None:
        result.extras["compile_s"] = comp.compile_s
    if comp.step_samples_ms:
        result.extras["step_samples_ms"] = comp.step_samples_ms
    if comp.peak_memory_bytes is not None:
        result.extras["peak_memory"] = {"bytes": comp.peak_memory_bytes, "kind": comp.peak_memory_kind}
    if comp.error:
        result.errors.append(str(comp.error))
    sources = collect_graphs(comp.modules, run_dir, comp.device or "cpu")
    if not sources and first_error is None:
        first_error = errors.WorkloadError(
            f"{opts.path}: nothing was compiled — the file has no make_workload() factory and "
            "its script never ran a torch.compile'd function"
        )
        result.errors.append(str(first_error))
    if result.script and sources:
        result.device = sources[0].graph.device
    prefix = f"{opts.mode}: " if opts.mode != "default" else ""
    preload = None if comp.script else str(Path(opts.path).resolve())
    for i, src in enumerate(sources, 1):
        with progress.phase(f"{prefix}profiling graph {src.graph.id} [{i}/{len(sources)}]") as ph:
            g = profile_graph(
                src,
                run_dir,
                iterations=iterations,
                timeout=timeout,
                echo=echo,
                preload=preload,
                windows=windows,
            )
            ph["done"] = (
                f"{len(g.windows_ms) or 1} x {g.iterations} iterations, {len(g.kernels)} kernels"
                if g.ok
                else f"{g.status}: {g.error}"
            )
        result.graphs.append(g)
        if not g.ok:
            result.errors.append(f"graph {g.id}: {g.error}")
            first_error = first_error or (
                errors.WorkerTimeout(g.error or "")
                if g.status == "timeout"
                else errors.WorkerError(f"graph {g.id}: {g.error}")
            )
    result.iterations = max((g.iterations for g in result.graphs), default=0)
    result.status = _status(result, first_error)
    if write:
        write_result(run_dir, result)
        write_meta(run_dir, opts, result, status=result.status)
    return result, first_error


def run_breakdown(
    opts: WorkloadOptions,
    *,
    out: Path | str | None = None,
    root: Path | str = "runs",
    iterations: int | None = None,
    windows: int | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    steps: int = 5,
    progress: Progress = QUIET,
    echo: bool = False,
) -> tuple[BreakdownResult, Path, errors.BenchError | None]:
    """The whole breakdown. Returns the result (also written to the run directory), the run
    directory, and the first error met (None when everything was measured). ``steps``
    steady-state steps of the real model are timed after the compile (kept in extras)."""
    opts.validate()
    if opts.mode == "eager":
        raise errors.UsageError(
            "--mode eager compiles nothing to break down; use `compare` for an eager baseline"
        )
    run_dir = new_run_dir(opts.name, opts.mode, root=root, out=out)
    started = time.time()
    result = new_result(opts, run_dir)
    write_meta(run_dir, opts, result, status="running")
    first_error: errors.BenchError | None = None
    try:
        comp = compile_workload(opts, run_dir, timeout=timeout, steps=steps, progress=progress, echo=echo)
        result, first_error = breakdown_from_outcome(
            opts,
            run_dir,
            comp,
            result,
            iterations=iterations,
            windows=windows,
            timeout=timeout,
            progress=progress,
            echo=echo,
            write=False,  # written once, below, whatever happens
        )
    except KeyboardInterrupt:
        result.errors.append("interrupted")
        first_error = errors.BenchError("interrupted")
    finally:
        result.status = _status(result, first_error)
        result.extras["elapsed_s"] = round(time.time() - started, 2)
        write_result(run_dir, result)
        write_meta(run_dir, opts, result, status=result.status)
    return result, run_dir, first_error


def _status(result: BreakdownResult, err: errors.BenchError | None) -> str:
    if not result.measured():
        return "failed"
    return "partial" if err is not None or any(not g.ok for g in result.graphs) else "ok"


def write_result(run_dir: Path, result: BreakdownResult) -> None:
    from .render.text import render_breakdown

    (run_dir / "breakdown.json").write_text(result.to_json())
    (run_dir / "report.txt").write_text(render_breakdown(result))


def write_meta(run_dir: Path, opts: WorkloadOptions, result: BreakdownResult, *, status: str) -> None:
    meta = {
        "tool": "inductor-bench breakdown",
        "status": status,
        "options": opts.to_dict(),
        "device": result.device,
        "device_name": result.device_name,
        "versions": result.versions,
        "created": result.created,
        "errors": result.errors,
        "graphs": [{"id": g.id, "status": g.status, "error": g.error} for g in result.graphs],
    }
    (run_dir / "meta.json").write_text(json.dumps(meta, indent=1))
