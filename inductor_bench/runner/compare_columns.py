"""A comparison's columns: each mode of a model file compiled, timed and broken down in its
workers, in an order that learns the device first."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ..core.compare import EAGER, CompareResult, ModeResult, interrupted_profiling
from ..core.compare_modes import skip_reason
from ..core.compiled_from import graph_codes
from ..core.devices import AUTO
from ..core.errors import DeviceError, UsageError, WorkerTimeout, WorkloadError
from ..core.load import Load
from ..core.results import BreakdownResult
from ..core.stop_lines import INTERRUPTED
from ..core.vocab import CompileMode, Status
from ..core.workload import WorkloadOptions
from .compare_names import column_dir
from .compare_timer import WARMUP_STEPS, CompareRun, graph_modules
from .compile_run import CompileOutcome, compile_workload
from .pipeline import breakdown_from_outcome, new_result
from .rundir import lock_writing, save_meta, save_result


def execution_order(modes: list[str]) -> list[str]:
    """Eager and plain modes first: the first run tells which device "auto" resolved to,
    before deciding whether a CUDA-graph-only mode can run at all."""
    return sorted(modes, key=lambda m: (m != EAGER, m in CompileMode.CUDA_GRAPHS_ONLY))


def _mode_status(err: Exception | None) -> str:
    if err is None:
        return Status.OK
    return Status.TIMEOUT if isinstance(err, WorkerTimeout) else Status.FAILED


def error_line(err: Exception) -> str:
    """An error as a column's reason says it: its first line, else its type's name."""
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__


def run_mode(
    opts: WorkloadOptions, mode_dir: Path, run: CompareRun
) -> tuple[ModeResult, CompileOutcome, Exception | None]:
    """Run one mode in workers: time it (and for compiled modes, break it down).

    Returns (mode result, the compile worker's outcome, the first error or None)."""
    mode_dir.mkdir(parents=True, exist_ok=True)
    lock_writing(mode_dir)  # a column is a breakdown run: held as its compare's directory is
    outcome = compile_workload(opts, mode_dir, run.timing(), profile_after=opts.mode != EAGER)
    try:
        return _mode_result(opts, mode_dir, run, outcome)
    finally:
        outcome.close()


def _mode_result(
    opts: WorkloadOptions, mode_dir: Path, run: CompareRun, outcome: CompileOutcome
) -> tuple[ModeResult, CompileOutcome, Exception | None]:
    m = ModeResult(
        mode=opts.mode,
        compile_s=0.0 if opts.mode == EAGER else outcome.compile_s,
        step_samples_ms=list(outcome.step_samples_ms[WARMUP_STEPS:]),
        peak_memory_bytes=outcome.peak_memory_bytes,
        peak_memory_kind=outcome.peak_memory_kind,
        run_dir=str(mode_dir),
        step_load=Load.from_dict(outcome.step_load),
    )
    err: Exception | None = outcome.error
    if opts.mode != EAGER and outcome.modules:
        bd = new_result(opts, mode_dir)
        try:
            m.breakdown, profile_err = breakdown_from_outcome(opts, mode_dir, outcome, run.settings, bd)
        except KeyboardInterrupt:  # what it profiled kept, in the column and its folder
            raise ColumnInterrupted(_stopped_profiling(m, bd, opts, mode_dir, run)) from None
        err = err or profile_err
    elif opts.mode != EAGER and err is None:
        err = WorkloadError(f"{opts.path}: mode {opts.mode} compiled nothing")
    m.status = _mode_status(err)
    m.reason = error_line(err) if err is not None else None
    return m, outcome, err


class ColumnInterrupted(KeyboardInterrupt):
    """Ctrl-C as a column's graphs were profiled, carrying the column as it was stopped."""

    def __init__(self, column: ModeResult) -> None:
        super().__init__()
        self.column = column


def _stopped_profiling(m: ModeResult, bd: BreakdownResult, opts: WorkloadOptions, mode_dir: Path,
                       run: CompareRun) -> ModeResult:
    """The column stopped as it was profiled: its breakdown so far saved in its folder (as an
    interrupted breakdown's), and the column ``interrupted`` saying so, not ``not run``."""
    bd.errors.append(INTERRUPTED)
    bd.status = Status.INTERRUPTED
    save_result(mode_dir, bd, run.settings.on_saved)
    save_meta(mode_dir, opts, bd, status=bd.status)
    m.breakdown, m.status = bd, Status.INTERRUPTED
    m.reason = interrupted_profiling(m.compile_s, len(bd.measured()))
    return m


def note_device(result: CompareResult, outcome: CompileOutcome) -> None:
    """Take the resolved device, its name and the versions from the first worker that ran."""
    if outcome.device and result.device == AUTO:
        result.device = outcome.device
    if outcome.device_name and not result.device_name:
        result.device_name, result.versions = outcome.device_name, dict(outcome.versions)


def codes(m: ModeResult) -> dict[str, str]:
    """Graph id -> the code its module compiled to, for a column all of whose graphs were
    measured (``core/compiled_from.graph_codes``); {} otherwise (nothing to say the same of)."""
    return graph_codes(m.breakdown, Path(m.run_dir)) if m.breakdown is not None and m.run_dir else {}


def _not_run(err: Exception | None) -> str | None:
    """Errors about the setup (the device, the options) would repeat in every mode."""
    if isinstance(err, (DeviceError, UsageError)):
        return f"not run: {error_line(err)}"
    return None


def run_modes(
    opts: WorkloadOptions,
    modes: list[str],
    run: CompareRun,
    run_dir: Path,
    result: CompareResult,
    model: str = "",
    sides: list[tuple[ModeResult, dict[str, Any]]] | None = None,
) -> Exception | None:
    """Run each mode of one model file, appending to ``result.modes`` (and each that ran to
    ``sides``, with what the timing worker needs to build it again); returns the first error."""
    progress = run.settings.progress
    device = None if opts.device == AUTO else opts.device
    first_err: Exception | None = None
    named = dataclasses.replace(run, settings=dataclasses.replace(run.settings, model_label=model))
    for mode in execution_order(modes):
        label = f"{model}:{mode}" if model else mode
        reason = skip_reason(mode, device) or _not_run(first_err)
        if reason:
            result.modes.append(
                ModeResult(mode=mode, status=Status.SKIPPED, reason=reason, model=model, model_path=opts.path)
            )
            progress.note(f"{label}: skipped ({reason})")
            continue
        side_opts = dataclasses.replace(opts, mode=mode)
        side_dir = column_dir(run_dir, model, mode)
        try:
            m, outcome, err = run_mode(side_opts, side_dir, named)
        except ColumnInterrupted as stop:  # kept as it was stopped, then the compare stops
            stop.column.model, stop.column.model_path = model, opts.path
            result.modes.append(stop.column)
            raise
        resolved = device is None and bool(outcome.device)
        device = device or outcome.device or None
        if resolved and skip_reason(mode, device):  # "auto" turned out not to be CUDA
            m, err = ModeResult(mode=mode, status=Status.SKIPPED, reason=skip_reason(mode, device)), None
        m.model, m.model_path = model, opts.path
        result.modes.append(m)
        note_device(result, outcome)
        if m.ok and sides is not None:
            sides.append((m, {"options": side_opts.to_dict(), "cache_dir": outcome.cache_dir,
                              "modules": list(graph_modules(m, side_dir))}))
        if err is not None:
            result.errors.append(f"{label}: {error_line(err)}")
            first_err = first_err or err
    return first_err
