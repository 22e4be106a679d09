"""The host probes' clock: the time the measuring process ran, its pauses left out.

A ceiling is the best of many timed calls within a time budget (``runner/peaks_matmul.py``). A
call during which the process did not run at all (stopped by a signal, its VM paused, every
thread off its core) is no timing of the machine: a pause of 4 s in a 1 s budget left the
probes three rounds and the grown sizes one call each, and the fp32 ceiling read 0.085 TFLOP/s
where it reads 0.185 unpaused (2-core EPYC VM, torch 2.13, 2 threads, 2026-12-07). Such a call
is known by its process CPU time (all threads together) being under half its wall time and
behind it by over ``PAUSE_S``: it is not kept, it counts toward no repetition and its time
toward no budget, and the call is made again. A spell of other processes' work is such a pause
too: at a load average of 10 on that VM the process ran a quarter of a core on average, and a
256 x 256 int8 matmul took 0.043 ms, or 5-28 ms for over a second at a time in every route, its
threads waiting for a core; the int8 ceiling read 0.0047 TOP/s against 0.73. The waits are
bounded: once the pauses of one measurement add up to
``PAUSES_MAX_S``, the budgets count wall time again, a paused call counts as any other, and the
measurement says it could not be made quietly (``Pauses.describe``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

PAUSE_S = 0.002  # a call whose CPU time fell this far behind its wall time, and under half of it:
# the process did not run through most of it (a call runs at least one thread all along)
# a CPU clock that ticks coarsely (15.6 ms on Windows) would read a short call as not run at all
CPU_CLOCK_FINE = time.get_clock_info("process_time").resolution <= 1e-4
PAUSES_MAX_S = 8.0  # one measurement waits out this much pause in all, then counts wall time again


@dataclass
class Pauses:
    """The pauses seen by one measurement's host probes."""

    seconds: float = 0.0
    calls: int = 0

    @property
    def over(self) -> bool:
        return self.seconds > PAUSES_MAX_S

    def waited(self) -> float:
        """The pauses waited out so far: left out of the probes' budgets."""
        return min(self.seconds, PAUSES_MAX_S)

    def describe(self) -> str | None:
        """Why the figures may be low, where the waits ran out; None where every paused call
        was made again."""
        if not self.over:
            return None
        return (f"the measuring process did not run for {self.seconds:.1f} s of {self.calls} timed call(s) "
                f"(stopped, or its threads waiting for a core: more than the {PAUSES_MAX_S:g} s its "
                "probes wait out)")

    def note(self) -> str:
        """The pauses in the measurement's own words (``Ceilings.how``); "" where none."""
        if not self.calls or self.over:
            return ""
        return (f"; {self.calls} call(s) during which the process did not run ({self.seconds:.1f} s) "
                "timed again")


PAUSES = Pauses()  # the current measurement's (a measuring worker makes one at a time)


def start_measurement() -> Pauses:
    """A new measurement: its pauses counted from zero."""
    global PAUSES
    PAUSES = Pauses()
    return PAUSES


class ProbeClock:
    """A stopwatch of the process's running time: wall time less the pauses of the calls timed
    (by any clock) since it started, up to the measurement's ``PAUSES_MAX_S`` in all."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.waited_before = PAUSES.waited()

    def spent(self) -> float:
        return time.perf_counter() - self.started - (PAUSES.waited() - self.waited_before)


def timed(fn: Any) -> tuple[float, bool]:
    """(wall seconds of one call of ``fn``, whether to keep it): a paused call is not kept
    while the measurement still waits pauses out."""
    c0 = time.process_time()  # outside the wall time: it costs 2 us, 4% of a 256 x 256 int8 call
    w0 = time.perf_counter()
    fn()
    wall = time.perf_counter() - w0
    cpu = time.process_time() - c0
    if wall - cpu <= PAUSE_S or cpu >= wall / 2 or PAUSES.over or not CPU_CLOCK_FINE:
        return wall, True
    PAUSES.seconds += wall - cpu
    PAUSES.calls += 1
    return wall, PAUSES.over
