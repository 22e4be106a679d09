"""`breakdown --autotune-top N`: what max-autotune would buy, added to a breakdown.

- Backends whose Triton kernels this tool times (CUDA): the N most expensive Triton kernels
  are re-benchmarked from their kernel files over the max-autotune config space (see
  kernelbench), with the Amdahl bound per kernel.
- Elsewhere (the CPU's C++ kernels have no Triton files): the model is recompiled with
  mode="max-autotune" (CPU GEMM templates) into ``<run>/max-autotune/``, profiled with the
  same settings as the run, and the two breakdowns are matched kernel by kernel.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ..core import errors
from ..core.autotune import match_kernels
from ..core.devices import backend
from ..core.results import BreakdownResult, KernelRetuning, Recompile
from ..core.rundir import AUTOTUNE_DIR
from ..core.vocab import CompileMode
from ..core.workload import WorkloadOptions
from .kernelbench import autotune_top_kernels
from .pipeline import run_breakdown
from .rundir import save_result
from .settings import RunSettings


def add_autotune_top(
    result: BreakdownResult, run_dir: Path, opts: WorkloadOptions, n: int, settings: RunSettings
) -> errors.BenchError | None:
    """Sets ``result.autotune`` and saves the result again. Returns the first error met
    (the breakdown itself stays valid)."""
    err: errors.BenchError | None = None
    try:
        if backend(result.device).times_triton_kernels:
            result.autotune = _retune(result, run_dir, n, settings)
        else:
            result.autotune, err = _recompile(result, run_dir, opts, n, settings)
    except errors.BenchError as e:
        result.errors.append(f"--autotune-top: {e}")
        err = e
    save_result(run_dir, result, settings.on_saved)
    return err


def _retune(result: BreakdownResult, run_dir: Path, n: int, settings: RunSettings) -> KernelRetuning:
    with settings.progress.phase(f"re-benchmarking the top {n} Triton kernels under max-autotune") as ph:
        rows = autotune_top_kernels(result, run_dir, n, timeout=settings.timeout, echo=settings.echo)
        ph["done"] = f"{len(rows)} kernel(s)"
    return KernelRetuning(n=n, rows=rows, total_bound=sum(r.bound for r in rows))


def _recompile(
    result: BreakdownResult, run_dir: Path, opts: WorkloadOptions, n: int, settings: RunSettings
) -> tuple[Recompile, errors.BenchError | None]:
    if opts.mode == CompileMode.MAX_AUTOTUNE:
        raise errors.UsageError(
            "--autotune-top on CPU recompiles with mode max-autotune: this run already uses it"
        )
    settings.progress.note("CPU kernels have no Triton file to re-tune: recompiling with mode max-autotune")
    tuned, tuned_dir, err = run_breakdown(
        dataclasses.replace(opts, mode=CompileMode.MAX_AUTOTUNE), settings, out=run_dir / AUTOTUNE_DIR
    )
    base_t, tuned_t = result.totals(), tuned.totals()
    return Recompile(
        n=n,
        tuned_run=str(tuned_dir),
        tuned_status=tuned.status,
        base_step_ms=base_t.wall_ms,
        tuned_step_ms=tuned_t.wall_ms,
        base_kernel_ms=base_t.kernel_ms,
        tuned_kernel_ms=tuned_t.kernel_ms,
        rows=match_kernels(result, tuned) if tuned.measured() else [],
    ), err
