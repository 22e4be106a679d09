"""Compile worker: build the workload, compile it in a private cache, capture every
compiled module through Inductor's structured trace, and time compile and steady state.

Run as ``python -m inductor_bench.runner.capture request.json response.json`` (see worker.py).
Every captured module is appended to ``modules_log`` (JSON lines) the moment Inductor
reports it, so a model that crashes later (say, in backward) still leaves its forward graph
to profile.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core import graph_breaks, subgraphs
from ..core.devices import backend
from ..core.errors import UsageError, WorkloadError
from ..core.rundir import CALL_INPUTS_DIR, SOURCES_LOG
from ..core.steady import steady_mean
from ..core.vocab import CompileMode
from ..core.workload import FACTORY_KIND, SCRIPT_KIND, WorkloadOptions
from . import (
    call_inputs,
    compat,
    compile_modes,
    compile_phase,
    cudagraph_log,
    machine,
    process_group,
    script_compiles,
    sources,
    torch_settings,
    trace_log,
    turns,
)
from . import device as dev
from .cudagraph_state import attach as attach_cudagraph_state
from .dynamo_counts import (
    attach_break_recorder,
    attach_compile_recorder,
    cache_record,
    dynamo_graph_count,
)
from .dynamo_frame import CODE_KEY, compiled_code
from .failures import describe as _describe
from .script_stderr import exit_error, kept_stderr, with_log
from .script_stop import stopped_after
from .step_profile import PYTHON_BUDGET_S, StepTiming, profile_steps, profiled_steps
from .stop import sigint_noted
from .worker_entry import wait_ready
from .workload import build_step, call_factory, load_factory, main_file, run_model_file

# Inductor flags every compile of ours runs with: unique kernel names, benchmark harnesses in
# modules and kernel files, and a profiler record around every C++ kernel.
INDUCTOR_ENV = {
    "TORCHINDUCTOR_UNIQUE_KERNEL_NAMES": "1",
    "TORCHINDUCTOR_BENCHMARK_KERNEL": "1",
    "TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE": "1",
}


def inductor_env(cache_dir: Path, *, freezing: bool = False) -> dict[str, str]:
    """The environment of every worker of one run: its private cache and our flags."""
    env = {**INDUCTOR_ENV, "TORCHINDUCTOR_CACHE_DIR": str(cache_dir)}
    if freezing:
        env["TORCHINDUCTOR_FREEZING"] = "1"
    return env


def measuring_env(cache_dir: Path) -> dict[str, str]:
    """The environment of a worker that only loads what a compile wrote and measures it (the
    profiling worker): no pool of compile processes. With compile threads, loading a module
    can start Inductor's pool, whose processes import torch (seconds of CPU) beside the
    measurement: on torch 2.5 they took a core during the first graph's profiler sessions,
    which ran 10x slower. A module that misses the cache compiles in the worker instead."""
    return {**inductor_env(cache_dir), "TORCHINDUCTOR_COMPILE_THREADS": "1"}


def stop_compile_workers() -> None:
    """Stop Inductor's pool of compile processes once the compile is done, before anything is
    timed. torch starts it with a compile and it outlives the compile: on torch 2.5 its
    processes were still importing torch while steps were timed, and, orphaned when this
    worker exited, while the first graph was profiled. A later compile starts a new one."""
    try:
        from torch._inductor import async_compile
    except ImportError:
        return
    # The pool's own shutdown waits for its process to read the request, which a process
    # still importing torch does seconds later: that process and the workers it started are
    # told to stop (SIGTERM) first.
    for pool in list(getattr(async_compile, "_pool_set", ())):
        proc = getattr(pool, "process", None)  # a SubprocPool's process; executors have none
        if proc is None or proc.poll() is not None:
            continue
        for pid in [*machine.descendants(proc.pid), proc.pid]:
            with contextlib.suppress(OSError):  # gone meanwhile
                os.kill(pid, signal.SIGTERM)
    with contextlib.suppress(Exception):  # an addition: never stops a measurement
        async_compile.shutdown_compile_workers()


class _ModuleRecorder(logging.Handler):
    """Receives ``torch.__trace`` records; keeps those naming a compiled module.

    Each module is written to ``log_path`` with what the call stack says about how it was
    compiled (``core/subgraphs.py``): the Inductor frames, the compiled graph's name and, for
    a subgraph Inductor compiled only to benchmark an autotuning choice, that choice. Such
    subgraphs are flagged (``subgraph: true`` and a reason) and kept in ``subgraphs``, apart
    from the model's graphs in ``modules``; ``order`` counts both.
    """

    STACK_DEPTH = 16  # innermost Inductor frames kept as evidence
    COMPILE_FRAMES = ("_compile_to_module_lines", "_compile_to_module", "compile_to_module")

    def __init__(self, log_path: Path) -> None:
        super().__init__(level=logging.DEBUG)
        self.log_path = log_path
        self.seen: set[str] = set()
        self.modules: list[dict[str, Any]] = []
        self.subgraphs: list[dict[str, Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        found = trace_log.compiled_module(record)
        if found is None or found[0] in self.seen:
            return
        path, md = found
        self.seen.add(path)
        entry = {
            "path": path,
            "frame_id": md.get("frame_id"),
            "frame_compile_id": md.get("frame_compile_id"),
            "attempt": md.get("attempt"),
            "order": len(self.modules) + len(self.subgraphs),
        }
        if trace_log.of_compiled_autograd(md):
            entry[trace_log.COMPILED_AUTOGRAD] = True
        # evidence only: a surprise in the stack must not break the compile
        with contextlib.suppress(Exception):
            entry.update(self._how_compiled())
        try:
            text = Path(path).read_text(errors="replace")
        except OSError:
            text = None
        subgraphs.mark(entry, text)
        (self.subgraphs if entry.get(subgraphs.SUBGRAPH_KEY) else self.modules).append(entry)
        with open(self.log_path, "a") as f:
            f.write(json.dumps(entry) + "\n")

    @classmethod
    def _how_compiled(cls) -> dict[str, Any]:
        """The Inductor frames on the stack (outermost first), the name of the GraphLowering
        being compiled, and the autotuning choice a benchmark subgraph was compiled for."""
        out: dict[str, Any] = {}
        stack: list[str] = []
        frame = sys._getframe(1)
        while frame is not None:
            code = frame.f_code
            where = code.co_filename.replace("\\", "/")
            if "/torch/_inductor/" in where:
                stack.append(f"{where.split('/torch/_inductor/', 1)[1]}:{code.co_name}")
                if code.co_name in cls.COMPILE_FRAMES and subgraphs.GRAPH_NAME_KEY not in out:
                    owner = frame.f_locals.get("self")
                    name = getattr(owner, "name", None)
                    out[subgraphs.GRAPH_NAME_KEY] = None if name is None else str(name)
                if stack[-1] == subgraphs.BENCHMARK_FRAME:
                    owner = frame.f_locals.get("self")
                    out[subgraphs.CHOICE_KEY] = str(getattr(owner, "name", "") or "") or None
            frame = frame.f_back
        out[subgraphs.STACK_KEY] = stack[: cls.STACK_DEPTH][::-1]
        with contextlib.suppress(Exception):  # evidence only: the rest stands without it
            out[CODE_KEY] = compiled_code(sys._getframe(1))
        return out


def _attach_recorder(log_path: Path) -> _ModuleRecorder:
    """The module recorder, on the ``torch.__trace`` logger (records are built only when a
    handler is attached)."""
    rec = _ModuleRecorder(log_path)
    trace_log.attach(rec)
    return rec


def _check_torch(mode: str) -> None:
    """Before compiling: a torch this tool supports, and a mode that torch has."""
    import torch

    err = compat.too_old(torch.__version__)
    if err is not None:
        raise err
    compile_modes.check(mode)


def timed_step(opts: WorkloadOptions, device: str, **compile_kw: Any) -> Callable[[], float]:
    """The workload built and (unless eager) wrapped in ``torch.compile`` in its mode; returns
    one timed call of its step, in ms (a CUDA-graph mode's step marked as a new one first)."""
    import torch

    _check_torch(opts.mode)
    model, args, kwargs = call_factory(load_factory(opts.path), opts, device)
    if opts.mode != CompileMode.EAGER:
        mode = None if opts.mode == CompileMode.DEFAULT else opts.mode
        model = torch.compile(model, mode=mode, **compile_kw)
    step = build_step(model, args, kwargs, opts, device)
    mark = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)
    uses_cudagraphs = dev.uses_cuda_graphs(device, opts.mode)

    def one() -> float:
        if uses_cudagraphs and mark is not None:
            mark()
        t0 = time.perf_counter()
        step()
        dev.synchronize(device)
        return (time.perf_counter() - t0) * 1e3

    return one


def _run_factory(
    opts: WorkloadOptions,
    device: str,
    timing: StepTiming,
    ready: list[dict[str, Any]] | None = None,
    modules: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Compile, then time the steady state; where the device table says ``split_in_turns``,
    the step and every graph in ``modules`` (the recorder's, filled by the compile) in turns
    (``turns.py``)."""
    one = timed_step(opts, device)
    built = torch_settings.snapshot()  # as the factory left them, before torch.compile ran
    compile_ms = one()  # the first call: compilation (and autotuning) timed on its own
    _phase(f"first step (the compile) took {compile_ms / 1e3:.1f} s")
    first_s = compile_ms / 1e3
    compile_phase.enter(compile_phase.WAITING, first_s)
    stop_compile_workers()
    reset = dev.reset_peak_memory(device)  # the steady state's peak, not the compiler's
    _phase(f"waited {wait_ready(ready):.1f} s for the profiling workers to be ready; timing steps")
    compile_phase.enter(compile_phase.TIMING, first_s)
    device_id = dev.monitor_id(device)
    standby = tuple(int(r["pid"]) for r in ready or ())  # the run's profiling workers are no others
    counters, gpu0 = machine.cpu_counters(), machine.device_reading(device, device_id, standby)
    calls0 = call_inputs.call_counts()
    samples = timing.run(one)
    graph_calls = call_inputs.calls_between(calls0, call_inputs.call_counts(), len(samples))
    _phase(f"timed {len(samples)} steps")
    gpu1 = machine.device_reading(device, device_id, standby)
    load = machine.with_device(machine.load_since(counters), gpu0, gpu1)
    peak, peak_kind = dev.peak_memory(device, reset)
    out = {
        "compile_s": compile_ms / 1e3,
        "step_samples_ms": samples,
        "step_load": load.to_dict() if load is not None else None,
        "peak_memory_bytes": peak,
        "peak_memory_kind": peak_kind,
        "graph_calls": graph_calls,
        "graph_sizes": call_inputs.size_counts(),
        "model_settings": built,
    }
    if modules and backend(device).split_in_turns:
        compile_phase.enter(compile_phase.TURNS, first_s)
        out["step_turns"] = turns.time_in_turns(one, [m["path"] for m in modules], device, timing.budget_s)
    if timing.trace:
        per_step_ms = steady_mean(samples)
        steps, python_steps = profiled_steps(per_step_ms), profiled_steps(per_step_ms, PYTHON_BUDGET_S)
        _phase(f"profiling {steps} more step(s) on the host, then {python_steps} with Python's calls")
        compile_phase.enter(compile_phase.PROFILING, first_s)
        out["step_profile"] = profile_steps(one, Path(timing.trace), steps, python_steps)
    return out


def _phase(what: str) -> None:
    """A line in the compile log: where a slow or killed compile worker had got to."""
    print(f"inductor-bench: {what}", flush=True)


def _run_script(opts: WorkloadOptions, log: str | None) -> dict[str, Any]:
    _check_torch(opts.mode)
    # The script's own torch.compile calls get our mode unless they name one.
    ours = opts.mode not in (CompileMode.DEFAULT, CompileMode.EAGER)
    asked = script_compiles.attach(opts.mode if ours else None)
    sys.argv = [opts.typed_path or opts.path, *opts.script_args]  # as ``python FILE ARGS`` gives it
    t0, exited = time.perf_counter(), False
    try:
        with stopped_after(opts.script_seconds) as stop, kept_stderr() as said:
            run_model_file(main_file(opts.path, opts.typed_path), "__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            raise WorkloadError(with_log(exit_error(e.code, said.last_line()), log)) from None
        exited = True  # sys.exit(0): argparse's --help, or a script's own early end
    return {"script_s": time.perf_counter() - t0, "graph_calls": call_inputs.call_counts(),
            "graph_sizes": call_inputs.size_counts(), "script_compiles": {**asked.found(), "exited": exited},
            "script_stopped_s": stop["stopped_s"]}


def handle(request: dict[str, Any]) -> dict[str, Any]:
    opts = WorkloadOptions(**request["options"])
    log = Path(request["modules_log"])
    recorder = _attach_recorder(log)
    breaks, compile_log = attach_break_recorder(), attach_compile_recorder()
    sources.attach(Path(request.get("sources_log") or log.parent / SOURCES_LOG))
    process_group.watch()
    call_inputs.attach(log.parent / CALL_INPUTS_DIR)
    cudagraph_log.attach(log, recorder.modules)
    attach_cudagraph_state(log)
    compile_phase.attach(request.get("phase_file"))
    device = dev.resolve(opts.device)
    kind = opts.kind
    out: dict[str, Any] = {"device": device, "device_name": dev.device_name(device),
                           "versions": compat.versions()}
    out["script"] = kind == SCRIPT_KIND  # kept by an error too: the report says what ran
    before = torch_settings.snapshot()

    def partial() -> dict[str, Any]:  # what an error keeps of the run so far
        return {**out, **_settings(before), "modules": recorder.modules, "graph_breaks": breaks.found(),
                "compiles": compile_log.found(), "graph_sizes": call_inputs.size_counts(),
                **({"graph_calls": call_inputs.call_counts()} if kind == SCRIPT_KIND else {})}

    try:
        with sigint_noted() as sigint:
            if kind == FACTORY_KIND:
                timing = StepTiming.from_request(request)
                out.update(_run_factory(opts, device, timing, request.get("wait_ready"), recorder.modules))
            else:  # a script picks its own devices; each module says which it ran on
                out.update(_run_script(opts, request.get("log")))
    except (UsageError, WorkloadError) as e:
        e.partial = partial()  # type: ignore[attr-defined]
        raise
    except (Exception, SystemExit, KeyboardInterrupt) as e:  # sys.exit, its own KeyboardInterrupt: failed
        if isinstance(e, KeyboardInterrupt) and sigint["received"]:  # a signal stopped the worker
            raise
        what = "the model" if kind == FACTORY_KIND else "the script"
        err = WorkloadError(with_log(_describe(e, what, opts.path), request.get("log")))
        err.partial = partial()  # type: ignore[attr-defined]
        raise err from e
    stop_compile_workers()  # a script's compiles too: none of its pool outlives this worker
    out.update(_settings(before, out.pop("model_settings", None)))
    out["dynamo_graphs"] = dynamo_graph_count()
    eager = (out.get("script_compiles") or {}).get("module_compile_eager") or []
    out["graph_breaks"] = breaks.found() + graph_breaks.module_compile_skips(eager)
    out["compiles"] = compile_log.found()
    out["fx_cache"] = cache_record(compile_log, out["compiles"])
    out["modules"] = recorder.modules
    return out


def _settings(before: dict[str, Any], built: dict[str, Any] | None = None) -> dict[str, Any]:
    """The settings after the model ran (its steps all ran with them), those that changed
    while it ran, and (``built``: read when its factory returned) those its factory set."""
    after = torch_settings.snapshot()
    out: dict[str, Any] = {"values": after, "changed": [k for k, v in after.items() if before.get(k) != v]}
    if built is not None:
        out["model_set"] = {k: v for k, v in built.items() if before.get(k) != v}
    return {"torch_settings": out}


if __name__ == "__main__":
    from inductor_bench.runner.worker_entry import worker_main

    worker_main(handle)
