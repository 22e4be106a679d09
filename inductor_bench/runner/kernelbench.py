"""Benchmark one Inductor Triton kernel file in a worker process (the torch side).

The parent calls ``run_kernel_bench`` (no torch import): it starts
``python -m inductor_bench.runner.kernelbench request.json response.json`` with a fresh
``TORCHINDUCTOR_CACHE_DIR`` and no inherited ``TORCHINDUCTOR_*`` flags (``worker.run_worker``).

In the worker, each mode imports a private copy of the kernel file (a fresh directory, so
no ``<hash>.best_config`` sits beside it) with the file's ``@triton_heuristics.<h>``
decorator intercepted: the heuristic runs with ``inductor_meta`` patched for the mode
(``autotune.meta_patch``; max-autotune as the installed torch's ``list_mode_options``
defines it), so the autotuner gets that mode's config space. The file's own
``call(get_args())`` then compiles, autotunes (and runs coordinate descent under
max-autotune), and is timed the way ``triton.testing.do_bench`` times: an L2 flush before
each repetition and CUDA events around the call; every repetition's time is returned (the
report's figure is the mean of the steady ones, ``core/steady.py``). The
flush keeps the device busy while Python issues the call, so launch overhead stays out.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from ..core import autotune, kernel_report, peaks
from ..core.categories import TRITON_CATEGORIES
from ..core.devices import backend
from ..core.errors import BenchError, DeviceError, ResultError, UsageError
from ..core.kernelfile import (
    KernelFile,
    check_name,
    file_says,
    no_harness_reason,
    parse_kernel_source,
    run_kernel_file,
)
from ..core.modes import KernelPatch
from ..core.results import BreakdownResult, KernelStat, RetunedKernel
from ..core.rundir import LOGS_DIR
from ..core.tuning_spaces import would_tune
from . import device as dev
from .harness_inputs import harness_args
from .kernel_load import (
    config_dict,
    config_space,
    installed_patch,
    installed_versions,
    load_kernel,
    patch_for,
)
from .presence import absent
from .worker import DEFAULT_TIMEOUT_S, run_worker
from .worker_entry import worker_main

WORKER_MODULE = "inductor_bench.runner.kernelbench"
DEFAULT_REPS = 100
DEFAULT_WARMUP = 10
# Every repetition zeroes the 256 MB flush buffer (80 µs on an H100, near 1 ms on a 300 GB/s
# card) and keeps its pair of timing events until the one synchronize at the end; its time is
# sent back and summarized about 19 times a mode in the report: 2.7 s of the parent's time for
# 10000 of each of two modes, 9.4 s for 30000 (2-core CPU, torch 2.13). 10000 of each of seven
# configs and two modes stay well inside the default --timeout on the slowest card.
MAX_REPS = 10_000
REPS_WHY = ("each repetition zeroes a 256 MB flush buffer and holds two timing events until the end, "
            "and the report summarizes every one (2.7 s for 10000 of each of two modes)")
# Warm-up calls cost time only: the same bound keeps them inside --timeout.
MAX_WARMUP = 10_000
WARMUP_WHY = "untimed calls before the timed ones, run inside the worker's --timeout"
# Zeroed before every repetition to evict the kernel's data from L2, as Triton's do_bench
# does; 256 MB exceeds every current GPU's L2 (50 MB on an H100, 126 MB on a B200).
L2_FLUSH_BYTES = 256 * 1024**2


# --- parent side (no torch) ----------------------------------------------------------------


def modes_for(kf: KernelFile, max_autotune: bool) -> list[str]:
    """Templates keep their compile-time config: only the baseline runs for them."""
    if max_autotune and not kf.is_template:
        return [autotune.BASELINE, autotune.MAX_AUTOTUNE]
    return [autotune.BASELINE]


def no_device(kf: KernelFile, why: str, listed: dict[str, Any] | None = None) -> DeviceError:
    """The refusal where the kernel's device is absent: what the file says and, from
    ``listed`` (``list_spaces``), the configs each mode would tune over."""
    b = backend(kf.device)
    spaces = ""
    if listed and listed.get("spaces"):
        patch = listed.get("max_autotune_patch")
        said = would_tune(kf, listed["spaces"], KernelPatch.from_dict(patch) if patch else None)
        spaces = f"; {said}" if said else ""
    elif listed and listed.get("error"):
        spaces = f"; its config spaces could not be listed here ({listed['error']})"
    return DeviceError(f"no {b.name.upper()} device is available here ({why}); "
                       f"benchmarking {kf.name} needs {b.hardware}; {file_says(kf)}{spaces}")


def _listed_here(kf: KernelFile, timeout: float) -> dict[str, Any] | None:
    """``list_spaces`` run in a worker of this machine (a template's one config needs none)."""
    if kf.is_template:
        return None
    with tempfile.TemporaryDirectory(prefix="inductor-bench-kernel-") as tmp:
        request = {**_kernel_request(kf), "kernel_name": kf.name,
                   "work_dir": str(Path(tmp) / "work"), "list_only": True}
        env = {"TORCHINDUCTOR_CACHE_DIR": str(Path(tmp) / "inductor-cache")}
        try:
            return run_worker(WORKER_MODULE, request, timeout=timeout, env=env)
        except (BenchError, OSError) as e:  # a worker that cannot start or answer
            return {"error": _first_line(e)}


def _kernel_request(kf: KernelFile) -> dict[str, str]:
    """The kernel as the worker gets it: the text parsed here (for a run's file, the bytes its
    digest was checked on), never the file read again, and its path to name it by."""
    return {"kernel_file": str(Path(kf.path).resolve()), "kernel_source": kf.text}


def _first_line(e: BaseException) -> str:
    """The tool's own error as it says it; another with its type (``ImportError: ...``)."""
    said = str(e) if isinstance(e, BenchError) else f"{type(e).__name__}: {e}"
    return said.splitlines()[0] if said.strip() else type(e).__name__


def run_kernel_bench(
    kf: KernelFile,
    *,
    max_autotune: bool = False,
    all_configs: bool = False,
    reps: int = DEFAULT_REPS,
    warmup: int = DEFAULT_WARMUP,
    timeout: float = DEFAULT_TIMEOUT_S,
    peak_override: float | None = None,
    peak_table: dict[str, dict[str, float | None]] | None = None,
    log_path: Path | None = None,
    echo: bool = False,
) -> dict[str, Any]:
    """Run the worker on one kernel file and return its response (see ``handle``)."""
    if not (1 <= reps <= MAX_REPS and 0 <= warmup <= MAX_WARMUP):
        raise UsageError(f"--reps must be 1 to {MAX_REPS} and --warmup 0 to {MAX_WARMUP}")
    why = absent(kf.device)  # certain without torch: no worker is started to time nothing
    if why:
        raise no_device(kf, why, _listed_here(kf, timeout))
    with tempfile.TemporaryDirectory(prefix="inductor-bench-kernel-") as tmp:
        request = {
            **_kernel_request(kf),
            "kernel_name": kf.name,
            "work_dir": str(Path(tmp) / "work"),
            "modes": modes_for(kf, max_autotune),
            "all_configs": all_configs,
            "reps": reps,
            "warmup": warmup,
            "peak_override": peak_override,
            "peak_table": peak_table,
        }
        env = {"TORCHINDUCTOR_CACHE_DIR": str(Path(tmp) / "inductor-cache")}
        return run_worker(WORKER_MODULE, request, timeout=timeout, env=env,
                          log_path=log_path, echo=echo)


# Triton kernels whose configs a re-benchmark can search: templates keep the config chosen
# when the model compiled (other GEMM configs need a recompile).
RETUNABLE = TRITON_CATEGORIES - {"triton_template"}


def top_triton_kernels(result: BreakdownResult, n: int | None = None) -> list[tuple[str, KernelStat]]:
    """(graph id, kernel) of the n (None: all) most expensive re-tunable Triton kernels with
    a file, most expensive first."""
    w = result.weights()
    found = [
        (g.id, k) for g in result.measured() for k in g.kernels
        if k.category in RETUNABLE and k.file
    ]
    return sorted(found, key=lambda gk: -w[gk[0]] * gk[1].ms)[:n]


def skip_reason(run_dir: Path, k: KernelStat) -> str | None:
    """Why a kernel cannot be re-benchmarked from its file (None: it can, or its file is
    unreadable, which its worker run then reports): not the file the run wrote (``run_file``),
    or no benchmark harness, as foreach/combo kernels have none unless
    ``benchmark_combo_kernel`` was set in the compiling process."""
    try:
        kf = run_kernel_file(run_dir, str(k.file))
    except ResultError as e:
        return str(e)
    except UsageError:
        return None
    return no_harness_reason(kf)


def autotune_top_kernels(result: BreakdownResult, run_dir: Path, n: int, *,
                         timeout: float = DEFAULT_TIMEOUT_S, echo: bool = False) -> list[RetunedKernel]:
    """Re-benchmark the n most expensive Triton kernels of a breakdown under baseline and
    max-autotune: one row per kernel, with the Amdahl bound, and ``error`` where that
    kernel's worker failed (the others still run). A kernel its file cannot launch (see
    ``skip_reason``) gets a row with ``skipped`` and does not count towards n. Worker logs
    go to ``run_dir/logs/autotune-<graph>-<kernel>.log``."""
    totals = result.totals()
    step = totals.wall_ms or totals.kernel_ms
    w = result.weights()
    rows: list[RetunedKernel] = []
    for gid, k in top_triton_kernels(result):
        if sum(1 for r in rows if not r.skipped) >= n:
            break
        why = skip_reason(run_dir, k)
        share = w[gid] * k.ms / step if step > 0 else 0.0  # in all its graph's calls in the step
        if why:
            rows.append(_row(gid, k, share, skipped=why))
        else:
            rows.append(_retune(run_dir, gid, k, share, timeout=timeout, echo=echo))
    return autotune.amdahl_rows(rows)[0]


def _row(gid: str, k: KernelStat, share: float, **kw: Any) -> RetunedKernel:
    return RetunedKernel(graph=gid, kernel=k.name, category=k.category, share=share, model_ms=k.ms, **kw)


def _retune(run_dir: Path, gid: str, k: KernelStat, share: float, *,
            timeout: float, echo: bool) -> RetunedKernel:
    row = _row(gid, k, share)
    try:
        kf = run_kernel_file(run_dir, str(k.file))  # as the run wrote it, or refused
        log = run_dir / LOGS_DIR / f"autotune-{gid}-{k.name}.log"
        resp = run_kernel_bench(kf, max_autotune=True, timeout=timeout, log_path=log, echo=echo)
        base, tuned = (kernel_report.ModeRun.from_dict(r) for r in resp["runs"])
    except DeviceError:
        raise  # no GPU here: every other kernel would fail the same way
    except BenchError as e:  # one kernel's failure (a crash, a timeout) loses no other
        row.error = str(e).splitlines()[0]
        return row
    change = autotune.compare_modes(base.timing.samples_ms, tuned.timing.samples_ms)
    row.base_ms, row.tuned_ms = base.timing.ms, tuned.timing.ms
    row.configs_base, row.configs_tuned = base.tried, tuned.tried
    row.config = autotune.config_label(tuned.timing.config)
    row.verdict = kernel_report.modes_verdict(base, tuned, change)  # same code: the baseline's config
    return row


# --- worker side (torch) -------------------------------------------------------------------


def time_call(fn: Any, device: str, *, warmup: int, reps: int) -> list[float]:
    """Per-repetition device time of ``fn()`` in ms: L2 flush, timing events, no sync inside."""
    import torch

    flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.int8, device=device)
    for _ in range(warmup):
        fn()
    dev.synchronize(device)
    pairs = dev.timing_events(device, reps)
    for start, end in pairs:
        flush.zero_()
        start.record()
        fn()
        end.record()
    dev.synchronize(device)
    return [start.elapsed_time(end) for start, end in pairs]


def _resources(launcher: Any) -> dict[str, int | None]:
    def num(name: str) -> int | None:
        v = getattr(launcher, name, None)
        return int(v) if isinstance(v, (int, float)) else None

    return {"regs": num("n_regs"), "spills": num("n_spills"), "shared": num("shared")}


def _tried(tuner: Any, space: int) -> int:
    """Configs benchmarked: the coordinate-descent tuner caches every timing, the initial
    autotuning's included; a single candidate without coordinate descent is never timed."""
    cached = getattr(getattr(tuner, "coordesc_tuner", None), "cached_benchmark_results", None)
    return max(len(cached or {}), space, 1)


def bench_mode(kf: KernelFile, mode: str, work_dir: Path, *, warmup: int,
               reps: int) -> dict[str, Any]:
    module, tuner = load_kernel(kf, patch_for(mode), work_dir, mode)
    space = [config_dict(c) for c in tuner.configs]
    args = harness_args(module)
    started = time.perf_counter()
    module.call(args)  # compile, autotune, coordinate descent
    dev.synchronize(kf.device)
    tune_s = time.perf_counter() - started
    launcher = tuner.launchers[0]
    samples = time_call(lambda: module.call(args), kf.device, warmup=warmup, reps=reps)
    return {"mode": mode, "space": space, "tried": _tried(tuner, len(space)), "tune_s": tune_s,
            "config": config_dict(launcher.config), "samples_ms": samples,
            **_resources(launcher)}


def bench_all_configs(kf: KernelFile, mode: str, work_dir: Path, *, warmup: int,
                      reps: int) -> list[dict[str, Any]]:
    """Every candidate config of ``mode`` timed on its own (no coordinate descent)."""
    patch = patch_for(mode, coordinate_descent=False)
    module, tuner = load_kernel(kf, patch, work_dir, f"all-{mode}")
    tuner.precompile()
    args = harness_args(module)
    out = []
    for launcher in list(tuner.launchers):
        tuner.launchers = [launcher]
        if hasattr(tuner, "_cached_launcher"):  # torch >= 2.13 caches the launcher it ran
            tuner._cached_launcher = None
        samples = time_call(lambda: module.call(args), kf.device, warmup=warmup, reps=reps)
        out.append({"config": config_dict(launcher.config), "samples_ms": samples,
                    **_resources(launcher)})
    return out


def list_spaces(kf: KernelFile, work_dir: Path) -> dict[str, Any]:
    """Each mode's candidate configs and what max-autotune sets, listed without a device;
    ``error``: why they could not be (no Triton, a file another torch wrote)."""
    if kf.is_template:
        return {}
    try:
        spaces = {m: config_space(kf, m, work_dir) for m in (autotune.BASELINE, autotune.MAX_AUTOTUNE)}
        return {"spaces": spaces, "max_autotune_patch": installed_patch().to_dict()}
    except (ImportError, BenchError) as e:
        return {"error": _first_line(e)}


def handle(request: dict[str, Any]) -> dict[str, Any]:
    """The worker: time each mode, optionally every config, and measure the peak if unknown;
    with ``list_only``, each mode's config space (``list_spaces``), nothing run."""
    kf = parse_kernel_source(request["kernel_source"], request["kernel_file"])
    check_name(kf, request.get("kernel_name"))
    work_dir = Path(request["work_dir"])
    if request.get("list_only"):
        return list_spaces(kf, work_dir)
    b = backend(kf.device)
    if not dev.available(b):
        raise no_device(kf, f"torch.{b.torch_module}.is_available() is False", list_spaces(kf, work_dir))
    reps, warmup = int(request["reps"]), int(request["warmup"])
    runs = [bench_mode(kf, m, work_dir, warmup=warmup, reps=reps) for m in request["modes"]]
    mode = request["modes"][-1]
    all_configs = (bench_all_configs(kf, mode, work_dir, warmup=warmup, reps=reps)
                   if request.get("all_configs") else [])
    device = dev.current_device(kf.device)
    measured = None
    if peaks.needs_measurement(device["name"], override_gbps=request.get("peak_override"),
                               user_table=request.get("peak_table")):
        measured = dev.measure_copy_gbps(kf.device)
    tuned = installed_patch() if autotune.MAX_AUTOTUNE in request["modes"] else None
    return {"device": device, "versions": installed_versions(), "runs": runs,
            "all_configs": all_configs, "all_configs_mode": mode if all_configs else None,
            "measured_copy_gbps": measured,
            "max_autotune_patch": tuned.to_dict() if tuned else None}


if __name__ == "__main__":
    worker_main(handle)
