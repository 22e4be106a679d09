"""Why a run directory holds no final result yet, in the words ``report`` and ``diff`` both
print: the breakdown or compare that writes it is still under way, or a sweep's job that
will fill it still runs elsewhere."""

from __future__ import annotations

from pathlib import Path

from ..runner.rundir import being_written
from ..runner.sweep_run import job_not_returned

# A run whose breakdown or compare still holds it (``runner/rundir.py`` WRITING_LOCK).
IN_PROGRESS = "still being written by the breakdown or compare that made it"


def not_yet_saved(run: Path, verb: str) -> str | None:
    """Of a run directory holding no result yet, the line that says why, where its command is
    still under way (a breakdown or compare writing it, or a sweep's job running elsewhere) and
    when to ``verb`` it; None where none is."""
    if being_written(run):
        return f"{run}: {IN_PROGRESS}, no result saved in it yet: {verb} it once that command has ended"
    if (line := job_not_returned(run)) is not None:
        return f"{line}: {verb} it once the job has ended"
    return None
