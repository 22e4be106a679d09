"""Running a comparison of compile modes: each column run (``compare_columns.py``), then every
one timed interleaved in one worker (``compare_timer.py``), the records (``core/compare.py``)
filled and saved. Never renders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.compare import (
    NOT_RUN_INTERRUPTED,
    OWN_SAMPLES,
    TIMING_FAILED,
    CompareResult,
    ModeResult,
    same_code_groups,
)
from ..core.errors import BenchError, Interrupted, UsageError
from ..core.vocab import Status
from ..core.workload import FACTORY_KIND, WorkloadOptions, default_batch_size
from . import compile_modes, stop
from .cache import check_caches
from .compare_columns import codes, error_line, run_modes
from .compare_names import check_names, column_dir, model_names
from .compare_timer import CompareRun, graph_modules
from .pipeline import step_turns
from .presence import check_requested
from .rundir import header, new_run_dir, planned_run_dir, save_result, writing


def _header(opts: WorkloadOptions, run: CompareRun, run_dir: Path) -> CompareResult:
    return CompareResult(
        **header(opts, run_dir),
        freezing=opts.freezing,
        repeat=run.repeat or 0,
        step_budget_s=None if run.repeat is not None else run.step_budget_s,
    )


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
            err = run_modes(f, modes, run, run_dir, result, name, sides)
            first_err = first_err or err
        result.same_code = same_code_groups({m.label: codes(m) for m, _ in sides})
        first_err = first_err or _time_interleaved(sides, run, run_dir, result)
    except KeyboardInterrupt:
        result.errors.append("interrupted")
        _columns_not_run(result, modes, names, files)
        first_err = Interrupted(f"interrupted; what was measured is saved in {run_dir}")
    finally:
        order = {m: i for i, m in enumerate(modes)}
        models = {n: i for i, n in enumerate(names)}
        result.modes.sort(key=lambda m: (models.get(m.model, 0), order[m.mode]))
        with stop.saved_first(first_err, f"what was measured is saved in {run_dir}"):  # a stop waits for it
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
        result.errors.append(f"{TIMING_FAILED}{error_line(e)}{OWN_SAMPLES}")
        return e
    turns = data.get("turns") or [None] * len(sides)
    for (m, _), blocks, raw in zip(sides, data["blocks"], turns, strict=False):
        m.paired_ms = [list(b) for b in blocks]
        m.step_turns = step_turns(raw, graph_modules(m, Path(m.run_dir)))
    result.interleaved = {
        "rounds": max(len(b) for b in data["blocks"]),
        "block_steps": data.get("block_steps"),
        # why each column stopped: call limit | time budget | None (the rounds ran out)
        "stopped": {m.label: why for (m, _), why in zip(sides, data.get("stopped") or [], strict=False)},
        "load": data.get("load"),
        # each column's intra-op threads in the timing (core/compare_threads.py)
        "threads": {m.label: n for (m, _), n in zip(sides, data.get("threads") or [], strict=False)},
        "fx_cache": data.get("fx_cache"),
    }
    return None
