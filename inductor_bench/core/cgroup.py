"""A CPU limit on the process: the cgroup quota of a container (Docker's ``--cpus``, a
Kubernetes CPU limit, systemd's ``CPUQuota``), read from the files the kernel keeps for it.

A cgroup with a quota may run ``quota`` microseconds of CPU time per ``period`` (100 ms by
default) across all its threads; once that is spent, every thread of it waits for the next
period ("throttled"). The machine's counters (``core/load.py``) see nothing of it: no other
process ran and the hypervisor stole nothing, the cores were idle. Measured on this project's
2-core machine (docs/statistics.md): in a cgroup limited to 0.6 CPU, a plain script's training
step of ``models/mlp.py`` took 4.1 ms against 1.39 ms unlimited, throttled in 101 of 160
periods. Two numbers say it: the limit (quota / period, in cores) and the share of the periods
in which the cgroup was throttled, from its ``cpu.stat``.

Both hierarchies: cgroup v2 (``cpu.max``, ``throttled_usec``) and v1 (``cpu.cfs_quota_us``,
``cpu.cfs_period_us``, ``throttled_time``). The limit that binds may be an ancestor's (a pod's
limit over its containers), so every cgroup from ours up to the mount's root is read and the
tightest kept; its ``cpu.stat`` counts the periods it throttled. Pure parsing here; the
runner reads the files (``runner/machine.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

CONTROLLER = "cpu"  # the kernel's name of the cgroup controller that enforces quotas (not a device)


@dataclass(frozen=True)
class CgroupMount:
    """Where a hierarchy holding the cpu controller is mounted: ``root``, the hierarchy's path
    at the mount (``/`` outside a cgroup namespace), and ``point``, the directory."""

    version: int  # 1 or 2
    root: str
    point: str


def cpu_mount(mountinfo: str) -> CgroupMount | None:
    """The mount of the cpu controller's hierarchy, from ``/proc/self/mountinfo``: a v1
    ``cgroup`` mount whose options name ``cpu``, else the ``cgroup2`` mount; None without."""
    v2 = None
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        fields, after = left.split(), right.split()
        if not sep or len(fields) < 5 or len(after) < 3:
            continue
        fstype, options = after[0], after[2].split(",")
        if fstype == "cgroup" and CONTROLLER in options:
            return CgroupMount(1, _unescape(fields[3]), _unescape(fields[4]))
        if fstype == "cgroup2" and v2 is None:
            v2 = CgroupMount(2, _unescape(fields[3]), _unescape(fields[4]))
    return v2


def _unescape(field: str) -> str:
    """mountinfo writes a space, tab, newline and backslash in a path as octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def own_path(proc_cgroup: str, version: int) -> str | None:
    """This process's cgroup in the hierarchy, from ``/proc/self/cgroup``: the v1 line whose
    controllers include ``cpu``, or the v2 line (``0::/path``)."""
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hid, controllers, path = parts
        if version == 1 and CONTROLLER in controllers.split(","):
            return path
        if version == 2 and hid == "0" and controllers == "":
            return path
    return None


def cgroup_dirs(mount: CgroupMount, path: str) -> list[str]:
    """The directories of our cgroup and each ancestor up to the mount's root, ours first; []
    when our cgroup is not below the mount's root (another namespace's)."""
    own, root = PurePosixPath(path), PurePosixPath(mount.root)
    try:
        rel = own.relative_to(root)
    except ValueError:
        return []
    point = PurePosixPath(mount.point)
    dirs = [point / rel]
    while rel.parts:
        rel = rel.parent
        dirs.append(point / rel)
    return [str(d) for d in dirs]


def limit_of(version: int, files: dict[str, str]) -> float | None:
    """The cores a cgroup may use (quota / period), None without a quota. ``files``: the text of
    ``cpu.max`` (v2), or of ``cpu.cfs_quota_us`` and ``cpu.cfs_period_us`` (v1)."""
    try:
        if version == 2:
            words = (files.get("cpu.max") or "max").split()
            if words[0] == "max":
                return None
            quota_us, period_us = int(words[0]), int(words[1]) if len(words) > 1 else 100_000
        else:
            quota_us = int((files.get("cpu.cfs_quota_us") or "-1").strip())
            period_us = int((files.get("cpu.cfs_period_us") or "100000").strip())
    except (ValueError, IndexError):
        return None
    return quota_us / period_us if quota_us > 0 and period_us > 0 else None


def throttle_counts(cpu_stat: str) -> tuple[int, int] | None:
    """``(periods, throttled periods)`` from a cgroup's ``cpu.stat``; None without them."""
    values: dict[str, int] = {}
    for line in cpu_stat.splitlines():
        key, _, value = line.partition(" ")
        if value.strip().isdigit():
            values[key] = int(value)
    if "nr_periods" not in values or "nr_throttled" not in values:
        return None
    return values["nr_periods"], values["nr_throttled"]


@dataclass(frozen=True)
class CpuLimit:
    """The tightest CPU quota over our cgroup and its ancestors, and its throttle counters at
    the moment of reading (``periods``, ``throttled``: since the cgroup was made)."""

    cores: float
    periods: int
    throttled: int
    where: str  # the cgroup directory that holds the quota


def cores_text(cores: float) -> str:
    """A limit as every report line writes it, to the hundredth: ``0.6 cores``, ``12.5 cores``
    (two significant digits would write a 12.5-core limit as 12)."""
    n = round(cores, 2)
    return f"{n:g} core{'' if n == 1 else 's'}"


def tightest(limits: list[CpuLimit]) -> CpuLimit | None:
    """The limit that binds: the fewest cores (the innermost of equal ones)."""
    return min(limits, key=lambda x: x.cores) if limits else None
