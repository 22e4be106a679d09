"""Running a comparison of compile modes: each mode compiled, timed and broken down in
workers, the records (``core/compare.py``) filled and saved. Never renders."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from ..core.compare import EAGER, CompareResult, ModeResult, skip_reason
from ..core.devices import AUTO
from ..core.errors import DeviceError, Interrupted, UsageError, WorkerTimeout, WorkloadError
from ..core.load import Load
from ..core.vocab import CompileMode, Status
from ..core.workload import FACTORY_KIND, WorkloadOptions, file_kind
from .pipeline import CompileOutcome, breakdown_from_outcome, compile_workload
from .presence import check_requested
from .rundir import header, new_run_dir, save_result
from .settings import RunSettings

# Steady-state timing per mode when --repeat is not given: for STEP_BUDGET_S seconds, within
# MIN_STEPS..MAX_STEPS calls. A fixed 30 calls (45 ms of a 1.5 ms step) once left a median
# too loose to call a 1.5x slowdown; a second of samples pins the median of a 1 ms step with a
# 15% spread to about 2% (core/stats.py), and costs little next to compiling.
STEP_BUDGET_S = 1.0
MIN_STEPS = 10
MAX_STEPS = 200
DEFAULT_REPEAT = None  # --repeat N: exactly N calls instead of the budget
# Calls after the first (compile) call that are run but not kept: CUDA graph trees warm up
# on the second call and record on the third, and allocator and caches settle meanwhile.
WARMUP_STEPS = 3


@dataclass
class CompareRun:
    """Settings of one comparison, shared by every mode."""

    repeat: int | None = DEFAULT_REPEAT  # exactly this many timed calls (None: the budget)
    settings: RunSettings = field(default_factory=RunSettings)
    step_budget_s: float = STEP_BUDGET_S
    max_steps: int = MAX_STEPS

    def timing(self) -> RunSettings:
        """The settings of a mode's compile worker: warm-up calls, then the timed ones."""
        if self.repeat is not None:
            return dataclasses.replace(
                self.settings, steps=self.repeat + WARMUP_STEPS, step_budget_s=None, min_steps=1
            )
        return dataclasses.replace(
            self.settings,
            steps=self.max_steps + WARMUP_STEPS,
            step_budget_s=self.step_budget_s,
            min_steps=MIN_STEPS + WARMUP_STEPS,
        )


def _execution_order(modes: list[str]) -> list[str]:
    # Eager and plain modes first: the first run tells which device "auto" resolved to,
    # before deciding whether a CUDA-graph-only mode can run at all.
    return sorted(modes, key=lambda m: (m != EAGER, m in CompileMode.CUDA_GRAPHS_ONLY))


def _mode_status(err: Exception | None) -> str:
    if err is None:
        return Status.OK
    return Status.TIMEOUT if isinstance(err, WorkerTimeout) else Status.FAILED


def _first_line(err: Exception) -> str:
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__


def run_mode(
    opts: WorkloadOptions, mode_dir: Path, run: CompareRun
) -> tuple[ModeResult, CompileOutcome, Exception | None]:
    """Run one mode in workers: time it (and for compiled modes, break it down).

    Returns (mode result, the compile worker's outcome, the first error or None)."""
    mode_dir.mkdir(parents=True, exist_ok=True)
    outcome = compile_workload(opts, mode_dir, run.timing())
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
        m.breakdown, profile_err = breakdown_from_outcome(opts, mode_dir, outcome, run.settings)
        err = err or profile_err
    elif opts.mode != EAGER and err is None:
        err = WorkloadError(f"{opts.path}: mode {opts.mode} compiled nothing")
    m.status = _mode_status(err)
    m.reason = _first_line(err) if err is not None else None
    return m, outcome, err


def _header(opts: WorkloadOptions, run: CompareRun, run_dir: Path) -> CompareResult:
    return CompareResult(
        **header(opts, run_dir),
        repeat=run.repeat or 0,
        step_budget_s=None if run.repeat is not None else run.step_budget_s,
    )


def _note_device(result: CompareResult, outcome: CompileOutcome) -> None:
    """Take the resolved device, its name and the versions from the first worker that ran."""
    if outcome.device and result.device == AUTO:
        result.device = outcome.device
    if outcome.device_name and not result.device_name:
        result.device_name, result.versions = outcome.device_name, dict(outcome.versions)


def run_compare(
    opts: WorkloadOptions,
    modes: list[str],
    *,
    run: CompareRun | None = None,
    out: Path | str | None = None,
    root: Path | str = "runs",
) -> tuple[CompareResult, Path, Exception | None]:
    """Every mode of ``modes`` on the workload ``opts``.

    Returns the result (also saved as ``compare.json`` in the run directory), the run
    directory, and the first error met. Modes after a failed one still run, unless the error
    is about the setup (the device, the options) and would only repeat.
    """
    run = run or CompareRun()
    opts.validate()
    if file_kind(Path(opts.path)) != FACTORY_KIND:
        raise UsageError(
            f"{opts.path}: compare needs a make_workload() factory; "
            "a script's own loop cannot be timed step by step"
        )
    if run.repeat is not None and run.repeat < 1:
        raise UsageError("--repeat must be at least 1")
    check_requested(opts.device)  # before any worker or run directory
    run_dir = new_run_dir(opts.name, "compare", root=root, out=out)
    result = _header(opts, run, run_dir)
    first_err: Exception | None = None
    try:
        first_err = _run_modes(opts, modes, run, run_dir, result)
    except KeyboardInterrupt:
        result.errors.append("interrupted")
        first_err = Interrupted(f"interrupted; what was measured is saved in {run_dir}")
    finally:
        order = {m: i for i, m in enumerate(modes)}
        result.modes.sort(key=lambda m: order[m.mode])
        save_result(run_dir, result, run.settings.on_saved)
    return result, run_dir, first_err


def _not_run(err: Exception | None) -> str | None:
    """Errors about the setup (the device, the options) would repeat in every mode."""
    if isinstance(err, (DeviceError, UsageError)):
        return f"not run: {_first_line(err)}"
    return None


def _run_modes(
    opts: WorkloadOptions, modes: list[str], run: CompareRun, run_dir: Path, result: CompareResult
) -> Exception | None:
    """Run each mode, appending to ``result.modes``; returns the first error."""
    progress = run.settings.progress
    device = None if opts.device == AUTO else opts.device
    first_err: Exception | None = None
    for mode in _execution_order(modes):
        reason = skip_reason(mode, device) or _not_run(first_err)
        if reason:
            result.modes.append(ModeResult(mode=mode, status=Status.SKIPPED, reason=reason))
            progress.note(f"{mode}: skipped ({reason})")
            continue
        m, outcome, err = run_mode(dataclasses.replace(opts, mode=mode), run_dir / mode, run)
        resolved = device is None and bool(outcome.device)
        device = device or outcome.device or None
        if resolved and skip_reason(mode, device):  # "auto" turned out not to be CUDA
            m, err = ModeResult(mode=mode, status=Status.SKIPPED, reason=skip_reason(mode, device)), None
        result.modes.append(m)
        _note_device(result, outcome)
        if err is not None:
            result.errors.append(f"{mode}: {_first_line(err)}")
            first_err = first_err or err
    return first_err
