"""How a sweep's cell ended (its job's exit status, its error line) and the cells' progress line."""

from __future__ import annotations

import signal

from .ceilings import STOPPED_NOTE
from .compare import CompareResult, timing_failure
from .sweep import Cell, CellStatus, Sweep
from .vocab import CompileMode, Status

# A job past --job-timeout is stopped as Ctrl-C stops compare (it saves what it measured), and
# killed if it has not ended within the grace.
TIMED_OUT = "ran past --job-timeout and was stopped"
# A compare stopped by a signal it handles exits 128 + the signal (README's exit table).
_STOP_CODES = {129, 130, 143}


def ended(cell: Cell, exit_code: int | None, *, timed_out: bool, reason: str | None) -> None:
    """The cell after its job ended with ``exit_code`` (None: it never started or its
    process could not be waited for)."""
    cell.exit_code = exit_code
    # compare's own line when stopped ("interrupted", "error: interrupted; what was measured is
    # saved in DIR") only repeats the status: the signal (or the time limit) is the reason
    said = reason if reason and not _says_interrupted(reason) else None
    if timed_out:
        cell.status, cell.reason = CellStatus.TIMEOUT, said or TIMED_OUT
    elif exit_code == 0:
        cell.status, cell.reason = CellStatus.DONE, None
    elif exit_code is not None and exit_code in _STOP_CODES:
        cell.status = CellStatus.INTERRUPTED
        cell.reason = said or f"stopped by {signal.Signals(exit_code - 128).name}"
    elif exit_code is not None and exit_code < 0:
        cell.status, cell.reason = CellStatus.KILLED, reason or f"killed by signal {-exit_code}"
    else:
        cell.status = CellStatus.FAILED
        cell.reason = reason or (f"exited with code {exit_code}" if exit_code is not None else "failed")


def not_its_end(result: CompareResult, sweep: Sweep, cell: Cell) -> str | None:
    """Why ``result``, read from one of the cell's attempts, is not what its job saves when its
    compare runs to its end and exits 0 (every column of the sweep's modes ended ok or skipped,
    no stop and no failed timing among its errors); None where it is."""
    columns = {*sweep.modes, *(() if "--no-eager" in sweep.compare_args else (CompileMode.EAGER,))}
    if result.model_path != cell.model_path or {m.mode for m in result.modes} != columns:
        return "another job's result"
    cut = [m.label for m in result.modes if m.status not in (Status.OK, Status.SKIPPED)]
    if cut:
        return f"{', '.join(cut)} did not end ok"
    if "interrupted" in result.errors or STOPPED_NOTE in result.errors:
        return "its compare was stopped"
    return "its interleaved timing failed" if timing_failure(result) is not None else None


def _says_interrupted(line: str) -> bool:
    return line.removeprefix("error: ").startswith(CellStatus.INTERRUPTED)


def how_it_ended(cell: Cell, took: str | None, saved_in: str | None = None) -> str:
    """The cell's status as the progress lines and the notes say it: ``done in 5.00 s``,
    ``failed: error: ...: the model raised in 5.00 s``, ``interrupted: stopped by SIGINT after
    9.60 s; what was measured is saved in DIR`` (a job stopped, timed out or killed). ``took``:
    its time, formatted; ``saved_in``: where such a job's measurements are (None: not said)."""
    why = f": {cell.reason}" if cell.reason and not cell.done else ""
    if cell.status not in (CellStatus.INTERRUPTED, CellStatus.TIMEOUT, CellStatus.KILLED):
        return f"{cell.status}{why}{f' in {took}' if took else ''}"
    after = f" after {took}" if took else ""
    saved = f"; what was measured is saved in {saved_in}" if saved_in else ""
    return f"{cell.status}{why}{after}{saved}"


def progress_line(sweep: Sweep, live: bool = False) -> str:
    """``7/21 done, 1 failed, 2 pending``: the cells done, and those in every other status, so
    that the counts add up to the cells (a sweep stopped leaves some ``pending``). ``live``: a
    line of a sweep under way, where the cells running and pending are still to come (``k/N
    done`` says so) and are not named."""
    n = sweep.counts()
    ended_otherwise = (CellStatus.FAILED, CellStatus.TIMEOUT, CellStatus.KILLED, CellStatus.INTERRUPTED)
    named = ended_otherwise if live else (*ended_otherwise, CellStatus.RUNNING, CellStatus.PENDING)
    counts = [f"{n[s]} {s}" for s in named if n[s]]
    return ", ".join([f"{n[CellStatus.DONE]}/{len(sweep.cells)} done", *counts])


def grid_size(sweep: Sweep) -> str:
    """``2 models x 3 modes``."""
    k = len(sweep.modes)
    return f"{models(len(sweep.cells))} x {k} mode{'s' * (k != 1)}"


def models(n: int) -> str:
    """``1 model``, ``2 models``."""
    return f"{n} model{'s' * (n != 1)}"


def last_error_line(log: str) -> str | None:
    """The one line a command prints on an error (``inductor-bench: error: ...``), the last
    of them in ``log``; where it printed none but ended in a Python traceback (a process that
    crashed before its own error handling, an installed tool that changed under a running
    sweep), that traceback's exception line (``crashed: TypeError: ...``); else None."""
    lines = [ln.strip() for ln in log.splitlines() if ln.startswith("inductor-bench: ")]
    return lines[-1].removeprefix("inductor-bench: ") if lines else _traceback_end(log)


def _traceback_end(log: str) -> str | None:
    """The exception line closing the last traceback in ``log``: the first unindented line after
    its ``Traceback (most recent call last):`` (the frames below it are indented)."""
    lines = log.splitlines()
    starts = [i for i, ln in enumerate(lines) if ln.startswith(_TRACEBACK)]
    if not starts:
        return None
    end = next((ln.strip() for ln in lines[starts[-1] + 1:] if ln.strip() and not ln[:1].isspace()), None)
    return f"crashed: {end}" if end else None


_TRACEBACK = "Traceback (most recent call last):"
