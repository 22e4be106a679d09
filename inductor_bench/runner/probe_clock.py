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
bounded: once the pauses add up to ``FIGURE_PAUSES_MAX_S`` in one figure (a bandwidth's, a
compute type's) or ``PAUSES_MAX_S`` in all, the budgets count wall time again, a paused call
counts as any other, and the measurement says it could not be made quietly, naming the figures
that ran out (``Pauses.describe``). The figures still to come keep a share of the whole
(``Pauses.room``): under a steady load the three bandwidth figures, measured first, spent the
15 s and the int8 ceiling after them read 0.046 TOP/s against 0.63. A call in which some
threads did not run while another spun at their barrier reads CPU time as long as its wall
time; it is known by the threads' run-queue wait or the hypervisor's steal
(``runner/lost_time.py``) being over half its wall time, and counts as a pause too.
A steady load is not waited for (``core/load_share.py``): once the figure's calls have lost an
even share of their time for a second, its pauses count as any other call's, and the
measurement says it was taken beside that load (``Pauses.note``): a busy loop on one of the
2 cores had every figure wait and the ceilings take 28-30 s.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..core.load_share import LoadWindows
from . import lost_time

PAUSE_S = 0.002  # a call whose CPU time fell this far behind its wall time, and under half of it:
# the process did not run through most of it (a call runs at least one thread all along)
# a CPU clock that ticks coarsely (15.6 ms on Windows) would read a short call as not run at all
CPU_CLOCK_FINE = time.get_clock_info("process_time").resolution <= 1e-4
# one figure (a bandwidth's, a compute type's) waits out this much pause, a measurement this much
# in all; past either the budgets count wall time again
FIGURE_PAUSES_MAX_S, PAUSES_MAX_S = 5.0, 15.0


@dataclass
class Pauses:
    """The pauses seen by one measurement's host probes."""

    seconds: float = 0.0  # all pauses, waited out or not
    calls: int = 0
    waited_s: float = 0.0  # those waited out: left out of the probes' budgets
    figure_s: float = 0.0  # the current figure's waited out
    short_in: list[str] = field(default_factory=list)  # the figures whose pauses ran past their room
    figures: int = 1  # the figures the measurement makes: those not begun keep a share each
    begun: int = 0
    figure: str = ""  # the current figure's name
    queued_s: float = 0.0  # of ``seconds``: the threads' wait for a core (``runner/lost_time.py``)
    steal_s: float = 0.0  # of ``seconds``: the hypervisor's steal
    windows: LoadWindows = field(default_factory=LoadWindows)  # the current figure's calls
    steady: dict[str, float] = field(default_factory=dict)  # figure: its share lost to a steady load

    @property
    def short(self) -> bool:
        return bool(self.short_in)

    @property
    def over(self) -> bool:
        return self.room() <= 0

    def room(self) -> float:
        """The pause the current figure may still wait out: up to ``FIGURE_PAUSES_MAX_S`` of its
        own, and no more of the whole than leaves each figure after it its share (what the
        first figure leaves the others, split evenly: 2 s each of 6)."""
        later = max(self.figures - max(self.begun, 1), 0)
        share = min(FIGURE_PAUSES_MAX_S, (PAUSES_MAX_S - FIGURE_PAUSES_MAX_S) / max(self.figures - 1, 1))
        return min(FIGURE_PAUSES_MAX_S - self.figure_s, PAUSES_MAX_S - later * share - self.waited_s)

    def next_figure(self, name: str = "") -> None:
        self.figure_s, self.figure, self.begun = 0.0, name, self.begun + 1
        self.windows = LoadWindows()

    def seen(self, wall_s: float, lost_s: float) -> None:
        """A timed call of the current figure: its wall seconds and the seconds it was held up."""
        self.windows.add(wall_s, lost_s)
        if self.figure not in self.steady and (share := self.windows.steady_share()) is not None:
            self.steady[self.figure] = share

    def _ran_out(self) -> None:
        if self.figure not in self.short_in:
            self.short_in.append(self.figure)

    def add(self, seconds: float, lost: lost_time.Lost | None = None) -> bool:
        """A pause of a timed call (``lost``: where it is the counters' lost time, not missing
        CPU time): whether it is waited out (the call made again)."""
        self.seconds, self.calls = self.seconds + seconds, self.calls + 1
        if lost is not None:  # the pause shared between the counters as they read
            both = lost.queued_s + lost.steal_s
            self.queued_s += seconds * lost.queued_s / both
            self.steal_s += seconds * lost.steal_s / both
        # beside a steady load there is no quieter moment to wait for
        room = 0.0 if self.figure in self.steady else max(self.room(), 0.0)
        waited = min(seconds, room)
        self.figure_s, self.waited_s = self.figure_s + waited, self.waited_s + waited
        if seconds > room and self.figure not in self.steady:
            self._ran_out()
        return seconds <= room

    def describe(self) -> str | None:
        """Why the figures may be low, where the waits ran out or a steady load was not waited
        for (so the cache measures again next run, keeping the higher); None where every paused
        call was made again."""
        if not self.short:
            return self._steady_load() or None
        return (f"the measuring process did not run for {self.seconds:.1f} s of {self.calls} timed call(s) "
                f"(stopped, or its threads waiting for a core: more than its probes wait out, "
                f"{FIGURE_PAUSES_MAX_S:g} s a figure and {PAUSES_MAX_S:g} s in all{self._where()})"
                + self._causes())

    def _where(self) -> str:
        """The figures that ran out of room, where the measurement named them: only those may be low."""
        named = [f for f in self.short_in if f]
        return f"; ran out in {', '.join(named)}" if named else ""

    def _causes(self) -> str:
        """The counted causes, where the counters saw them: "" where none."""
        said = [f"its threads waited {self.queued_s * 1e3:.0f} ms for a core"] * (self.queued_s > 0)
        said += [f"the hypervisor took the CPU: {self.steal_s * 1e3:.0f} ms of steal"] * (self.steal_s > 0)
        return "; " + " and ".join(said) if said else ""

    def note(self) -> str:
        """The pauses in the measurement's own words (``Ceilings.how``); "" where none."""
        if not self.calls or self.short:
            return ""
        again = (f"; {self.calls} call(s) during which the process did not run ({self.seconds:.1f} s) "
                 "timed again")
        return (again if self.waited_s > 0 else "") + self._beside()

    def _steady_shares(self) -> str:
        """The figures taken beside a steady load, each with the share of its calls' time the
        load took; "" where none."""
        return ", ".join(f"{name or 'the figure'} {share:.0%}" for name, share in self.steady.items())

    def _steady_load(self) -> str:
        """The steady load, as a disturbance: "" where none."""
        said = self._steady_shares()
        return ("other processes held up its probes' calls steadily, not waited out (the share of "
                f"their time: {said})" if said else "")

    def _beside(self) -> str:
        """The figures taken beside a steady load, in the measurement's own words."""
        said = self._steady_shares()
        return ("; measured beside a steady load (the share of the calls' time other processes held "
                f"them up: {said}), not waited out" if said else "")


PAUSES = Pauses()  # the current measurement's (a measuring worker makes one at a time)


def start_measurement(figures: int = 1) -> Pauses:
    """A new measurement of ``figures`` figures: its pauses counted from zero."""
    global PAUSES
    PAUSES = Pauses(figures=figures)
    return PAUSES


class ProbeClock:
    """A stopwatch of the process's running time: wall time less the pauses of the calls timed
    (by any clock) since it started, as far as they were waited out (``Pauses.add``)."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.waited_before = PAUSES.waited_s

    def spent(self) -> float:
        return time.perf_counter() - self.started - (PAUSES.waited_s - self.waited_before)


def timed(fn: Any) -> tuple[float, bool]:
    """(wall seconds of one call of ``fn``, whether to keep it): a paused call is not kept
    while the measurement still waits pauses out."""
    before = lost_time.read()  # the counters cost 60 us, the CPU time 2 us: outside the wall time
    c0 = time.process_time()
    w0 = time.perf_counter()
    fn()
    wall = time.perf_counter() - w0
    cpu = time.process_time() - c0
    if wall - cpu > PAUSE_S and cpu < wall / 2 and CPU_CLOCK_FINE:
        PAUSES.seen(wall, wall - cpu)
        return wall, not PAUSES.add(wall - cpu)
    if wall <= PAUSE_S:  # no call this short is held up past PAUSE_S: its counters go unread
        PAUSES.seen(wall, 0.0)
        return wall, True
    after = lost_time.read()
    lost = after.since(before) if after is not None and before is not None else lost_time.Lost()
    PAUSES.seen(wall, min(lost.total, wall))
    if min(lost.total, wall) > PAUSE_S and lost.total > wall / 2:  # some threads did not run
        return wall, not PAUSES.add(min(lost.total, wall), lost)
    return wall, True
