"""A steady load is measured beside, not waited for; passing spells are still waited out.

Synthetic probe sequences of (wall s, lost s) per timed call, built by hand (no clock, no
machine): a steady share of each window lost, spells of 20-100 ms between quiet stretches, a
quiet run, and a process stopped through every call (``core/load_share.py``)."""

from __future__ import annotations

import pytest

from inductor_bench.core.load_share import LoadWindows, steady_share
from inductor_bench.runner import probe_clock

pytestmark = pytest.mark.usefixtures("host_counters_off")

CALL_S = 0.01  # each synthetic call's wall time: 25 calls a 0.25 s window


def window_shares(calls: list[tuple[float, float]]) -> list[float]:
    windows = LoadWindows()
    for wall_s, lost_s in calls:
        windows.add(wall_s, lost_s)
    return windows.shares


def _steady(n: int, lost: float) -> list[tuple[float, float]]:
    return [(CALL_S, lost)] * n


def _spells() -> list[tuple[float, float]]:
    """Quiet 10 ms calls, and every 40th held up by a spell (20, 60, 100 ms: lost = its wall)."""
    calls: list[tuple[float, float]] = []
    for spell in (0.02, 0.06, 0.1, 0.02, 0.06, 0.1):
        calls += _steady(39, 0.0) + [(spell, spell)]
    return calls


def test_a_steady_share_is_found_after_four_whole_windows():
    calls = _steady(100, 0.005)  # half of every call lost: 4 windows of 25 calls
    assert window_shares(calls) == pytest.approx([0.5] * 4)
    assert steady_share(calls) == pytest.approx(0.5)
    assert steady_share(calls[:99]) is None  # the fourth window not yet whole


def test_spells_between_quiet_stretches_are_not_steady():
    shares = window_shares(_spells())
    # windows of 25 calls: a spell falls in some, the others are quiet
    assert min(shares) == 0.0
    assert steady_share(_spells()) is None


def test_a_quiet_run_and_a_stopped_process_are_not_steady():
    assert steady_share(_steady(200, 0.0)) is None
    assert steady_share([(0.51, 0.5)] * 8) is None  # 98% lost: the calls time the load, not the machine


def test_shares_that_swing_are_not_steady():
    calls = _steady(25, 0.002) + _steady(25, 0.006) + _steady(50, 0.002)  # 20%, 60%, 20%, 20%
    assert window_shares(calls) == pytest.approx([0.2, 0.6, 0.2, 0.2])
    assert steady_share(calls) is None
    windows = LoadWindows()
    for wall_s, lost_s in calls + _steady(25, 0.003):  # the last four: 60, 20, 20, 30%
        windows.add(wall_s, lost_s)
    assert windows.steady_share() is None
    for wall_s, lost_s in _steady(25, 0.003):  # 20, 20, 30, 30%: within 20 points
        windows.add(wall_s, lost_s)
    assert windows.steady_share() == pytest.approx(0.25)


def _feed(pauses: probe_clock.Pauses, calls: list[tuple[float, float]]) -> list[bool]:
    """What ``probe_clock.timed`` does with each call: seen, and a pause over half its wall
    added; the decisions (waited out or not) of the paused ones."""
    decisions = []
    for wall_s, lost_s in calls:
        pauses.seen(wall_s, lost_s)
        if lost_s > probe_clock.PAUSE_S and lost_s > wall_s / 2:
            decisions.append(pauses.add(lost_s))
    return decisions


def test_under_a_steady_load_the_pauses_stop_being_waited_once_it_is_known_steady():
    pauses = probe_clock.start_measurement(figures=2)
    pauses.next_figure("copy")
    # every 10 ms call held up 6 ms (60%): waited out until the fourth window is whole (100 calls)
    decisions = _feed(pauses, _steady(150, 0.006))
    assert decisions == [True] * 99 + [False] * 51
    assert pauses.waited_s == pytest.approx(99 * 0.006)
    assert pauses.steady == {"copy": pytest.approx(0.6)}
    # taken beside the load, the figure counts as disturbed: the next run measures again
    assert pauses.describe() == ("other processes held up its probes' calls steadily, not waited out "
                                "(the share of their time: copy 60%)")
    assert pauses.note() == ("; 150 call(s) during which the process did not run (0.9 s) timed again; "
                             "measured beside a steady load (the share of the calls' time other processes "
                             "held them up: copy 60%), not waited out")
    pauses.next_figure("fp32")  # a new figure is judged afresh: its first spell is waited out
    assert _feed(pauses, [(0.1, 0.1)]) == [True]


def test_spells_are_all_waited_out():
    pauses = probe_clock.start_measurement(figures=1)
    pauses.next_figure("copy")
    assert _feed(pauses, _spells()) == [True] * 6
    assert pauses.steady == {} and pauses.waited_s == pytest.approx(0.36)
    assert pauses.note() == "; 6 call(s) during which the process did not run (0.4 s) timed again"
