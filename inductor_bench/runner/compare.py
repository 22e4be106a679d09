"""Running a comparison of compile modes: each mode compiled, timed and broken down in
workers, the records (``core/compare.py``) filled and saved. Never renders."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.compare import (
    EAGER,
    NOT_RUN_INTERRUPTED,
    OWN_SAMPLES,
    TIMING_FAILED,
    CompareResult,
    ModeResult,
    same_code_groups,
    skip_reason,
)
from ..core.compiled_from import graph_codes
from ..core.devices import AUTO
from ..core.errors import BenchError, DeviceError, Interrupted, UsageError, WorkerTimeout, WorkloadError
from ..core.load import Load
from ..core.rundir import LOGS_DIR
from ..core.vocab import CompileMode, Status
from ..core.workload import FACTORY_KIND, WorkloadOptions, default_batch_size
from . import compile_modes
from .cache import check_caches
from .capture import inductor_env
from .pipeline import CompileOutcome, breakdown_from_outcome, compile_workload, step_turns
from .presence import check_requested
from .rundir import header, lock_writing, new_run_dir, planned_run_dir, save_result, writing
from .settings import RunSettings
from .worker import run_worker

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


TIMER_WORKER = "inductor_bench.runner.timer"


@dataclass
class CompareRun:
    """Settings of one comparison, shared by every mode."""

    repeat: int | None = DEFAULT_REPEAT  # exactly this many timed calls (None: the budget)
    settings: RunSettings = field(default_factory=RunSettings)
    step_budget_s: float = STEP_BUDGET_S
    max_steps: int = MAX_STEPS

    def timing(self) -> RunSettings:
        """The settings of a mode's compile worker: warm-up calls, then as many timed as a
        breakdown times (they set the time outside its graphs). The comparison's step times
        come from the interleaved timing (``timer_request``); these stand in for a column
        when it cannot run, with their unpaired verdicts."""
        if self.repeat is not None:
            return dataclasses.replace(
                self.settings, steps=self.repeat + WARMUP_STEPS, step_budget_s=None, min_steps=1
            )
        return dataclasses.replace(
            self.settings,
            steps=self.settings.steps + WARMUP_STEPS,
            min_steps=self.settings.min_steps + WARMUP_STEPS,
        )

    def time_sides(
        self, sides: list[dict[str, Any]], device: str, run_dir: Path, label: str
    ) -> dict[str, Any]:
        """Every side timed interleaved in one timing worker (``runner/timer.py``), under a
        progress phase named ``label``; its log in ``run_dir``. Raises ``BenchError``."""
        first = sides[0].get("cache_dir")
        with self.settings.progress.phase(label) as ph:
            try:
                data = run_worker(
                    TIMER_WORKER, self.timer_request(sides, device), timeout=self.settings.timeout,
                    env=inductor_env(Path(first)) if first else None, echo=self.settings.echo,
                    log_path=run_dir / LOGS_DIR / "timer.log",
                )
            except WorkerTimeout:
                ph["failed"] = f"ran past --timeout {self.settings.timeout:g}s"
                raise
            ph["done"] = f"{max(len(b) for b in data['blocks'])} rounds"
        return data

    def timer_request(self, sides: list[dict[str, Any]], device: str) -> dict[str, Any]:
        """The request of the timing worker (``runner/timer.py``): every side, the budget
        per side (or exactly ``repeat`` calls each)."""
        exact = self.repeat is not None
        return {
            "sides": sides,
            "device": device,
            "budget_s": None if exact else self.step_budget_s,
            "max_steps": self.repeat if exact else self.max_steps,
            "min_steps": 1 if exact else MIN_STEPS,
            "exact": exact,
        }





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
        freezing=opts.freezing,
        repeat=run.repeat or 0,
        step_budget_s=None if run.repeat is not None else run.step_budget_s,
    )


def _note_device(result: CompareResult, outcome: CompileOutcome) -> None:
    """Take the resolved device, its name and the versions from the first worker that ran."""
    if outcome.device and result.device == AUTO:
        result.device = outcome.device
    if outcome.device_name and not result.device_name:
        result.device_name, result.versions = outcome.device_name, dict(outcome.versions)


# What a name's directory cannot hold where a column compiles in a cache of its own: the C++
# compile command is split as a shell would (``cache.check_compilable``).
_SPLIT_BY_SHELL = re.compile(r"""[\s'"\\]+""")


def model_names(paths: list[str]) -> list[str]:
    """Names for the model files of one comparison (a sweep's cells too): their stems, each run
    of spaces, quotes and backslashes made one ``_`` (``my mlp.py`` -> ``my_mlp``: the name is
    a column's directory, which the C++ compile command must hold whole), made unique (``mlp``,
    ``mlp-2`` for the same file given twice)."""
    names: list[str] = []
    for p in paths:
        stem = _SPLIT_BY_SHELL.sub("_", Path(p).stem)
        name, k = stem, 1
        while name in names:
            k += 1
            name = f"{stem}-{k}"
        names.append(name)
    return names


def check_names(names: list[str], files: int) -> None:
    """``--names``: one name per model file, each its own, none empty (said with what is wrong)."""
    def some(n: int, what: str) -> str:
        return f"{n} {what}" + ("" if n == 1 else "s")
    twice = [n for n in names if names.count(n) > 1]
    wrong = (f"{some(len(names), 'name')} for {some(files, 'model file')}" if len(names) != files
             else f"{twice[0]} given twice" if twice else "an empty name" if not all(names) else None)
    if wrong:
        give = "1 name" if files == 1 else f"{files} different names, one per model file"
        raise UsageError(f"--names: {wrong}: give {give}")


@writing()  # its run directory and columns held as being written until it returns (or the command's)
def run_compare(
    opts: WorkloadOptions,
    modes: list[str],
    *,
    run: CompareRun | None = None,
    out: Path | str | None = None,
    root: Path | str = "runs",
    also: list[WorkloadOptions] | None = None,
    names: list[str] | None = None,
) -> tuple[CompareResult, Path, Exception | None]:
    """Every mode of ``modes`` on the workload ``opts`` (and on each of ``also``: other model
    files, the first being the base each is judged against; ``names`` names them, by default
    their stems made unique).

    Returns the result (also saved as ``compare.json`` in the run directory), the run
    directory, and the first error met. Modes after a failed one still run, unless the error
    is about the setup (the device, the options) and would only repeat. Once every column has
    compiled, one worker times them all, interleaved (``runner/timer.py``).
    """
    run = run or CompareRun()
    files = [opts, *(also or [])]
    for f in files:
        f.validate()
        if f.kind != FACTORY_KIND:
            raise UsageError(
                f"{f.path}: compare needs a make_workload() factory; "
                "a script's own loop cannot be timed step by step"
            )
    if run.repeat is not None and run.repeat < 1:
        raise UsageError("--repeat must be at least 1")
    if names is not None:
        check_names(names, len(files))
    check_requested(opts.device)  # before any worker or run directory, as are its caches' paths
    compile_modes.check_before_running(modes)
    title = names[0] if names and len(files) == 1 else None  # one file: its name titles it
    names = [""] if len(files) == 1 else names or model_names([f.path for f in files])
    planned = planned_run_dir(opts.name, "compare", root=root, out=out)
    check_caches(planned, [column_dir(Path(), n, m).name for n in names for m in modes],
                 fresh=run.settings.fresh_cache, freezing=opts.freezing, device=opts.device,
                 came_from="--out" if out is not None else "--runs-dir")
    run_dir = new_run_dir(opts.name, "compare", root=root, out=out)
    result = _header(opts, run, run_dir)
    result.model = title or result.model
    if len(files) > 1:
        result.models = names
        result.model = " vs ".join(names)
        if opts.batch_size is None and len({default_batch_size(f.path) for f in files}) > 1:
            result.batch_size = None  # the factories' defaults differ: no one batch to name
    first_err: Exception | None = None
    try:
        sides: list[tuple[ModeResult, dict[str, Any]]] = []
        for name, f in zip(names, files, strict=True):
            err = _run_modes(f, modes, run, run_dir, result, name, sides)
            first_err = first_err or err
        result.same_code = same_code_groups({m.label: _codes(m) for m, _ in sides})
        first_err = first_err or _time_interleaved(sides, run, run_dir, result)
    except KeyboardInterrupt:
        result.errors.append("interrupted")
        _columns_not_run(result, modes, names, files)
        first_err = Interrupted(f"interrupted; what was measured is saved in {run_dir}")
    finally:
        order = {m: i for i, m in enumerate(modes)}
        models = {n: i for i, n in enumerate(names)}
        result.modes.sort(key=lambda m: (models.get(m.model, 0), order[m.mode]))
        save_result(run_dir, result, run.settings.on_saved)
    return result, run_dir, first_err


def _columns_not_run(
    result: CompareResult, modes: list[str], names: list[str], files: list[WorkloadOptions]
) -> None:
    """A column the interruption kept from running (or cut short) is shown as such, not
    left out of the table."""
    have = {m.label for m in result.modes}
    for name, f in zip(names, files, strict=True):
        for mode in modes:
            column = ModeResult(mode=mode, status=Status.INTERRUPTED, reason=NOT_RUN_INTERRUPTED)
            column.model, column.model_path = name, f.path
            if column.label not in have:
                result.modes.append(column)


def _graph_modules(m: ModeResult, side_dir: Path) -> dict[str, str]:
    """Compiled module -> graph id, for a column's measured graphs (the modules' copies in its
    run directory), which the timing worker times in turns with the column's step."""
    graphs = m.breakdown.measured() if m.breakdown is not None else []
    return {str((side_dir / g.module).resolve()): g.id for g in graphs if g.module}


def _codes(m: ModeResult) -> dict[str, str]:
    """Graph id -> the code its module compiled to, for a column all of whose graphs were
    measured (``core/compiled_from.graph_codes``); {} otherwise (nothing to say the same of)."""
    return graph_codes(m.breakdown, Path(m.run_dir)) if m.breakdown is not None and m.run_dir else {}


def _not_run(err: Exception | None) -> str | None:
    """Errors about the setup (the device, the options) would repeat in every mode."""
    if isinstance(err, (DeviceError, UsageError)):
        return f"not run: {_first_line(err)}"
    return None


def column_dir(run_dir: Path, model: str, mode: str) -> Path:
    """A column's directory in the run's: ``MODE``, or ``MODEL-MODE`` with several model files."""
    return run_dir / (f"{model}-{mode}" if model else mode)


def _run_modes(
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
    for mode in _execution_order(modes):
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
        m, outcome, err = run_mode(side_opts, side_dir, named)
        resolved = device is None and bool(outcome.device)
        device = device or outcome.device or None
        if resolved and skip_reason(mode, device):  # "auto" turned out not to be CUDA
            m, err = ModeResult(mode=mode, status=Status.SKIPPED, reason=skip_reason(mode, device)), None
        m.model, m.model_path = model, opts.path
        result.modes.append(m)
        _note_device(result, outcome)
        if m.ok and sides is not None:
            sides.append((m, {"options": side_opts.to_dict(), "cache_dir": outcome.cache_dir,
                              "modules": list(_graph_modules(m, side_dir))}))
        if err is not None:
            result.errors.append(f"{label}: {_first_line(err)}")
            first_err = first_err or err
    return first_err


def _time_interleaved(
    sides: list[tuple[ModeResult, dict[str, Any]]], run: CompareRun, run_dir: Path, result: CompareResult
) -> BenchError | None:
    """Time every column that ran in one worker, interleaved (``runner/timer.py``), into
    ``ModeResult.paired_ms``; a single column too, so that it gets the same budget of calls.
    If it fails, each column keeps its compile worker's samples, the comparison says why, and
    the error is returned (the run's exit status is its: 4 for a worker past --timeout)."""
    if not sides:
        return None
    budget = f"{run.repeat} calls" if run.repeat is not None else f"{run.step_budget_s:g} s"
    try:
        data = run.time_sides([spec for _, spec in sides], result.device, run_dir,
                              f"timing {len(sides)} columns interleaved ({budget} each)" if len(sides) > 1
                              else f"timing its steps ({budget})")
    except BenchError as e:
        result.errors.append(f"{TIMING_FAILED}{_first_line(e)}{OWN_SAMPLES}")
        return e
    turns = data.get("turns") or [None] * len(sides)
    for (m, _), blocks, raw in zip(sides, data["blocks"], turns, strict=False):
        m.paired_ms = [list(b) for b in blocks]
        m.step_turns = step_turns(raw, _graph_modules(m, Path(m.run_dir)))
    result.interleaved = {
        "rounds": max(len(b) for b in data["blocks"]),
        "block_steps": data.get("block_steps"),
        # why each column stopped: call limit | time budget | None (the rounds ran out)
        "stopped": {m.label: why for (m, _), why in zip(sides, data.get("stopped") or [], strict=False)},
        "load": data.get("load"),
        "fx_cache": data.get("fx_cache"),
    }
    return None
