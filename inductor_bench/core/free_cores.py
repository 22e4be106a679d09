"""More intra-op threads than the cores other work left free: the rule breakdown's hint and
compare's use alike (pure; no torch).

A run whose kernels use more threads than the cores left to them, by other processes or by a
cgroup's CPU limit, waits in every parallel region for the thread that shares a core (or for
the quota's next period): every call slows alike, and the calls that meet a busy stretch stall
(a compare of ``models/mlp.py`` on 2 threads beside a busy loop on a 2-core machine: ~1 ms calls
stalled to 100-220 ms, 8-9 of 10 rounds disturbed). With no more threads than the free cores,
the same compare gave intervals (docs/statistics.md, "The limit of any per-iteration rule").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .cgroup import cores_text
from .load import DISTURBED_OTHERS_CORES, Load, worst


@dataclass(frozen=True)
class OverFreeCores:
    """``threads`` intra-op threads against the ``free`` cores left to them: those other
    processes left (``load``, the most disturbed reading), or the cgroup's limit where it is
    lower (``limited``)."""

    threads: int
    free: float
    limited: bool
    load: Load

    def fitting_threads(self) -> int:
        """The most threads the rule accepts beside this load, at least 1: the setting to try."""
        return max(1, math.floor(self.free + DISTURBED_OTHERS_CORES))

    def held(self) -> str:
        """What held the cores: ``other processes kept 1.0 of the 2 cores busy``, or the limit."""
        if self.limited:
            return f"a cgroup limits the process to {cores_text(self.free)}"
        return f"other processes kept {self.load.others_cores:.1f} of the {self.load.cores} cores busy"


def others_busy(load: Load) -> bool:
    """Whether other processes kept enough of the cores busy to slow a measurement."""
    return load.others_cores >= DISTURBED_OTHERS_CORES


def threads_over_free(threads: int | None, loads: list[Load]) -> OverFreeCores | None:
    """``threads`` against the cores the most disturbed of ``loads`` left free: an
    ``OverFreeCores`` where they exceed the cgroup's limit (when it is below the cores others
    left), or the cores others left, by ``DISTURBED_OTHERS_CORES`` or more; None where they fit,
    with one thread, and with no load read."""
    most = worst(list(loads))
    if not threads or threads < 2 or most is None:
        return None
    limited = min((x.cpu_limit for x in loads if x.cpu_limit is not None), default=None)
    busy = others_busy(most)
    left = most.cores - most.others_cores if busy else most.cores
    if limited is not None and limited < left and threads > limited + DISTURBED_OTHERS_CORES:
        return OverFreeCores(threads, limited, True, most)
    if busy and threads > left + DISTURBED_OTHERS_CORES:
        return OverFreeCores(threads, left, False, most)
    return None
