"""The profiling workers started on standby before the compile (``runner/batch.py``
``Standby``): importing torch, Inductor's modules and the model file then overlaps the
compile instead of following it."""

from __future__ import annotations

import os
from pathlib import Path

from ..core.processes import share_windows
from ..core.rundir import LOGS_DIR
from .batch import Standby
from .capture import measuring_env
from .settings import RunSettings
from .window_plan import DEFAULT_WINDOWS

PROFILE_WORKER = "inductor_bench.runner.profile"


def profile_standbys(run_dir: Path, settings: RunSettings, cache: Path, preload: str | None,
                     cores: int | None = None) -> list[Standby]:
    """The profiling workers, started before the compile so that importing torch and the model
    file overlaps it, each after the one before is ready: one per process that will profile,
    as many as the machine has a core for beside the compile's (``standby_count``);
    ``profile_graphs(..., standbys=...)`` hands them the graphs, and starts the others later."""
    out: list[Standby] = []
    for _ in range(standby_count(len(process_shares(settings)), cores)):
        out.append(Standby(PROFILE_WORKER, {"preload": preload}, env=measuring_env(cache),
                           log_path=run_dir / LOGS_DIR / "profile.log", echo=settings.echo,
                           after=out[-1] if out else None))
    return out


def process_shares(settings: RunSettings) -> list[int]:
    """The profiling windows of each fresh process, in turn (``core/processes.py``)."""
    return share_windows(settings.windows or DEFAULT_WINDOWS, settings.processes)


def standby_count(processes: int, cores: int | None = None) -> int:
    """Workers to start on standby: the first always; a further one only with two cores to
    spare for it, since its imports run beside the compile, whose first call is a reported
    figure (on 2 cores a second one made that call 10% slower: docs/breakdown.md)."""
    return max(1, min(processes, (cores or os.cpu_count() or 1) // 2))
