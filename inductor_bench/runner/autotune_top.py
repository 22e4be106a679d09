"""`breakdown --autotune-top N`: what max-autotune would buy, added to a breakdown.

- Backends whose Triton kernels this tool times (CUDA): the N most expensive Triton kernels
  are re-benchmarked from their kernel files over the max-autotune config space (see
  kernelbench), with the Amdahl bound per kernel.
- Elsewhere (the CPU's C++ kernels have no Triton files): the model is recompiled with
  mode="max-autotune" (CPU GEMM templates) into ``<run>/max-autotune/``, profiled with the
  same settings as the run, and the two breakdowns are matched kernel by kernel; the headline's
  two steps are then timed interleaved in one process (the timing worker of ``compare``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ..core import errors
from ..core.autotune import match_kernels, same_code_rows
from ..core.compiled_from import module_texts
from ..core.devices import backend
from ..core.results import BreakdownResult, KernelRetuning, Recompile
from ..core.rundir import AUTOTUNE_DIR
from ..core.summaries import summarize
from ..core.vocab import CompileMode
from ..core.workload import FACTORY_KIND, WorkloadOptions
from .compare_timer import CompareRun
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
    if result.mode == CompileMode.MAX_AUTOTUNE:  # a script's: the mode its calls compiled in
        raise errors.UsageError(
            "--autotune-top on CPU recompiles with mode max-autotune: this run already uses it"
        )
    settings.progress.note("CPU kernels have no Triton file to re-tune: recompiling with mode max-autotune")
    tuned, tuned_dir, err = run_breakdown(
        dataclasses.replace(opts, mode=CompileMode.MAX_AUTOTUNE), settings, out=run_dir / AUTOTUNE_DIR
    )
    if tuned.mode != CompileMode.MAX_AUTOTUNE:
        settings.progress.note(f"the script's torch.compile calls that name a mode keep it: the recompile "
                               f"compiled in mode {tuned.mode}")
    base_t, tuned_t = result.totals(), tuned.totals()
    rec = Recompile(
        n=n,
        tuned_run=str(tuned_dir),
        tuned_status=tuned.status,
        base_step_ms=base_t.wall_ms,
        tuned_step_ms=tuned_t.wall_ms,
        base_kernel_ms=base_t.kernel_ms,
        tuned_kernel_ms=tuned_t.kernel_ms,
        rows=same_code_rows(match_kernels(result, tuned), result, tuned, module_texts(result, run_dir),
                            module_texts(tuned, tuned_dir)) if tuned.measured() else [],
        min_rel=backend(result.device).min_rel_change,
    )
    _time_both(rec, result, tuned, opts, run_dir, settings)
    return rec, err


def _time_both(
    rec: Recompile,
    base: BreakdownResult,
    tuned: BreakdownResult,
    opts: WorkloadOptions,
    run_dir: Path,
    settings: RunSettings,
) -> None:
    """The headline's steps: both models' real steps timed interleaved in one process (the
    timing worker of compare), each from the cache it compiled into. Without that (a script,
    a failure), the steps stay the two runs' graph walls added up, and ``step_note`` says so."""
    caches = [r.compile_cache.dir if r.compile_cache else None for r in (base, tuned)]
    if opts.kind != FACTORY_KIND or None in caches or not tuned.measured():
        rec.step_note = "the two runs' graph walls added up (no interleaved timing: " + (
            "a script is not timed step by step)" if opts.kind != FACTORY_KIND
            else "the max-autotune run did not finish)")
        return
    sides = [
        {"options": dataclasses.replace(opts, mode=mode).to_dict(), "cache_dir": cache}
        for mode, cache in zip((opts.mode, CompileMode.MAX_AUTOTUNE), caches, strict=True)
    ]
    try:
        run = CompareRun(settings=settings)
        data = run.time_sides(sides, base.device, run_dir, "timing both steps interleaved")
    except errors.BenchError as e:
        rec.step_note = f"the two runs' graph walls added up (interleaved timing failed: {e})"[:300]
        return
    rec.base_paired_ms, rec.tuned_paired_ms = ([list(b) for b in blocks] for blocks in data["blocks"][:2])
    rec.step_load = data.get("load")
    rec.step_stopped = list(data.get("stopped") or [])[:2]
    rec.base_step_ms = summarize([x for b in rec.base_paired_ms for x in b]).ms
    rec.tuned_step_ms = summarize([x for b in rec.tuned_paired_ms for x in b]).ms
