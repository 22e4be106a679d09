"""Profile worker: run one compiled module's own harness (``get_args`` + ``call``, the code
Inductor's ``-p`` runs) under torch.profiler and write its chrome trace.

Each iteration is wrapped in a ``record_function(MARKER)``; on an accelerator the iteration
ends with a synchronize inside the marker, so the marker's span is the iteration's wall time and every
kernel of the iteration lies inside it. Busy time, wall time and kernel times therefore all
come from the same profiled run, and busy can never exceed wall.

The iterations are profiled in several **windows**, each its own profiler session, and only
the window with the lowest time is exported (each window's time is the policy's figure of
its iterations on this worker's clock, judged with their parts as the table's iterations
are: ``core/window_figure.py``; every window's iteration times are returned). The profiler's own records
fragment the host heap: on CPU a buffer of a megabyte that a kernel allocates every call
can end up on fresh pages every call for a whole session (measured: models/mlp.py
backward, 250 minor page faults per iteration and a 40% slower ``aten::mm`` in about one
session in three, on the next session gone). The fault count of every window is returned,
so the report can show what was discarded. Each window starts warm: after the waits between
windows, the graph is called untimed first (``REWARM_CALLS``; a model's loop never pauses).

Before loading the module the worker applies the model's precision/backend settings
(``runner/torch_settings.py``). A graph that ran under CUDA graphs in the model (mode
``reduce-overhead``/``max-autotune`` on a GPU) is captured into a CUDA graph and each
iteration replays it (``runner/replay.py``), as the mode runs it; one iteration launched kernel
by kernel is exported first (``launch.json.gz``) for the launching ops that replays lack. On
an accelerator one more session launches the iterations back to back with one sync at the end
(``pipelined.json.gz``, read by ``core/pipelined.py``).

Run as ``python -m inductor_bench.runner.profile request.json response.json``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.breakdown import MARKER
from ..core.devices import DEVICE, backend
from ..core.pipelined import PIPELINED_ITERATION, PIPELINED_RUN, time_back_to_back
from ..core.window_figure import window_figure
from . import device as dev
from . import flex_blocks, machine, parallel_probe, process_group, torch_settings, unbacked
from . import replay as replay_mod
from .harness_inputs import HarnessCall, harness, load_module
from .peaks_measure import machine_key
from .speed import SpeedWatch
from .trace_export import export_trace
from .window_parts import session_parts
from .window_plan import (
    DEFAULT_WINDOWS,
    MAX_WINDOWS_S,
    auto_iterations,
    fastest_window,
    plan_windows,
    replanned,
    rewarm_calls,
    windows_agree,
)
from .workload import run_model_file

WARMUP_CALLS = 3
def rewarm(call: Callable[[], None], calls: int) -> None:
    """Run ``call`` ``calls`` times, untimed: a window then starts as the loop it stands for
    runs, its caches and clocks warm."""
    for _ in range(calls):
        call()


def per_call_estimate(call: Callable[[], None], calls: int = WARMUP_CALLS) -> float:
    """Seconds per call: the fastest of ``calls`` timed one by one. Nothing makes a call
    faster than its work, so a stall during some of them (two of three beside a busy process:
    120 ms where the graph takes 0.55) neither shrinks the iteration count nor the windows
    as a total or a median would."""
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return min(times)


def _minor_faults() -> int | None:
    try:
        import resource
    except ImportError:  # not on Windows
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


_PRELOADED: set[str] = set()
# The machine's speed (runner/speed.py), watched across every graph this worker profiles.
_SPEED = SpeedWatch()


def _preload(path: str | None) -> None:
    """Import the model file (not run as a script) so that custom ops and kernels it
    registers exist when the compiled module calls them. A failure is logged, not fatal:
    most modules need nothing from it."""
    if not path or path in _PRELOADED:
        return  # a batch profiles every graph of one model: import it once
    _PRELOADED.add(path)
    import sys
    import traceback

    try:
        run_model_file(path)
    except Exception:
        print(f"inductor-bench: importing {path} before the module failed (ignored):", file=sys.stderr)
        traceback.print_exc()


# What loading a compiled module imports (its header: ``from torch._inductor.select_algorithm
# import extern_kernels`` pulls in the lowerings, 2.8 s of the first graph's 3 s here): loaded
# ahead on standby, they cost nothing later.
_MODULE_IMPORTS = (
    "torch._inductor.async_compile",
    "torch._inductor.codecache",
    "torch._inductor.utils",
    "torch._inductor.hooks",
    "torch._inductor.codegen.memory_planning",
    "torch._inductor.select_algorithm",
)


def prepare(spec: dict[str, Any]) -> None:
    """On standby (``worker_entry.worker_main``), while the model compiles elsewhere: import torch,
    what a compiled module imports, the profiler and the model file, and let Inductor probe
    the CPU's vector ISA (it builds a test program; loading a C++ kernel needs the answer)."""
    import importlib

    import torch.profiler  # noqa: F401

    for name in _MODULE_IMPORTS:
        with contextlib.suppress(ImportError):  # a name a torch version lacks: loaded later
            importlib.import_module(name)
    with contextlib.suppress(Exception):
        from torch._inductor import cpu_vec_isa

        cpu_vec_isa.pick_vec_isa()
    _preload(spec.get("preload"))


def handle(request: dict[str, Any]) -> dict[str, Any]:
    from torch.profiler import profile, record_function

    device = request["device"]
    print(f"inductor-bench: profiling {request['module']}", flush=True)  # a header in the log
    not_applied = torch_settings.apply(request.get("torch_settings"))
    text = Path(request["module"]).read_text(errors="replace")
    process_group.check(text, (request.get("torch_settings") or {}).get("process_group"), not_applied)
    _preload(request.get("preload"))
    t0 = time.perf_counter()
    mod = load_module(request["module"])
    load_s = time.perf_counter() - t0
    run_once = harness(mod, request.get("sizes"))
    def restore() -> None:
        """Before every call, never inside what is timed or profiled: the inputs the graph
        changes in place put back, and done (a device's copy kept out of the next iteration)."""
        if run_once.restorer.kept:
            run_once.restore()
            dev.synchronize(device)

    def launch_eager() -> None:
        run_once()

    launch = launch_eager
    for _ in range(WARMUP_CALLS):  # eager first, in every case: compile-time lazy work
        restore()
        launch_eager()
        dev.synchronize(device)
    data_sizes: dict[str, int] = {}  # a data-dependent size (u0) as the profiled inputs give it
    if unbacked.has_unbacked(text):
        restore()
        data_sizes = unbacked.values(launch_eager, request["module"])
        dev.synchronize(device)
    # a masked flex attention's blocks, as the profiled inputs give them ({} for other modules)
    mask_blocks = flex_blocks.read(lambda: (restore(), launch_eager()), request["module"], text)
    replayed, replay_error = False, None
    if request.get("cuda_graph"):
        # the kernels' launching ops, from one iteration launched kernel by kernel: replayed
        # kernels share their cudaGraphLaunch's correlation and have none of their own
        restore()
        with profile(activities=dev.profiler_activities(device)) as prof:
            launch_eager()
            dev.synchronize(device)
        export_trace(prof, Path(request["launch_trace"]))
        del prof
        launch, replayed, replay_error = _replay(request, mod, run_once, device)

    def once() -> None:
        restore()
        launch()
        dev.synchronize(device)

    per_call = per_call_estimate(once)
    warm = rewarm_calls(per_call)  # untimed calls before each timed session
    n = int(request.get("iterations") or auto_iterations(per_call))
    budget = float(request.get("windows_budget_s") or MAX_WINDOWS_S)  # this process's share
    windows = plan_windows(int(request.get("windows") or DEFAULT_WINDOWS), n, per_call, budget)

    activities = dev.profiler_activities(device)
    device_id = dev.monitor_id(device)
    ours = request.get("ours") or ()  # the run's other profiling workers, on standby: not others
    window_ms: list[float] = []
    samples_ms: list[list[float]] = []
    faults: list[float | None] = []
    kept, kept_at = None, 0
    on_device = backend(device).timeline == DEVICE
    loads: list[dict[str, Any] | None] = []
    probes: list[float] = []  # the machine's speed reading around each window (runner/speed.py)
    waited = 0.0
    _SPEED.know(request.get("speed_reference_s"))  # the fastest reading of the run's workers before
    probe = None if on_device else parallel_probe.parallel_x  # how parallel work fares on the host
    after = None  # the probe after a window: the next one's before, where nothing waited between
    planned = n  # the count planned on the warm-up calls, before any window (replanned)
    w = 0
    while w < windows:
        times = []
        start, wait = _SPEED.before_window()
        waited += wait
        before = after if after is not None and not wait else probe and probe()
        rewarm(once, warm)
        counters, gpu0 = machine.cpu_counters(), machine.device_reading(device, device_id, ours)
        with profile(activities=activities) as prof:
            f0 = _minor_faults()  # inside the session: its start and stop do not count
            for _ in range(n):
                restore()
                with record_function(MARKER):
                    t0 = time.perf_counter()
                    launch()
                    dev.synchronize(device)
                    times.append(time.perf_counter() - t0)
            f1 = _minor_faults()
        probes.append(max(start, _SPEED.read()))  # the slower of before and after
        gpu1 = machine.device_reading(device, device_id, ours)
        load = machine.with_device(machine.load_since(counters), gpu0, gpu1)
        after = probe and probe()
        if load is not None and probe:
            load = dataclasses.replace(load, parallel_x=parallel_probe.slower(before, after))
        loads.append(load.to_dict() if load is not None else None)
        samples_ms.append([t * 1e3 for t in times])
        window_ms.append(window_figure(samples_ms[-1], session_parts(prof, n)))
        faults.append((f1 - f0) / n if f0 is not None and f1 is not None else None)
        if fastest_window(window_ms) == w:
            kept, kept_at = prof, w  # the one before is dropped here, between windows
            if on_device:
                # exported before the next session starts: a session exported after another
                # ran has its device events zeroed (ts 0, dur 0; seen on an H200, torch 2.11)
                export_trace(kept, Path(request["trace"]))
                kept = None
        del prof
        if windows_agree(window_ms):
            break
        if w == 0 and n == planned and (again := replanned(n, times, bool(request.get("iterations")))):
            # the warm-up calls stalled: this window is left out, the windows planned again
            n, per_call = again, min(times)
            warm = rewarm_calls(per_call)
            windows = plan_windows(int(request.get("windows") or DEFAULT_WINDOWS), n, per_call, budget)
            for per_window in (window_ms, samples_ms, faults, loads, probes):
                per_window.clear()
            kept, kept_at = None, 0
            continue
        w += 1
    if kept is not None:  # on the host: the fastest session, exported once
        export_trace(kept, Path(request["trace"]))
    del kept
    plain = None
    if request.get("pipelined_trace"):
        # the same iterations launched back to back, one sync at the end (core/pipelined.py),
        # started warm after the trace's export as each window is
        rewarm(once, warm)
        with profile(activities=activities) as prof, record_function(PIPELINED_RUN):
            for _ in range(n):
                run_once.restore()  # queued before the iteration, not waited for: a few tiny copies
                with record_function(PIPELINED_ITERATION):
                    launch()
            dev.synchronize(device)
        export_trace(prof, Path(request["pipelined_trace"]))
        del prof
        # the same launches without the profiler, for the launch-bound verdict (core/pipelined.py)
        rewarm(once, warm)
        plain = time_back_to_back(lambda: (run_once.restore(), launch()), lambda: dev.synchronize(device), n,
                                  time.perf_counter)
    return {
        "pipelined_plain": plain,
        "iterations": n,
        "load_s": load_s,
        "warmup_per_call_ms": per_call * 1e3,
        "planned_iterations": planned,  # on the warm-up calls; iterations differs where replanned
        "windows_ms": window_ms,
        "window_samples_ms": samples_ms,
        "window_faults": faults,
        "window": kept_at,
        "window_load": loads,
        "window_probe_s": probes,
        "speed_waited_s": waited,
        "speed_reference_s": _SPEED.reference,
        "replayed": replayed,
        "first_call_inputs": [(r := run_once.restorer).copied, len(r.kept), r.inputs, r.scaled,
                              r.constants.copied, r.constants.total, r.constants.scaled],
        "replay_error": replay_error,
        "settings_not_applied": not_applied,
        "sizes": request.get("sizes") or {},
        "unbacked": data_sizes,
        "flex_blocks": mask_blocks,
        # what the device's cached ceilings are keyed by, as this process ran (its threads):
        # the run reads them from the cache without a worker of its own (runner/roofline.py)
        "machine_key": _ceilings_key(device),
    }


def _ceilings_key(device: str) -> dict[str, Any] | None:
    try:
        return machine_key(device)
    except Exception:  # the run measures its ceilings in a worker of its own instead
        return None


def _replay(request: dict[str, Any], mod: Any, run_once: HarnessCall, device: str
            ) -> tuple[Callable[[], Any], bool, str | None]:
    """(the launch of one iteration, whether it replays CUDA graphs, why not where the capture
    failed), as the mode runs the graph (``request["replay_plan"]``, ``core/replay_plan.py``):
    each partition captured on its own with the eager work between them, or the whole ``call``;
    the inputs the mode copies copied at every replay."""
    ns = dev.graph_namespace(device)
    plan = request.get("replay_plan") or {}
    if plan.get("partitioned"):
        before = list(mod.runner.partitions)
        copies = {int(k): v for k, v in (plan.get("copies") or {}).items()}
        replay_mod.install_partitions(ns, mod, copies)
        try:
            run_once()  # the first call captures each partition as it reaches it
            dev.synchronize(device)
        except replay_mod.PartitionCaptureError as e:
            mod.runner.partitions = before
            return run_once, False, str(e)
        return run_once, True, None
    args = run_once.args
    if args is None:  # torch < 2.11's harness: the whole closure, its inputs never copied
        graph, error = replay_mod.capture(ns, lambda _: run_once(), [])
        return (graph.replay, True, None) if graph is not None else (run_once, False, error)
    copy = plan.get("copied_inputs", list(range(len(args))))
    graph, error = replay_mod.capture(ns, mod.call, args, copy)
    if graph is None:
        return run_once, False, error
    return (lambda: graph.run(args)), True, None


if __name__ == "__main__":
    from inductor_bench.runner.worker_entry import worker_main

    worker_main(handle, prepare)
