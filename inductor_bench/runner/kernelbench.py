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
each repetition, CUDA events around the call, and the median over the repetitions. The
flush keeps the device busy while Python issues the call, so launch overhead stays out.
"""

from __future__ import annotations

import contextlib
import importlib.util
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from ..core import autotune, modes, peaks
from ..core.categories import TRITON_CATEGORIES
from ..core.devices import backend
from ..core.errors import BenchError, DeviceError, ResultError, UsageError
from ..core.kernelfile import KernelFile, check_name, file_says, no_harness_reason, read_kernel_file
from ..core.results import BreakdownResult, KernelStat, RetunedKernel
from ..core.rundir import LOGS_DIR, run_file
from . import device as dev
from .harness_inputs import harness_args
from .presence import absent
from .worker import DEFAULT_TIMEOUT_S, run_worker, worker_main

WORKER_MODULE = "inductor_bench.runner.kernelbench"
DEFAULT_REPS = 100
DEFAULT_WARMUP = 10
# Zeroed before every repetition to evict the kernel's data from L2, as Triton's do_bench
# does; 256 MB exceeds every current GPU's L2 (50 MB on an H100, 126 MB on a B200).
L2_FLUSH_BYTES = 256 * 1024**2


# --- parent side (no torch) ----------------------------------------------------------------


def modes_for(kf: KernelFile, max_autotune: bool) -> list[str]:
    """Templates keep their compile-time config: only the baseline runs for them."""
    if max_autotune and not kf.is_template:
        return [autotune.BASELINE, autotune.MAX_AUTOTUNE]
    return [autotune.BASELINE]


def no_device(kf: KernelFile, why: str) -> DeviceError:
    b = backend(kf.device)
    return DeviceError(f"no {b.name.upper()} device is available here ({why}); "
                       f"benchmarking {kf.name} needs {b.hardware}; {file_says(kf)}")


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
    if reps < 1 or warmup < 0:
        raise UsageError("--reps must be at least 1 and --warmup at least 0")
    why = absent(kf.device)  # certain without torch: no worker is started for nothing
    if why:
        raise no_device(kf, why)
    with tempfile.TemporaryDirectory(prefix="inductor-bench-kernel-") as tmp:
        request = {
            "kernel_file": str(Path(kf.path).resolve()),
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
        kf = read_kernel_file(run_file(run_dir, str(k.file)))
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
        kf = read_kernel_file(run_file(run_dir, str(k.file)))  # as the run wrote it, or refused
        log = run_dir / LOGS_DIR / f"autotune-{gid}-{k.name}.log"
        resp = run_kernel_bench(kf, max_autotune=True, timeout=timeout, log_path=log, echo=echo)
        base, tuned = (autotune.ModeRun.from_dict(r) for r in resp["runs"])
    except DeviceError:
        raise  # no GPU here: every other kernel would fail the same way
    except BenchError as e:  # one kernel's failure (a crash, a timeout) loses no other
        row.error = str(e).splitlines()[0]
        return row
    change = autotune.compare_modes(base.timing.samples_ms, tuned.timing.samples_ms)
    row.base_ms, row.tuned_ms = base.timing.ms, tuned.timing.ms
    row.configs_base, row.configs_tuned = base.tried, tuned.tried
    row.config = autotune.config_label(tuned.timing.config)
    row.verdict = autotune.verdict(change)
    return row


# --- worker side (torch) -------------------------------------------------------------------


def config_dict(cfg: Any) -> dict[str, Any]:
    """A triton Config as plain data: block sizes, then num_warps / num_stages."""
    out = dict(getattr(cfg, "kwargs", None) or {})
    for k in ("num_warps", "num_stages"):
        if getattr(cfg, k, None) is not None:
            out[k] = int(getattr(cfg, k))
    return out


def load_kernel(kf: KernelFile, patch: dict[str, Any], work_dir: Path, tag: str, *,
                listing_only: bool = False) -> tuple[Any, Any]:
    """Import a private copy of the kernel file with its heuristic's inductor_meta patched.

    Returns (module, autotuner). ``listing_only`` stubs what a CUDA kernel file needs from a
    GPU at import time (``triton_helpers.set_driver_to_gpu()``, and the CUDA stream getter a
    CPU-only torch lacks) so that its config space can be listed on any machine; nothing
    may be launched from a module loaded that way.
    """
    from unittest import mock

    import torch
    from torch._inductor.runtime import triton_helpers, triton_heuristics

    copy_dir = work_dir / tag
    copy_dir.mkdir(parents=True, exist_ok=True)
    copy = copy_dir / Path(kf.path).name
    shutil.copyfile(kf.path, copy)
    real = getattr(triton_heuristics, kf.heuristic, None)
    if real is None:
        raise UsageError(f"{kf.path}: this torch has no triton_heuristics.{kf.heuristic}; "
                         "the file was generated by another torch version")

    def heuristic(*args: Any, **kwargs: Any) -> Any:
        if "inductor_meta" not in kwargs:
            raise UsageError(f"{kf.path}: the decorator passes no inductor_meta keyword")
        kwargs["inductor_meta"] = {**(kwargs["inductor_meta"] or {}), **patch}
        return real(*args, **kwargs)

    spec = importlib.util.spec_from_file_location(f"inductor_bench_kernel_{tag}", copy)
    if spec is None or spec.loader is None:
        raise UsageError(f"{kf.path}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(triton_heuristics, kf.heuristic, heuristic))
        if listing_only and hasattr(triton_helpers, "set_driver_to_gpu"):
            stack.enter_context(mock.patch.object(triton_helpers, "set_driver_to_gpu",
                                                  lambda: None))
        if listing_only and not hasattr(torch._C, "_cuda_getCurrentRawStream"):
            stack.enter_context(mock.patch.object(torch._C, "_cuda_getCurrentRawStream",
                                                  lambda device: 0, create=True))
        _import(spec, module, kf)
    return module, getattr(module, kf.name)


def _import(spec: Any, module: Any, kf: KernelFile) -> None:
    """Run the kernel file's top level; what the installed torch or Triton lacks of it (a file
    another torch version wrote) is a usage error of one line."""
    try:
        spec.loader.exec_module(module)
    except BenchError:
        raise
    except Exception as e:
        raise UsageError(f"{kf.path}: {_installed()} cannot import it ({type(e).__name__}: {e}); a kernel "
                         "file another torch version wrote needs that version and its Triton") from e


def _installed() -> str:
    """``torch 2.14.1+cu130 and triton 3.5.0``, as the report names them (``_versions``;
    ``no triton`` where it cannot be imported)."""
    try:
        v = _versions()
    except ImportError:
        import torch

        return f"torch {torch.__version__} and no triton"
    return f"torch {v['torch']} and triton {v['triton']}"


def installed_patch(mode: str = autotune.MAX_AUTOTUNE) -> modes.KernelPatch:
    """What ``torch.compile(mode=mode)`` of this process's torch sets in a kernel file's
    inductor_meta (``torch._inductor.list_mode_options``)."""
    import torch
    from torch._inductor import config, list_mode_options

    cfg = {k: getattr(config, k) for k in modes.COORDESC_SETTINGS if hasattr(config, k)}
    return modes.kernel_patch(mode, dict(list_mode_options(mode)),
                              torch_version=torch.__version__, config=cfg)


def patch_for(mode: str, *, coordinate_descent: bool = True) -> dict[str, Any]:
    """The inductor_meta patch of a tuning mode, max-autotune read from the installed torch."""
    tuned = installed_patch() if mode == autotune.MAX_AUTOTUNE else None
    return autotune.meta_patch(mode, tuned, coordinate_descent=coordinate_descent)


def config_space(kf: KernelFile, mode: str, work_dir: Path) -> list[dict[str, Any]]:
    """The candidate configs the heuristic builds for ``mode`` (no GPU needed)."""
    _, tuner = load_kernel(kf, patch_for(mode), work_dir, f"space-{mode}", listing_only=True)
    return [config_dict(c) for c in tuner.configs]


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


def _versions() -> dict[str, str]:
    import torch
    import triton

    return {"torch": torch.__version__, "triton": triton.__version__}


def handle(request: dict[str, Any]) -> dict[str, Any]:
    """The worker: time each mode, optionally every config, and measure the peak if unknown."""
    kf = read_kernel_file(request["kernel_file"])
    check_name(kf, request.get("kernel_name"))
    b = backend(kf.device)
    if not dev.available(b):
        raise no_device(kf, f"torch.{b.torch_module}.is_available() is False")
    work_dir = Path(request["work_dir"])
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
    return {"device": device, "versions": _versions(), "runs": runs,
            "all_configs": all_configs, "all_configs_mode": mode if all_configs else None,
            "measured_copy_gbps": measured,
            "max_autotune_patch": tuned.to_dict() if tuned else None}


if __name__ == "__main__":
    worker_main(handle)
