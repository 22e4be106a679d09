"""Readings of the machine around a measurement (``core/load.py`` says what they mean): the
CPU counters of ``/proc/stat``, and on a GPU its compute processes and clock, through NVML
(``runner/nvml.py``), or the monitor command (``nvidia-smi``) where nvidia-ml-py is not
installed; and the processes below one (psutil), which the tool stops."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import psutil

from ..core import cgroup
from ..core.cgroup import CpuLimit
from ..core.devices import backend
from ..core.load import CpuCounters, GpuReading, Load, load_between
from . import nvml as nvml_reader

PROC_STAT = Path("/proc/stat")
PROC_MOUNTINFO = Path("/proc/self/mountinfo")
PROC_CGROUP = Path("/proc/self/cgroup")


def cpu_counters() -> CpuCounters | None:
    """The machine's CPU time counters, this process's own and its cgroup's CPU quota; None
    where the OS has no ``/proc/stat`` (macOS, Windows)."""
    try:
        import resource

        text = PROC_STAT.read_text()
        ru = resource.getrusage(resource.RUSAGE_SELF)
        own_s, now = ru.ru_utime + ru.ru_stime, time.monotonic()
        return CpuCounters.parse(text, os.sysconf("SC_CLK_TCK"), own_s, now, limit=cpu_limit())
    except (ImportError, OSError, ValueError):
        return None


def cpu_limit() -> CpuLimit | None:
    """The tightest CPU quota over this process's cgroup and its ancestors, with its throttle
    counters now (``core/cgroup.py``); None without a quota or where cgroups cannot be read."""
    version, dirs = _cgroup_dirs()
    names = ("cpu.max",) if version == 2 else ("cpu.cfs_quota_us", "cpu.cfs_period_us")
    limits = []
    for d in map(Path, dirs):
        cores = cgroup.limit_of(version, {n: file_text(d / n) for n in names})
        counts = cgroup.throttle_counts(file_text(d / "cpu.stat")) if cores is not None else None
        if cores is not None and counts is not None:
            limits.append(CpuLimit(cores, counts[0], counts[1], where=str(d)))
    return cgroup.tightest(limits)


@functools.lru_cache(maxsize=1)
def _cgroup_dirs() -> tuple[int, tuple[str, ...]]:
    """(hierarchy version, the directories of our cgroup and its ancestors), read once."""
    mount = cgroup.cpu_mount(file_text(PROC_MOUNTINFO))
    path = cgroup.own_path(file_text(PROC_CGROUP), mount.version) if mount is not None else None
    if mount is None or path is None:
        return 0, ()
    return mount.version, tuple(cgroup.cgroup_dirs(mount, path))


def file_text(path: Path) -> str:
    """A small file the kernel keeps (``/proc``, ``/sys``); "" where it is absent or unreadable."""
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):
        return ""


def descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (children, theirs, ...); [] where there is none or
    ``pid`` is gone."""
    try:
        return [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


# The CPU counters tick every 10 ms and ``load_between`` reads nothing under 50 ms: a shorter
# measurement (compare's interleaved timing of a 1 ms GPU step, a few iterations of a small
# graph) has its load read over this long, idle after it.
LOAD_MIN_S = 0.1


def load_since(before: CpuCounters | None, min_s: float = LOAD_MIN_S) -> Load | None:
    """The load since ``before``; an interval shorter than ``min_s`` is first extended by
    waiting idle (our process adds nothing; other processes go on), so that a short
    measurement still gets a reading of the machine around it."""
    if before is not None and min_s > 0:
        short = min_s - (time.monotonic() - before.wall_s)
        if short > 0:
            time.sleep(short)
    after = cpu_counters()
    return load_between(before, after) if before is not None and after is not None else None


MONITOR_TIMEOUT_S = 5.0
# The clock-event bitmask's field: its newer name first (drivers from 535), then the older.
_REASON_FIELDS = ("clocks_event_reasons.active", "clocks_throttle_reasons.active")


def device_reading(
    device: str, device_id: str | None, ours: Iterable[int] = (), nvml: Any | None = None
) -> GpuReading | None:
    """The device's compute processes and clock now (``ours``: pids of the run's other workers,
    not counted as others), through NVML (``nvml``: pynvml or a stand-in; default the installed
    one), else the monitor command; None on the host, without either, or when the reading fails
    (a reading is an addition: it never stops a measurement)."""
    tool = backend(device).monitor
    if tool is None or device_id is None:
        return None
    lib = nvml if nvml is not None else nvml_reader.library()
    if lib is not None:
        try:
            return nvml_reader.reading(lib, device_id, os.getpid(), ours)
        except Exception:  # NVMLError and its subclasses, a stand-in's own
            return None
    if shutil.which(tool) is None:
        return None
    try:
        clocks = None
        for field in _REASON_FIELDS:
            clocks = _monitor(tool, device_id, f"--query-gpu=clocks.sm,clocks.max.sm,{field}")
            if clocks is not None:
                break
        apps = _monitor(tool, device_id, "--query-compute-apps=pid")
        if clocks is None or apps is None:
            return None
        return GpuReading.parse(clocks, apps, os.getpid(), ours)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def _monitor(tool: str, device_id: str, query: str) -> str | None:
    r = subprocess.run([tool, "-i", device_id, query, "--format=csv,noheader,nounits"],
                       capture_output=True, text=True, timeout=MONITOR_TIMEOUT_S)
    return r.stdout if r.returncode == 0 else None


def with_device(load: Load | None, before: GpuReading | None, after: GpuReading | None) -> Load | None:
    return load.with_gpu(before, after) if load is not None else None
