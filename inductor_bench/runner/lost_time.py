"""Time the measuring process's threads lost during a timed call, as Linux counts it.

The process's CPU time (``runner/probe_clock.py``) misses a spell in which only some of a
call's threads are kept off their cores: at a load average of 4 on a 2-core VM a 2-thread
256 x 256 fp32 matmul took 12-40 ms instead of 0.06, its CPU time as long as its wall time
(one thread spinning at the barrier while the other waited for a core), and all 865 such calls
in 25 s showed that wait (torch 2.13, 2026-12-07). Two counters say it, readable without root:

- each thread's wait on a run queue: the second field of ``/proc/self/task/<tid>/schedstat``
  (ns; a kernel with ``CONFIG_SCHED_INFO``). It is the time a thread was ready to run while
  the guest's scheduler ran something else; it covers other processes' work, not the host's.
- the hypervisor's steal: the 8th value of ``/proc/stat``'s ``cpu<N>`` lines (in ``USER_HZ``
  ticks, 10 ms), on each CPU the process may run on. A guest kernel with paravirtual steal
  accounting leaves steal out of the process's CPU time already; this covers the case where
  one thread's vCPU was taken while another spun. Its ticks are coarse: a short call is never
  taken for one by a tick it happens to straddle (``probe_clock.timed`` asks for the time held
  up to be over 2 ms and over half the call's wall time, and counts no more than the wall).

A call is held up as long as its most delayed thread, or its most stolen CPU (``Lost``).

Where a counter is missing (not Linux, a kernel without it, a sandbox hiding ``/proc``) it
reads nothing, and the check it gives is off.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

TASKS = "/proc/self/task"
PROC_STAT = "/proc/stat"
USER_HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class Lost:
    """Seconds a call was held up: the longest run-queue wait of any of its threads, and the
    most steal of any CPU the process may run on (a thread held so long held the call)."""

    queued_s: float = 0.0
    steal_s: float = 0.0

    @property
    def total(self) -> float:
        return max(self.queued_s, self.steal_s)


@dataclass(frozen=True)
class Counters:
    """The counters at one moment: each thread's run-queue wait (ns), each CPU's steal (ticks)."""

    waits_ns: dict[str, int]
    steal_ticks: dict[int, int]

    def since(self, before: Counters) -> Lost:
        """What a call between two readings lost (a thread or CPU read once is left out)."""
        def most(now: dict, then: dict) -> int:
            return max((now[k] - then[k] for k in now.keys() & then.keys()), default=0)
        return Lost(most(self.waits_ns, before.waits_ns) / 1e9,
                    most(self.steal_ticks, before.steal_ticks) / USER_HZ)


def _waits_ns() -> dict[str, int]:
    try:
        tids = os.listdir(TASKS)
    except OSError:
        return {}
    waits = {}
    for tid in tids:
        try:
            with open(os.path.join(TASKS, tid, "schedstat"), "rb") as f:
                waits[tid] = int(f.read(128).split()[1])
        except (OSError, IndexError, ValueError):  # a thread that ended, or no such counter
            continue
    return waits


def _cpus() -> set[int] | None:
    return os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None


def _steal_ticks() -> dict[int, int]:
    mine, steal = _cpus(), {}
    try:
        with open(PROC_STAT, "rb") as f:
            for line in f:
                if not line.startswith(b"cpu"):
                    break
                fields = line.split()
                name = fields[0][3:]
                if name and len(fields) > 8 and (mine is None or int(name) in mine):
                    steal[int(name)] = int(fields[8])
    except (OSError, ValueError):
        return {}
    return steal


def read() -> Counters | None:
    """The counters now; None where neither can be read (the check is off)."""
    counters = Counters(_waits_ns(), _steal_ticks())
    return counters if counters.waits_ns or counters.steal_ticks else None
