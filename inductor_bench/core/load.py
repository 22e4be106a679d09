"""Was the machine quiet while we measured? Load from other processes during a measurement.

Two breakdowns of one model run at the same time on a 2-core machine once reported an
inference step of 55.7 ms against 0.5 ms alone (the OpenMP threads of two processes fighting
for two cores), with nothing in the report to say why; on a shared virtual machine the
hypervisor can also run another guest on our vCPU ("steal"), which slows every op by a
quarter for seconds at a time. Both show in the kernel's CPU accounting (``/proc/stat``):

- **others** = the CPU time every process spent, less our own process's, over the wall time
  of the measurement: how many cores other processes kept busy meanwhile;
- **steal** = the share of the machine's CPU time the hypervisor gave to someone else;
- **throttled** = the share of a cgroup CPU quota's periods in which the quota stopped our
  process (a container's CPU limit; its cgroup's ``cpu.stat``, ``core/cgroup.py``), which
  neither of the above sees.

The torch side reads the counters around each measurement (``CpuCounters``); this module
turns two readings into a ``Load`` and says when it could have moved the figures. Pure
Python; no torch.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from typing import Any

from .cgroup import CpuLimit, cores_text

# Other processes keeping half a core busy, or a 5% steal, slow a measurement measurably
# (a single-threaded kernel loses its core part of the time; OpenMP kernels wait on the
# slowest thread).
DISTURBED_OTHERS_CORES = 0.5
DISTURBED_STEAL = 0.05
# A cgroup's CPU quota (core/cgroup.py) that throttled the process in this share of its
# enforcement periods: each throttled period stops every thread until the next one.
DISTURBED_THROTTLED = 0.05
# A parallel op that took this much longer on all the intra-op threads than on one
# (runner/parallel_probe.py): a quiet machine reads under 1 (the threads share the work), one
# whose cores other processes hold 15-20 on this project's 2-core machine.
PARALLEL_SLOW = 1.5

# /proc/stat "cpu" line fields, in order (man 5 proc); guest time is already in user.
_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
_BUSY = ("user", "nice", "system", "irq", "softirq")
_ALL_CPUS = re.compile(r"^cpu\s")  # the all-CPU line, then one line per CPU
_ONE_CPU = re.compile(r"^cpu\d+\s")


# The machine ran slow during a window when fixed work took more than this much longer than
# the fastest the run saw (runner/speed.py: the worker waits for it to pass). Above the
# reading's own spread on a quiet machine (up to 17% over its fastest in 300 readings; at
# 10%, a third of the readings and most windows read "slow" with their graph's time
# unchanged), below the slow states seen (fixed work 1.5-1.9x its fastest).
SPEED_SLOW = 0.25


@dataclass(frozen=True)
class CpuCounters:
    """One reading: the machine's CPU seconds (busy, steal, all) and our process's own."""

    busy_s: float
    steal_s: float
    total_s: float
    own_s: float  # user + system time of our process (all its threads)
    wall_s: float  # a monotonic clock
    cpus: int = 1  # CPUs the counters cover
    limit: CpuLimit | None = None  # the cgroup's CPU quota over us, and its throttle counters

    @classmethod
    def parse(cls, proc_stat: str, ticks_per_s: float, own_s: float, wall_s: float,
              limit: CpuLimit | None = None) -> CpuCounters:
        """From the text of ``/proc/stat`` (its first, all-CPU line)."""
        lines = proc_stat.splitlines()
        if not lines or not _ALL_CPUS.match(lines[0]):
            raise ValueError("not /proc/stat: the first line is not the all-CPU line")
        first = lines[0].split()
        values = dict(zip(_FIELDS, (int(x) / ticks_per_s for x in first[1:]), strict=False))
        cpus = sum(1 for line in lines if _ONE_CPU.match(line))
        return cls(
            busy_s=sum(values.get(f, 0.0) for f in _BUSY),
            steal_s=values.get("steal", 0.0),
            total_s=sum(values.values()),
            own_s=own_s,
            wall_s=wall_s,
            cpus=max(1, cpus),
            limit=limit,
        )


@dataclass(frozen=True)
class Load:
    """Load from other processes over one measurement (and, on a GPU, what the device did)."""

    others_cores: float  # cores kept busy by other processes, on average
    steal_pct: float  # % of the machine's CPU time stolen by the hypervisor
    cores: int  # cores this process may run on
    # GPU (GpuReading, before and after): other processes with a context on the device, and
    # the slowdowns the device reported (None: not read, as on the host)
    gpu_others: int | None = None
    gpu_slowdown: str | None = None
    # a cgroup's CPU quota over the process (core/cgroup.py): the cores it allows, and the % of
    # its periods in the measurement in which it throttled us (None: no quota)
    cpu_limit: float | None = None
    throttled_pct: float | None = None
    # the host: a parallel op's time on all the intra-op threads over its time on one, read
    # before and after the measurement, the higher kept (runner/parallel_probe.py; None: not
    # read, one thread, a GPU)
    parallel_x: float | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Load | None:
        """From its saved form (fields this version does not know are ignored)."""
        if not d:
            return None
        return cls(**{k: v for k, v in d.items() if k in _LOAD_FIELDS})

    def to_dict(self) -> dict[str, Any]:
        """Its saved form; the GPU and quota fields only where they were read."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) is not None or f.name not in _ONLY_WHERE_READ}

    @property
    def throttled(self) -> bool:
        return (self.throttled_pct or 0.0) >= 100 * DISTURBED_THROTTLED

    @property
    def parallel_slow(self) -> bool:
        return (self.parallel_x or 0.0) >= PARALLEL_SLOW

    @property
    def disturbed(self) -> bool:
        return (self.others_cores >= DISTURBED_OTHERS_CORES or self.steal_pct >= 100 * DISTURBED_STEAL
                or bool(self.gpu_others) or bool(self.gpu_slowdown) or self.throttled or self.parallel_slow)

    def describe(self) -> str:
        return " and ".join(long for long, _ in self._causes()) or "quiet"

    def brief(self) -> str:
        """``describe`` in a few words each, for a list: ``parallel work 110x slower on all threads``."""
        return ", ".join(short for _, short in self._causes()) or "quiet"

    def _causes(self) -> list[tuple[str, str]]:
        """What disturbed the measurement, each said in full and briefly."""
        out = []
        if self.others_cores >= DISTURBED_OTHERS_CORES:
            out.append((f"other processes kept {self.others_cores:.1f} of {self.cores} cores busy",
                        f"{self.others_cores:.1f} of {self.cores} cores busy with other processes"))
        if self.steal_pct >= 100 * DISTURBED_STEAL:
            out.append((f"the hypervisor took {self.steal_pct:.0f}% of the CPU time (steal)",
                        f"{self.steal_pct:.0f}% steal"))
        if self.throttled and self.cpu_limit is not None:
            out.append((f"the cgroup's CPU limit ({cores_text(self.cpu_limit)}) throttled the process "
                        f"in {self.throttled_pct:.0f}% of its periods",
                        f"throttled by its cgroup in {self.throttled_pct:.0f}% of periods"))
        if self.parallel_slow:
            out.append((f"parallel work took {self.parallel_x:.1f}x as long on all the threads as on one "
                        "(each parallel region waits for a thread whose core is taken)",
                        f"parallel work {self.parallel_x:.1f}x slower on all threads than on one"))
        if self.gpu_others:
            n = self.gpu_others
            out.append((f"{n} other process{'es' if n > 1 else ''} used the GPU",
                        "other processes on the GPU"))
        if self.gpu_slowdown:
            out.append((f"the GPU slowed its clock ({self.gpu_slowdown})",
                        f"GPU clock slowed ({self.gpu_slowdown})"))
        return out

    def with_gpu(self, before: GpuReading | None, after: GpuReading | None) -> Load:
        """This load, plus what two readings of the GPU around the measurement say."""
        readings = [r for r in (before, after) if r is not None]
        if not readings:
            return self
        others = max(r.others for r in readings)
        slow = [r.slowdown() for r in readings if r.slowdown()]
        return replace(self, gpu_others=others, gpu_slowdown=slow[-1] if slow else "")


_LOAD_FIELDS = {f.name for f in fields(Load)}
_ONLY_WHERE_READ = {"gpu_others", "gpu_slowdown", "cpu_limit", "throttled_pct", "parallel_x"}


def load_between(before: CpuCounters, after: CpuCounters) -> Load | None:
    """The load over the interval between two readings; None when it is too short to say
    (the kernel counts in 10 ms ticks)."""
    wall = after.wall_s - before.wall_s
    total = after.total_s - before.total_s
    if wall < 0.05 or total <= 0:
        return None
    others = (after.busy_s - before.busy_s) - (after.own_s - before.own_s)
    return Load(
        others_cores=max(0.0, others / wall),
        steal_pct=100.0 * max(0.0, after.steal_s - before.steal_s) / total,
        cores=after.cpus,
        cpu_limit=after.limit.cores if after.limit is not None else None,
        throttled_pct=throttled_pct(before.limit, after.limit),
    )


def throttled_pct(before: CpuLimit | None, after: CpuLimit | None) -> float | None:
    """The % of the quota's periods between two readings in which it throttled us: 0 when none
    passed (the cgroup ran nothing); None without a quota, or when the two readings are not of
    the same cgroup."""
    if before is None or after is None or before.where != after.where:
        return None
    periods = after.periods - before.periods
    return 100.0 * max(0, after.throttled - before.throttled) / periods if periods > 0 else 0.0


def worst(loads: list[Load | None]) -> Load | None:
    """The most disturbed of several loads (by cores taken, then steal, then throttling)."""
    known = [x for x in loads if x is not None]
    return max(known, key=lambda x: (x.others_cores, x.steal_pct, x.throttled_pct or 0.0)) if known else None


# -- the GPU: other processes on the device, and its clock ---------------------------------------

# NVML's clock-event ("throttle") reasons, as nvidia-smi prints the bitmask. Idle, the
# applications-clock setting, sync boost and the display clock are not slowdowns of a running
# measurement; the others lower the SM clock under load.
SLOWDOWN_REASONS = {
    0x4: "software power cap",
    0x8: "hardware slowdown",
    0x20: "software thermal slowdown",
    0x40: "hardware thermal slowdown",
    0x80: "hardware power brake",
}


@dataclass(frozen=True)
class GpuReading:
    """One reading of a GPU (NVML, or ``nvidia-smi`` without it): the compute processes on it,
    its SM clock and the clock-event reasons active at that moment."""

    others: int  # compute processes on the device besides ours
    sm_mhz: float | None
    sm_max_mhz: float | None
    reasons: int  # the clock-event bitmask

    @classmethod
    def parse(cls, gpu_csv: str, apps_csv: str, own_pid: int, ours: Iterable[int] = ()) -> GpuReading:
        """From ``--query-gpu=clocks.sm,clocks.max.sm,<reasons>.active`` and
        ``--query-compute-apps=pid`` (both ``--format=csv,noheader,nounits``). ``ours``: other
        processes of the same run (the profiling worker waiting on standby while the compile
        worker times steps), never counted as others. Where our own pid is not among the
        processes (nvidia-smi in a container sees the host's pids), one of them is taken to be
        ours."""
        first = next((ln for ln in gpu_csv.splitlines() if ln.strip()), "")
        cells = [c.strip() for c in first.split(",")]
        if len(cells) != 3:
            raise ValueError(f"not a clocks reading: {first!r}")
        pids = [int(ln.split(",")[0]) for ln in apps_csv.splitlines() if ln.strip()[:1].isdigit()]
        return cls.of(pids, own_pid, ours, _number(cells[0]), _number(cells[1]),
                      int(cells[2], 16) if cells[2].lower().startswith("0x") else 0)

    @classmethod
    def of(cls, pids: Iterable[int], own_pid: int, ours: Iterable[int], sm_mhz: float | None,
           sm_max_mhz: float | None, reasons: int) -> GpuReading:
        """From the pids of the device's compute processes (NVML's list, or nvidia-smi's), the
        SM clocks and the clock-event bitmask; ``ours`` and a container's stand-in for our own
        pid are not counted, as in ``parse``."""
        pids = list(pids)
        own = {own_pid, *ours}
        others = len([p for p in pids if p not in own]) if own_pid in pids else max(0, len(pids) - 1)
        return cls(others=others, sm_mhz=sm_mhz, sm_max_mhz=sm_max_mhz, reasons=reasons)

    def slowdown(self) -> str:
        """The active slowdowns and the clock they left, or "" when none is active."""
        names = [name for bit, name in SLOWDOWN_REASONS.items() if self.reasons & bit]
        if not names:
            return ""
        clock = (f": SM clock {self.sm_mhz:,.0f} of {self.sm_max_mhz:,.0f} MHz"
                 if self.sm_mhz and self.sm_max_mhz else "")
        return ", ".join(names) + clock


def _number(cell: str) -> float | None:
    try:
        return float(cell)
    except ValueError:  # "[N/A]", "[Not Supported]"
        return None
