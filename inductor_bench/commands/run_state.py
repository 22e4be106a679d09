"""Why a run directory holds no final result yet, in the words ``report`` and ``diff`` both
print: the breakdown or compare that writes it is still under way, or a sweep's job that
will fill it still runs elsewhere."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..core.rundir import LOGS_DIR, META_FILE
from ..runner.rundir import being_written
from ..runner.sweep_run import job_not_returned, recorded_running

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


def ended_unsaved(run: Path, meta: dict[str, Any]) -> str:
    """Of a run directory holding no result, held by no writer, whose ``META_FILE`` (``meta``)
    still says its run is under way, the line that says why: an attempt a sweep recorded as
    running that no sweep runs (a sweep stopped outright, or a copy made while it ran); a copy
    of a run whose command, named by its process id, still runs (``cp -r`` of it under way);
    else the command ended without saving anything (killed outright, the machine stopped)."""
    logs = f"; what its workers wrote is in {run / LOGS_DIR}" if (run / LOGS_DIR).is_dir() else ""
    if (sweep_dir := recorded_running(run)) is not None:
        return (f"{run}: no result saved in it: an attempt the sweep in {sweep_dir} records as running, "
                f"which no sweep runs now (a sweep stopped outright, or a copy of one made while it ran); "
                f"the same sweep command with --out {sweep_dir} runs its cell again in a directory of its "
                f"own{logs}")
    if _alive(meta.get("pid")):
        return (f"{run}: no result saved in it, and the process that made it (pid {meta['pid']}, in its "
                f"{META_FILE}) still runs: a copy of a run under way holds what was written when it was "
                f"copied; report the original once that process has ended{logs}")
    return (f"{run}: the command that made it ended before saving any result (killed outright, or the "
            f"machine stopped: its {META_FILE} still says it is running){logs}")


def _alive(pid: Any) -> bool:
    """Whether a process of id ``pid`` (another than this one) runs on this machine."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except PermissionError:  # there, another user's
        return True
    except (ProcessLookupError, OverflowError):
        return False
    return True
