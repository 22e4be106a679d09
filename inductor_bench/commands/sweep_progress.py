"""The progress lines a sweep prints on stderr as it starts and as each job starts and ends."""

from __future__ import annotations

from pathlib import Path

from ..core.errors import ResultError
from ..core.rundir import COMPARE_FILE, load_compare
from ..core.sweep import Cell, Sweep
from ..core.sweep_cells import grid_size, how_it_ended, progress_line
from ..render.sweep import job_time
from .progress import note
from .sweep_options import ExecutorKind


def print_event(kind: ExecutorKind, out: Path, *, queued: bool):
    """Progress on stderr: a line as the sweep starts, then one per job as it starts (or, on
    Slurm, is submitted to its queue) and ends, with the count."""
    started = "submitted" if queued else "started"

    def on_event(what: str, cell: Cell | None, sweep: Sweep) -> None:
        if what == "plan":
            left = len(sweep.unfinished())
            line = (
                f"sweep: {grid_size(sweep)}, "
                f"{len(sweep.cells) - left} done before, {left} to run on the {kind.value} executor"
            )
        elif what == "lost":  # a done cell whose result cannot be read: measured again
            line = f"sweep: {cell.model}: {cell.reason}; it runs again"
        elif what == "found":  # its job finished though sweep.json did not say so: not run again
            by = "its compare.json" if cell.end_recorded else "its files"
            took = f"; its compare took {cell.seconds:.0f} s by {by}" if cell.seconds is not None else ""
            line = (f"sweep: {cell.model}: found finished on disk, not re-run "
                    f"({out / cell.run_dir} holds its whole result{took})")
        elif what == "start":
            where = f" on {cell.where}" if cell.where else ""
            tries = f" (attempt {cell.attempts})" if cell.attempts > 1 else ""
            line = f"sweep: {cell.model} {started}{where}{tries}; {progress_line(sweep, live=True)}"
        else:
            took = job_time(cell)  # as the notes say it
            saved_in = _measured_in(out, cell)
            ended = how_it_ended(cell, took, saved_in)
            line = f"sweep: {cell.model} {ended}; {progress_line(sweep, live=True)}"
        note(line)

    return on_event


def _measured_in(out: Path, cell: Cell) -> str | None:
    """The cell's run directory where its compare saved a column it measured; else None."""
    path = out / cell.run_dir / COMPARE_FILE if cell.run_dir else None
    try:
        r = load_compare(path) if path is not None and path.is_file() else None
    except ResultError:
        return None
    return str(out / cell.run_dir) if r is not None and any(m.ok for m in r.modes) else None
