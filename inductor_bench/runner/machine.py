"""Readings of the machine around a measurement (``core/load.py`` says what they mean)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..core.load import CpuCounters, Load, load_between

PROC_STAT = Path("/proc/stat")


def cpu_counters() -> CpuCounters | None:
    """The machine's CPU time counters and this process's own; None where the OS has no
    ``/proc/stat`` (macOS, Windows)."""
    try:
        import resource

        text = PROC_STAT.read_text()
        ru = resource.getrusage(resource.RUSAGE_SELF)
        return CpuCounters.parse(text, os.sysconf("SC_CLK_TCK"), ru.ru_utime + ru.ru_stime, time.monotonic())
    except (ImportError, OSError, ValueError):
        return None


def load_since(before: CpuCounters | None) -> Load | None:
    after = cpu_counters()
    return load_between(before, after) if before is not None and after is not None else None
