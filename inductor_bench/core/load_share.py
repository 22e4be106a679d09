"""Whether the pauses of a measurement's probes are a steady load or passing spells.

The host probes wait out a timed call during which the process did not run
(``runner/probe_clock.py``): a passing spell of other work ends, and a call made again after it
times the machine. A steady load does not end: a busy loop on one of a 2-core VM's cores held
the probes' threads up in every stretch of the run, and the waits, looking for a quiet moment
that never came, spent their whole allowance (5 s a figure, 15 s in all) and then warned.

The rule reads the share of wall time lost in successive windows of the figure's timed calls
(``WINDOW_S`` of wall time each, the calls' own wall and lost seconds, so it does not depend
on how fast the machine is): the load is steady once the last ``WINDOWS`` windows each lost at
least ``MIN_SHARE`` of their time, none more than ``MAX_SHARE``, and their shares lie within
``SPREAD`` of each other. A spell
of 20-100 ms at random leaves windows without a loss between spells, and is waited out as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field

WINDOW_S = 0.25  # wall seconds of timed calls a window holds (at least)
WINDOWS = 4  # the last this many windows are compared
MIN_SHARE = 0.10  # a window that lost less than this share of its time is a quiet moment
SPREAD = 0.20  # the windows' shares (highest less lowest) lie within this of each other
# a load that leaves the process under 5% of its time is not measured beside: its calls time the
# load, not the machine (a process stopped in every call); such pauses are still waited out
MAX_SHARE = 0.95


@dataclass
class LoadWindows:
    """The lost share of each whole window of a figure's timed calls, kept as they come."""

    shares: list[float] = field(default_factory=list)
    wall_s: float = 0.0  # the window being filled
    lost_s: float = 0.0

    def add(self, wall_s: float, lost_s: float) -> None:
        """One timed call: its wall seconds and the seconds it was held up."""
        self.wall_s, self.lost_s = self.wall_s + wall_s, self.lost_s + min(lost_s, wall_s)
        if self.wall_s >= WINDOW_S:
            self.shares.append(self.lost_s / self.wall_s)
            self.wall_s, self.lost_s = 0.0, 0.0

    def steady_share(self) -> float | None:
        """The mean lost share of the last ``WINDOWS`` windows where the load over them is
        steady (waiting will not find a quieter moment); None where it is not, or too few
        windows are whole."""
        last = self.shares[-WINDOWS:]
        if len(last) < WINDOWS or min(last) < MIN_SHARE or max(last) > MAX_SHARE:
            return None
        if max(last) - min(last) > SPREAD:
            return None
        return sum(last) / len(last)


def steady_share(calls: list[tuple[float, float]]) -> float | None:
    """``LoadWindows.steady_share`` of ``calls`` ((wall s, lost s) in the order timed)."""
    windows = LoadWindows()
    for wall_s, lost_s in calls:
        windows.add(wall_s, lost_s)
    return windows.steady_share()
