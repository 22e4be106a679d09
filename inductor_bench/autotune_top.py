"""`breakdown --autotune-top N`: what max-autotune would buy, added to a breakdown.

- CUDA: the N most expensive Triton kernels are re-benchmarked from their kernel files over
  the max-autotune config space (see kernelbench), with the Amdahl bound per kernel.
- CPU (C++ kernels, no Triton files): the model is recompiled with mode="max-autotune"
  (CPU GEMM templates) into ``<run>/max-autotune/`` and the two breakdowns are matched
  kernel by kernel (graph + name, then origin ATen ops).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from . import errors
from .progress import Progress
from .results import BreakdownResult
from .workload import WorkloadOptions


def add_autotune_top(
    result: BreakdownResult,
    run_dir: Path,
    opts: WorkloadOptions,
    n: int,
    *,
    timeout: float,
    progress: Progress,
    echo: bool = False,
) -> errors.BenchError | None:
    """Adds ``result.extras["autotune"]`` and rewrites the run's result files. Returns the
    first error met (the breakdown itself stays valid)."""
    from .pipeline import write_result

    err: errors.BenchError | None = None
    try:
        if result.device == "cuda":
            result.extras["autotune"] = _cuda(
                result, run_dir, n, timeout=timeout, progress=progress, echo=echo
            )
        else:
            result.extras["autotune"], err = _cpu(
                result, run_dir, opts, n, timeout=timeout, progress=progress, echo=echo
            )
    except errors.BenchError as e:
        result.errors.append(f"--autotune-top: {e}")
        err = e
    write_result(run_dir, result)
    return err


def _cuda(
    result: BreakdownResult, run_dir: Path, n: int, *, timeout: float, progress: Progress, echo: bool
) -> dict:
    from .kernelbench import autotune_top_cuda

    with progress.phase(f"re-benchmarking the top {n} Triton kernels under max-autotune") as ph:
        rows = autotune_top_cuda(result, run_dir, n, timeout=timeout, echo=echo)
        ph["done"] = f"{len(rows)} kernel(s)"
    return {
        "route": "cuda-kernels",
        "n": n,
        "rows": rows,
        "total_bound": sum(r.get("bound", 0.0) for r in rows),
    }


def _cpu(
    result: BreakdownResult,
    run_dir: Path,
    opts: WorkloadOptions,
    n: int,
    *,
    timeout: float,
    progress: Progress,
    echo: bool,
) -> tuple[dict, errors.BenchError | None]:
    from .autotune import match_kernels
    from .pipeline import run_breakdown

    if opts.mode == "max-autotune":
        raise errors.UsageError(
            "--autotune-top on CPU recompiles with mode max-autotune: this run already uses it"
        )
    progress.note("CPU kernels have no Triton file to re-tune: recompiling with mode max-autotune")
    tuned, tuned_dir, err = run_breakdown(
        dataclasses.replace(opts, mode="max-autotune"),
        out=run_dir / "max-autotune",
        timeout=timeout,
        progress=progress,
        echo=echo,
    )
    base_t, tuned_t = result.totals(), tuned.totals()
    return {
        "route": "cpu-recompile",
        "n": n,
        "tuned_run": str(tuned_dir),
        "tuned_status": tuned.status,
        "base_step_ms": base_t.wall_ms,
        "tuned_step_ms": tuned_t.wall_ms,
        "base_kernel_ms": base_t.kernel_ms,
        "tuned_kernel_ms": tuned_t.kernel_ms,
        "rows": match_kernels(result, tuned) if tuned.measured() else [],
    }, err
