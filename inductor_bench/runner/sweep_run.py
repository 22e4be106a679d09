"""Running a sweep in its directory: claiming it (or resuming the sweep it holds), a job per
unfinished cell on an executor, ``sweep.json`` saved whole after every start and end. Never
renders; the command gets each start and end through ``on_event``.

The directory::

    DIR/
      sweep.json         the grid, every job's options, each cell's status (core/sweep.py)
      <model>/           a cell's compare run directory (a retry: <model>.try2, ...)
      logs/<run>.log     the console output of that attempt
      .sweep.lock        held while a sweep runs here: a second one is refused
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import secrets
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

from ..core.compare import CompareResult
from ..core.errors import ResultError, UsageError, WorkerError
from ..core.rundir import (
    COMPARE_FILE,
    HTML_REPORT_FILE,
    META_FILE,
    REPORT_FILE,
    load_compare,
    read_result_json,
)
from ..core.sweep import LOGS_DIR, SWEEP_FILE, Cell, CellStatus, Sweep, attempt_name
from ..core.sweep_cells import ended, last_error_line, not_its_end
from ..core.sweep_plan import attempt_dir, resume
from . import stop
from .rundir import WriteError, being_written, lock_held, make_dir, write_atomic, write_errors
from .sweep_exec import Executor, run_jobs
from .sweep_job import Job, JobOutcome, unpack
from .worker import describe_exit

LOCK_FILE = ".sweep.lock"
MARKER_FILE = ".sweep-marker"  # a job that reads it back shares this file system

# (what happened: "lost" | "found" | "plan" | "start" | "end", the cell (None for "plan"), the
# sweep as it is now). "lost": a done cell whose result cannot be read, run again; "found": a cell
# whose job's whole result is on disk though sweep.json did not say it done, not run again.
OnEvent = Callable[[str, Cell | None, Sweep], None]
# A cell's job command: ``python -m`` and these arguments, without --out.
Command = Callable[[Sweep, Cell], list[str]]


def compare_command(sweep: Sweep, cell: Cell) -> list[str]:
    """``inductor_bench compare MODEL --modes ... --device ... <the sweep's compare options>``."""
    return [
        "inductor_bench",
        "compare",
        cell.model_path,
        "--modes",
        ",".join(sweep.modes),
        "--device",
        sweep.device,
        *sweep.compare_args,
    ]


def load_sweep(sweep_dir: Path) -> Sweep | None:
    """The sweep saved in ``sweep_dir``; None where it holds none."""
    if not (sweep_dir / SWEEP_FILE).exists():
        return None
    p, data = read_result_json(sweep_dir / SWEEP_FILE, (SWEEP_FILE,))
    try:
        return Sweep.from_dict(data)
    except ResultError as e:
        raise ResultError(f"{p}: {e}") from None


def run_sweep(
    sweep_dir: Path,
    new: Sweep,
    executor: Callable[[], Executor],
    *,
    on_event: OnEvent,
    timeout_s: float | None = None,
    command: Command = compare_command,
    shared_marker: bool = False,
    resolve_device: Callable[[str], str] | None = None,
    may_launch: Callable[[], str | None] = lambda: None,
) -> Sweep:
    """Run every unfinished cell of ``new`` (or of the same sweep already in ``sweep_dir``)
    on the executor ``executor()`` makes (only when a cell is left to run), and return the
    sweep as saved. ``on_event("plan", None, sweep)`` comes first. ``shared_marker``: write a
    marker the jobs read to tell whether they share this file system (executors on other
    machines). ``resolve_device``: the device a ``--device`` value runs on, for telling whether
    the sweep in ``sweep_dir`` is this one (``core.sweep_plan.resume``). ``may_launch``: asked
    before each job's launch; its reason stops the launches (``LaunchesStopped``, once the
    running jobs have ended, their cells and the others' saved). KeyboardInterrupt
    stops the running jobs, saves their cells as interrupted, and is raised again."""
    sweep_dir = sweep_dir.absolute()
    with _claimed(sweep_dir):
        sweep = resume(new, load_sweep(sweep_dir), str(sweep_dir), resolve_device)
        for cell in sweep.cells:  # a done cell whose result is gone or torn is measured again
            if cell.done and (lost := _lost_result(sweep_dir, cell)) is not None:
                cell.status, cell.reason = CellStatus.PENDING, lost
                on_event("lost", cell, sweep)
        for cell in sweep.unfinished():  # a job that finished though sweep.json lags (a failed save)
            if _found_finished(sweep_dir, sweep, cell):
                on_event("found", cell, sweep)
        save(sweep_dir, sweep)
        marker = _write_marker(sweep_dir) if shared_marker else None
        jobs = {}
        before = {c.model: c.status for c in sweep.unfinished()}
        for cell in sweep.unfinished():
            cell.status = CellStatus.PENDING
            run_dir = _free_attempt(sweep_dir, cell)
            jobs[cell.model] = Job(
                model=cell.model,
                argv=command(sweep, cell),
                out_dir=str(sweep_dir / run_dir),
                timeout_s=timeout_s,
                marker=marker,
            )
        save(sweep_dir, sweep)
        on_event("plan", None, sweep)
        if not jobs:
            return sweep

        def started(job: Job, slot: str | None) -> None:
            cell = sweep.cell(job.model)
            cell.status, cell.attempts = CellStatus.RUNNING, cell.attempts + 1
            cell.run_dir = Path(job.out_dir).name
            _claim_attempt(sweep_dir / cell.run_dir)
            cell.where = f"CUDA_VISIBLE_DEVICES={slot}" if slot is not None else ""
            save(sweep_dir, sweep)
            on_event("start", cell, sweep)

        def finished(job: Job, outcome: JobOutcome) -> None:
            cell = sweep.cell(job.model)
            record_outcome(sweep_dir, cell, outcome)
            save(sweep_dir, sweep)
            on_event("end", cell, sweep)

        try:
            refused = run_jobs(executor(), list(jobs.values()), started, finished, may_launch)
        except KeyboardInterrupt as stopped:
            try:
                _not_reached(sweep_dir, sweep, before)
            except WriteError as e:  # the jobs' failed saves are said with this one
                raise stop.with_unsaved(stopped, e) from stopped
            raise
        except BaseException:
            _not_reached(sweep_dir, sweep, before)
            raise
        if refused is not None:
            _not_reached(sweep_dir, sweep, before)
            raise LaunchesStopped(refused, sweep)
        return sweep


class LaunchesStopped(WorkerError):
    """No other job was launched (``run_sweep``'s ``may_launch`` said why); ``sweep``: as saved."""

    def __init__(self, reason: str, sweep: Sweep) -> None:
        super().__init__(reason)
        self.sweep = sweep


def job_not_returned(run_dir: Path) -> str | None:
    """Where ``run_dir`` is an attempt ``recorded_running`` by a sweep running now (it holds its
    ``LOCK_FILE``), still empty (a job on a machine that cannot see it returns its run
    directory as it ends), the line that says so; else None."""
    sweep_dir = recorded_running(run_dir)
    if sweep_dir is None or not lock_held(sweep_dir / LOCK_FILE):
        return None
    return (f"{run_dir}: an attempt of the sweep running in {sweep_dir} whose job has not ended: "
            "no result here yet")


def recorded_running(run_dir: Path) -> Path | None:
    """The directory of the sweep whose record (its parent's ``sweep.json``, read and checked)
    has ``run_dir`` as a cell's attempt whose job is running, whether or not a sweep runs there
    now (a copy of a sweep made while it ran records it so, as does a sweep killed outright). A
    sweep's record that cannot be read says nothing here."""
    sweep_dir, name = run_dir.absolute().parent, run_dir.absolute().name
    try:
        sweep = load_sweep(sweep_dir) if (sweep_dir / SWEEP_FILE).is_file() else None
    except ResultError:
        return None
    cells = sweep.cells if sweep is not None else []
    return sweep_dir if any(c.run_dir == name and c.status == CellStatus.RUNNING for c in cells) else None


def _not_reached(sweep_dir: Path, sweep: Sweep, before: dict[str, str]) -> None:
    """A cell left pending by a stopped sweep is again what its last attempt was (failed,
    interrupted, ...), with that attempt's reason and results, not a pending cell that says why
    an earlier attempt ended."""
    back = [c for c in sweep.cells if c.status == CellStatus.PENDING
            and before.get(c.model) not in (None, CellStatus.PENDING, CellStatus.RUNNING)]
    for c in back:
        c.status = before[c.model]
    if back:
        save(sweep_dir, sweep)


def record_outcome(sweep_dir: Path, cell: Cell, outcome: JobOutcome) -> None:
    """The cell after its job's ``outcome``: its status and reason, then its log and (from a job
    on another file system) its run directory put in the sweep's directory (where that fails, a
    full disk, the cell still says how its job ended)."""
    cell.where = outcome.where or cell.where
    cell.seconds, cell.found_on_disk, cell.end_recorded = round(outcome.seconds, 3), False, False
    reason = last_error_line(outcome.log) or outcome.error
    if reason is None and outcome.exit_code not in (None, 0) and not outcome.timed_out:
        reason = f"compare {describe_exit(outcome.exit_code)}"
    ended(cell, outcome.exit_code, timed_out=outcome.timed_out, reason=reason)
    if outcome.stopped and not cell.done:
        # stopped with the sweep: by the signal the sweep got (its jobs get SIGINT from it)
        if cell.status != CellStatus.FAILED:
            cell.reason = f"stopped by {signal.Signals(stop.received() or signal.SIGINT).name}"
        cell.status = CellStatus.INTERRUPTED
    with stop.shielded():
        log_dir = sweep_dir / LOGS_DIR
        make_dir(log_dir)
        write_atomic(log_dir / f"{cell.run_dir}.log", outcome.log)
        run_dir = sweep_dir / cell.run_dir
        if outcome.archive is not None and not (run_dir.is_dir() and any(run_dir.iterdir())):
            with write_errors(run_dir):
                if run_dir.is_dir():
                    run_dir.rmdir()  # the empty directory the attempt claimed as it started
                unpack(outcome.archive, run_dir)


def save(sweep_dir: Path, sweep: Sweep) -> None:
    """``sweep.json``, whole or not at all; a stop signal waits until it is written."""
    with stop.shielded():
        write_atomic(sweep_dir / SWEEP_FILE, sweep.to_json())


def load_results(sweep_dir: Path, sweep: Sweep) -> dict[str, CompareResult | None]:
    """Each cell's compare result (``core.rundir.load_compare``), None where its run
    directory holds none or one that cannot be read (``read_results`` says why)."""
    return read_results(sweep_dir, sweep)[0]


def read_results(
    sweep_dir: Path, sweep: Sweep
) -> tuple[dict[str, CompareResult | None], dict[str, str], dict[str, str]]:
    """Each cell's compare result; why a cell's result could not be read (its ``compare.json``
    torn or damaged: ``load_compare``'s line); and, for a cell whose last job did not run to
    its end, the earlier attempt shown instead where one measured more columns (the newest of
    those that measured the most): its run directory's name."""
    results: dict[str, CompareResult | None] = {}
    errors: dict[str, str] = {}
    earlier: dict[str, str] = {}
    for cell in sweep.cells:
        results[cell.model] = _read(sweep_dir, cell.run_dir, cell.model, errors)
        if cell.comparable or cell.attempts < 2:
            continue
        best, most = cell.run_dir, _measured(results[cell.model])
        for k in range(cell.attempts, 0, -1):  # newest first: a tie keeps the newer attempt
            name = attempt_name(cell.model, k)
            if name != cell.run_dir and (r := _read(sweep_dir, name, cell.model, {})) and _measured(r) > most:
                best, most, results[cell.model] = name, _measured(r), r
        if best != cell.run_dir:
            earlier[cell.model] = best
    return results, errors, earlier


def _read(sweep_dir: Path, run_dir: str, model: str, errors: dict[str, str]) -> CompareResult | None:
    path = sweep_dir / run_dir / COMPARE_FILE if run_dir else None
    try:
        return load_compare(path) if path is not None and path.exists() else None
    except ResultError as e:
        errors[model] = str(e)
        return None


def _measured(result: CompareResult | None) -> int:
    """The columns a compare measured (status ok)."""
    return sum(m.ok for m in result.modes) if result is not None else 0


def _lost_result(sweep_dir: Path, cell: Cell) -> str | None:
    """Why a done cell's compare result cannot be read (its run directory removed, its
    ``compare.json`` torn); None where it reads."""
    read = _result_in(sweep_dir / (cell.run_dir or cell.model))
    return read if isinstance(read, str) else None


def _result_in(run_dir: Path) -> CompareResult | str:
    """The compare result saved in ``run_dir``, read and checked as every result is, or why
    it cannot be read (gone, torn)."""
    path = run_dir / COMPARE_FILE
    if not path.is_file():
        return f"{path}: its result is gone"
    try:
        return load_compare(path)
    except ResultError as e:
        return str(e)


def _found_finished(sweep_dir: Path, sweep: Sweep, cell: Cell) -> bool:
    """Whether one of the cell's attempts on disk holds its job's whole result, though the sweep
    did not record it done (a stop whose saves failed left sweep.json saying ``running``, or
    before the attempt's start): the cell is then done from the newest such attempt, never run
    again. Attempts the sweep never recorded, whose directories are there, are counted."""
    last = cell.attempts
    while (sweep_dir / attempt_name(cell.model, last + 1)).exists():
        last += 1
    whole = next(((k, result) for k in range(last, 0, -1)
                  if (result := _whole_result(sweep_dir / attempt_name(cell.model, k), sweep, cell))), None)
    if whole is None:
        return False
    if attempt_name(cell.model, whole[0]) != cell.run_dir:
        cell.where = ""  # its record's was another attempt's
    cell.status, cell.reason, cell.exit_code = CellStatus.DONE, None, 0
    cell.attempts, cell.run_dir = last, attempt_name(cell.model, whole[0])
    cell.found_on_disk, cell.end_recorded = True, bool(whole[1].finished)
    cell.seconds = _seconds_on_disk(sweep_dir / cell.run_dir, whole[1])
    return True


def _seconds_on_disk(run_dir: Path, result: CompareResult) -> float | None:
    """How long a compare found whole on disk took, by what it wrote: its start (``created`` in
    its compare.json, to the second) to its end, the ``finished`` it recorded there, else (a
    result written before it was recorded) the last of the files it writes at its end, whose
    times a copy (``cp -r``) resets. The time the sweep's record held, if any, was of an earlier
    attempt (its start does not reset it)."""
    try:
        start = datetime.datetime.fromisoformat(result.created).timestamp()
        end = (datetime.datetime.fromisoformat(result.finished).timestamp() if result.finished else
               max((run_dir / f).stat().st_mtime for f in (COMPARE_FILE, *_WRITTEN_AFTER)))
    except (ValueError, TypeError, OSError):
        return None
    return float(round(end - start)) if end >= start else None


_WRITTEN_AFTER = (META_FILE, REPORT_FILE, HTML_REPORT_FILE)  # by a compare after its result


def _whole_result(run_dir: Path, sweep: Sweep, cell: Cell) -> CompareResult | None:
    """The compare result in ``run_dir`` where it holds what the cell's compare saves when it
    runs to its end (else None): no live process writing it, its ``compare.json`` read and
    checked as every result is, of this cell's model and the sweep's modes, no column stopped or
    failed (``core.sweep_cells.not_its_end``), and the files a compare writes after its result
    (meta.json, report.txt, index.html) and each measured column's directory there: a run
    directory cut short as it was unpacked lacks them."""
    if being_written(run_dir):
        return None
    if not all((run_dir / f).is_file() for f in _WRITTEN_AFTER):
        return None
    result = _result_in(run_dir)
    if isinstance(result, str):
        return None
    columns = [Path(m.run_dir) for m in result.modes if m.ok and m.run_dir]
    return result if not_its_end(result, sweep, cell) is None and all(c.is_dir() for c in columns) else None


def _claim_attempt(run_dir: Path) -> None:
    """The attempt's directory, made as its job starts (compare claims it empty): every attempt
    the sweep records has one, so a job killed before its compare wrote anything leaves an empty
    ``mlp`` beside its log, and the next attempt's ``mlp.try2`` does not follow a name never made."""
    with stop.shielded():
        make_dir(run_dir, "the run directory")


def _free_attempt(sweep_dir: Path, cell: Cell) -> str:
    """The next attempt's directory name; an attempt whose directory exists although the
    sweep never recorded it (a sweep killed outright as it started) counts as made."""
    while (sweep_dir / attempt_dir(cell)).exists():
        cell.attempts += 1
    return attempt_dir(cell)


def _write_marker(sweep_dir: Path) -> tuple[str, str]:
    token = secrets.token_hex(16)
    write_atomic(sweep_dir / MARKER_FILE, token)
    return str(sweep_dir / MARKER_FILE), token


@contextlib.contextmanager
def _claimed(sweep_dir: Path) -> Iterator[None]:
    """Hold the directory for this sweep: it is made, or is empty, or holds a sweep; a second
    sweep running there at the same time is refused."""
    try:
        sweep_dir.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):  # it, or a folder above it, is a file: bad input
        raise UsageError(f"--out {sweep_dir}: not a directory") from None
    except OSError as e:
        raise WriteError(f"--out {sweep_dir}: cannot create it ({e.strerror or e})") from None
    known = {SWEEP_FILE, LOCK_FILE}
    if not (sweep_dir / SWEEP_FILE).exists() and any(p.name not in known for p in sweep_dir.iterdir()):
        raise UsageError(f"--out {sweep_dir}: not empty and holds no sweep (results are never overwritten)")
    with open(sweep_dir / LOCK_FILE, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(f"--out {sweep_dir}: another sweep is running there") from None
        yield
