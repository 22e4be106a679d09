"""A probe call during which some of the measuring process's threads did not run, while another
spun and so kept its CPU time up to its wall time, is known by the threads' run-queue wait or
the hypervisor's steal (``runner/lost_time.py``) and made again as a pause is
(``runner/probe_clock.py``). Synthetic: a fake ``/proc/self/task`` and ``/proc/stat`` whose
counters the synthetic calls move, on a synthetic clock."""

from __future__ import annotations

import pytest

from inductor_bench.runner import lost_time, probe_clock
from inductor_bench.runner.probe_clock import FIGURE_PAUSES_MAX_S, PAUSES_MAX_S

SLOW_S = 0.00795  # a 2-thread int8 call whose threads took turns on one core (0.058 ms alone)
TICK_S = 0.01  # /proc/stat's unit at USER_HZ = 100


class _FakeProc:
    """A synthetic ``time`` and ``/proc``: two threads' schedstat files and a ``/proc/stat`` of
    the aggregate line and two CPUs, the process allowed on cpu0 only."""

    def __init__(self, tmp_path, monkeypatch):
        self.now, self.cpu, self.waits, self.steal = 0.0, 0.0, [0, 0], [0, 0]
        self.tasks, self.stat = tmp_path / "task", tmp_path / "stat"
        monkeypatch.setattr(probe_clock, "time", self)
        monkeypatch.setattr(lost_time, "TASKS", str(self.tasks))
        monkeypatch.setattr(lost_time, "PROC_STAT", str(self.stat))
        monkeypatch.setattr(lost_time, "USER_HZ", 100)
        monkeypatch.setattr(lost_time, "_cpus", lambda: {0})
        self.write()

    def perf_counter(self):
        return self.now

    def process_time(self):
        return self.cpu

    def write(self) -> None:
        for tid, wait_ns in zip((101, 102), self.waits, strict=True):
            (self.tasks / str(tid)).mkdir(parents=True, exist_ok=True)
            (self.tasks / str(tid) / "schedstat").write_text(f"5000000 {wait_ns} 7\n")
        cpus = "".join(f"cpu{i} 10 0 5 90 0 0 1 {s} 0 0\n" for i, s in enumerate(self.steal))
        self.stat.write_text(f"cpu  20 0 10 180 0 0 2 {sum(self.steal)} 0 0\n{cpus}intr 1 0 0\nctxt 5\n")

    def call(self, wall_s: float, wait_ns: tuple[int, int] = (0, 0), steal_ticks: tuple[int, int] = (0, 0)):
        """A call of ``wall_s`` whose CPU time is as long (one thread ran, or spun, all along),
        each thread waiting ``wait_ns`` for a core, and each CPU's steal moved by ``steal_ticks``."""
        def run():
            self.now, self.cpu = self.now + wall_s, self.cpu + wall_s
            self.waits = [w + d for w, d in zip(self.waits, wait_ns, strict=True)]
            self.steal = [s + t for s, t in zip(self.steal, steal_ticks, strict=True)]
            self.write()
        return run


def test_a_call_a_thread_waited_through_for_a_core_is_made_again(tmp_path, monkeypatch):
    """7.95 ms of wall and of CPU time, where the call takes 0.058 ms: one thread spun while the
    other waited 7.95 ms on the run queue. It was kept, and 1-1.5 s spells of such calls read
    the int8 ceiling at 0.09 TOP/s against 0.7; now it is a pause of 7.95 ms, made again."""
    proc = _FakeProc(tmp_path, monkeypatch)
    pauses = probe_clock.start_measurement()
    assert probe_clock.timed(proc.call(SLOW_S, wait_ns=(0, 7_950_000))) == (pytest.approx(SLOW_S), False)
    assert (pauses.calls, pauses.seconds, pauses.queued_s, pauses.steal_s) == (
        1, pytest.approx(SLOW_S), pytest.approx(SLOW_S), 0.0)


def test_a_call_is_held_up_as_long_as_its_most_delayed_thread(tmp_path, monkeypatch):
    """Both threads of a 7.95 ms call waited 3 ms, each in turn: the call was held up 3 ms, not
    6, under half its wall time, and is kept; one thread waiting 5 ms holds it up 5 ms."""
    proc = _FakeProc(tmp_path, monkeypatch)
    pauses = probe_clock.start_measurement()
    assert probe_clock.timed(proc.call(SLOW_S, wait_ns=(3_000_000, 3_000_000)))[1]
    assert not probe_clock.timed(proc.call(SLOW_S, wait_ns=(5_000_000, 1_000_000)))[1]
    assert (pauses.calls, pauses.seconds, pauses.queued_s) == (1, pytest.approx(0.005), pytest.approx(0.005))


def test_a_call_the_hypervisor_took_is_made_again(tmp_path, monkeypatch):
    """One tick of steal (10 ms) on the process's CPU during a 7.95 ms call: a pause of the
    call's wall time (never more), said as steal; cpu1's steal, the process not allowed there,
    is not counted."""
    proc = _FakeProc(tmp_path, monkeypatch)
    before = lost_time.read()
    proc.call(0.0, steal_ticks=(3, 50))()
    assert lost_time.read().since(before) == lost_time.Lost(0.0, pytest.approx(3 * TICK_S))
    pauses = probe_clock.start_measurement()
    assert probe_clock.timed(proc.call(SLOW_S, steal_ticks=(1, 0))) == (pytest.approx(SLOW_S), False)
    assert (pauses.seconds, pauses.steal_s, pauses.queued_s) == (pytest.approx(SLOW_S), pytest.approx(SLOW_S), 0.0)


def test_a_short_call_across_a_steal_tick_is_kept(tmp_path, monkeypatch):
    """A 0.058 ms call in which the steal counter moved a tick (10 ms, counted at the tick)
    cannot have lost 2 ms: it is kept."""
    proc = _FakeProc(tmp_path, monkeypatch)
    pauses = probe_clock.start_measurement()
    assert probe_clock.timed(proc.call(58e-6, steal_ticks=(1, 0))) == (pytest.approx(58e-6), True)
    assert pauses.calls == 0


def test_steal_past_what_a_figure_waits_out_is_said_as_the_hypervisors(tmp_path, monkeypatch):
    """Four 1.5 s calls, each all steal: three waited out (4.5 s), the fourth past the figure's
    5 s; the warning says the hypervisor took the CPU, and for how long."""
    proc = _FakeProc(tmp_path, monkeypatch)
    pauses = probe_clock.start_measurement()
    kept = [probe_clock.timed(proc.call(1.5, steal_ticks=(150, 0)))[1] for _ in range(4)]
    assert kept == [False, False, False, True]
    assert pauses.describe() == (
        "the measuring process did not run for 6.0 s of 4 timed call(s) (stopped, or its threads "
        f"waiting for a core: more than its probes wait out, {FIGURE_PAUSES_MAX_S:g} s a figure and "
        f"{PAUSES_MAX_S:g} s in all); the hypervisor took the CPU: 6000 ms of steal")


def test_a_spell_of_both_is_said_as_each(tmp_path, monkeypatch):
    """An 8 s call: a thread waited 6 s for a core, and its CPU had 2 s (200 ticks) of steal:
    held up 6 s, past the figure's 5 s, the pause shared 6 : 2 between the causes."""
    proc = _FakeProc(tmp_path, monkeypatch)
    pauses = probe_clock.start_measurement()
    assert probe_clock.timed(proc.call(8.0, wait_ns=(6_000_000_000, 0), steal_ticks=(200, 0)))[1]
    assert pauses.seconds == pytest.approx(6.0)
    assert pauses.describe().endswith(
        "; its threads waited 4500 ms for a core and the hypervisor took the CPU: 1500 ms of steal")


def test_where_the_counters_are_missing_the_check_is_off(tmp_path, monkeypatch):
    """No ``/proc/self/task`` nor ``/proc/stat`` (not Linux): a call whose CPU time kept up
    with its wall time is kept, as before."""
    proc = _FakeProc(tmp_path, monkeypatch)
    monkeypatch.setattr(lost_time, "TASKS", str(tmp_path / "none"))
    monkeypatch.setattr(lost_time, "PROC_STAT", str(tmp_path / "none" / "stat"))
    assert lost_time.read() is None
    pauses = probe_clock.start_measurement()
    assert probe_clock.timed(proc.call(SLOW_S, wait_ns=(0, 7_950_000))) == (pytest.approx(SLOW_S), True)
    assert pauses.calls == 0
