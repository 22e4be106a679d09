"""The host's speed now against the fastest this run has seen: a fixed piece of pure-Python
work, timed. Nothing else in the machine's readings sees it when a shared VM's vCPU runs slower
(another tenant on its core's other hyperthread, the host's clocks): ``/proc/stat`` shows no
other process and no steal time. Measured on this project's 2-core VM, the same loop took
5.2 ms or 9.3 ms, switching every second or so and sometimes slow for tens of seconds, pinned
to either vCPU alike (``docs/statistics.md``); C++ kernels and GEMMs slowed with it.

The profiling worker reads it before each window and, when the machine runs more than
``SLOW`` slower than the fastest reading of the run, waits for it to come back, polling, up to
``WAIT_S`` per window and ``WAIT_TOTAL_S`` per process: each window then starts at full speed
where the machine gives it back in time, and each window's reading (before and after it) is
returned, so the report can say at what speed the kept window ran.

No torch: the probe is the interpreter's own work, the same in every process of a run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..core.load import SPEED_SLOW

PROBE_LOOP = 40_000  # about 0.65 ms of Python on an AVX-512 EPYC; half the spread of 20,000
PROBE_REPS = 3  # the fastest of these: a preemption in one does not read as a slow machine
SLOW = SPEED_SLOW  # slower than the reference by more than this: wait
WAIT_S = 1.0  # at most, before one window
WAIT_TOTAL_S = 10.0  # at most, in one process
POLL_S = 0.02
START_S = 0.5  # polled at a process's first window, to meet the fast speed if it is there


def probe_s(loop: int = PROBE_LOOP, reps: int = PROBE_REPS) -> float:
    """Seconds for the fixed work, the fastest of ``reps``."""
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        s = 0
        for i in range(loop):
            s += i
        best = min(best, time.perf_counter() - t0)
    return best


@dataclass
class SpeedWatch:
    """The fastest reading so far (``reference``: seconds; None before the first) and the
    waiting left to this process."""

    reference: float | None = None
    waited_s: float = 0.0
    started: bool = False
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    probe: Callable[[], float] = field(default=probe_s, repr=False)
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    def read(self) -> float:
        p = self.probe()
        self.know(p)
        return p

    def know(self, reading: float | None) -> None:
        """Take a reading (here, or a worker's before this one) into the reference."""
        if reading:
            self.reference = reading if self.reference is None else min(self.reference, reading)

    def slow(self, p: float) -> bool:
        return self.reference is not None and p > self.reference * (1 + SLOW)

    def before_window(self) -> tuple[float, float]:
        """(the reading the window starts at, seconds waited for it): polls until the machine
        runs within ``SLOW`` of the reference or the waits are spent. A process's first window
        polls ``START_S`` first, to find the fast speed if the machine has it."""
        budget = max(0.0, min(WAIT_S, WAIT_TOTAL_S - self.waited_s))
        t0 = self.clock()
        if not self.started:
            self.started = True
            while self.clock() - t0 < min(START_S, budget):
                self.read()
                self.sleep(POLL_S)
        p = self.read()
        while self.slow(p) and self.clock() - t0 < budget:
            self.sleep(POLL_S)
            p = self.read()
        waited = self.clock() - t0
        self.waited_s += waited
        return p, waited
