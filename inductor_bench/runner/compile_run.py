"""Running the compile worker: its request, its progress line, and what it reported (``CompileOutcome``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core import errors
from ..core.rundir import LOGS_DIR, MODULES_LOG, SOURCES_LOG, STEP_TRACE_FILE
from ..core.vocab import CompileMode
from ..core.workload import SCRIPT_KIND, WorkloadOptions
from . import cudagraph_log
from .batch import Standby
from .cache import run_cache
from .capture import inductor_env
from .compile_phase import named_on_timeout, phase_file
from .presence import device_words
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
    out = CompileOutcome(script=opts.kind == SCRIPT_KIND)  # a worker killed answers nothing of it
    cache, shared = run_cache(run_dir, fresh=settings.fresh_cache, freezing=opts.freezing, device=opts.device)
    out.cache_dir, out.cache_shared = str(cache), shared
    if profile_after:
        out.standbys = profile_standbys(run_dir, settings, cache, preload_path(opts))
        request["wait_ready"] = [s.ready_spec for s in out.standbys]
    label = "running" if opts.mode == CompileMode.EAGER else "compiling"
    try:
        # a script's own output: what a terminal shows meanwhile
        follow = str(log_path) if opts.kind == SCRIPT_KIND else None
        with settings.progress.phase(f"{label} {opts.file_and_args()} ({_describe(opts)})", follow) as ph, \
                named_on_timeout(phase_file(log_path), settings.timeout, opts.mode != CompileMode.EAGER, ph,
                                 script=opts.kind == SCRIPT_KIND):
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


def preload_path(opts: WorkloadOptions) -> str | None:
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
