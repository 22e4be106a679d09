"""A pause of the measuring process (stopped by a signal, its VM paused, every thread off its
core) cannot lower a ceiling: a call it falls in is timed again, and its time counts toward no
budget (``runner/probe_clock.py``). A pause longer than the measurement waits out is said, and
the figures are measured again by the next run. Synthetic timings on a synthetic clock (shaped
as ``tests/test_peaks_loaded.py``'s), and one real pause: SIGSTOP and SIGCONT of a process timing
calls."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from inductor_bench.core.ceilings import Ceilings, Roofline
from inductor_bench.render.roofline import ceilings_lines
from inductor_bench.runner import peaks_matmul, peaks_measure, probe_clock
from inductor_bench.runner.peaks_matmul import LAYOUTS, ONEDNN, best_seconds, matmul_tflops
from inductor_bench.runner.probe_clock import FIGURE_PAUSES_MAX_S, PAUSES_MAX_S, Pauses

pytestmark = pytest.mark.usefixtures("host_counters_off")  # synthetic clocks: no real counters
PAUSE_S = 4.0  # longer than the probes' PROBE_MAX_S (3 s) and budgets (1 s, 0.75 s)
SLOW_S = 0.050  # a 256 x 256 call in a neighbour's spell, or any call at n >= 1024


class _PausingClock:
    """A synthetic ``time``: each call moves the wall clock and the process's CPU time alike,
    but the first call that starts after ``pause_at`` s of running also waits ``pause_s`` of
    wall time in which the process does not run."""

    def __init__(self, pause_at: float | None, pause_s: float = PAUSE_S):
        self.now, self.cpu, self.pause_at, self.pause_s = 0.0, 0.0, pause_at, pause_s

    def perf_counter(self):
        return self.now

    def process_time(self):
        return self.cpu

    def run(self, seconds: float) -> None:
        if self.pause_at is not None and self.cpu >= self.pause_at:
            self.now, self.pause_at = self.now + self.pause_s, None
        self.now += seconds
        self.cpu += seconds


def _spelled_operands(clock: _PausingClock, spell_s: float):
    """``_operands`` whose calls run on ``clock``: at n = 256 0.17 ms (197 GFLOP/s), or
    ``SLOW_S`` in a neighbour's spell (the first ``spell_s`` of running); at n >= 1024 never
    faster than ``SLOW_S`` x (n / 1024)³ (43 GFLOP/s)."""

    def operands(kind, n, device, layout="a @ b"):
        def call():
            quick = 2.0 * n**3 / 197e9
            clock.run((SLOW_S if clock.cpu < spell_s else quick) if n == 256 else max(quick, SLOW_S * (n / 1024) ** 3))
        return call
    return operands


def _fp32_ceiling(monkeypatch, pause_at: float | None) -> tuple[tuple[float, int], float, Pauses]:
    clock = _PausingClock(pause_at)
    monkeypatch.setattr(probe_clock, "time", clock)
    monkeypatch.setattr(peaks_matmul, "routes", lambda device, kind: LAYOUTS + (ONEDNN,))
    monkeypatch.setattr(peaks_matmul, "_operands", _spelled_operands(clock, spell_s=2.5))
    pauses = probe_clock.start_measurement()
    rate, n, _ = matmul_tflops("fp32", "cpu", 7)
    return (rate, n), clock.now, pauses


@pytest.mark.parametrize("pause_at", [0.1, 0.6, 1.4])  # in the untimed round, in the spell's rounds, after it
def test_a_pause_during_the_probes_leaves_the_fp32_ceiling_as_unpaused(monkeypatch, pause_at):
    """Unpaused, the probes' rounds go on while every call is slow, past the neighbour's 2.5 s
    spell, and reach 197 GFLOP/s at n = 256. A 4 s pause in the spell's rounds used to spend
    every budget: three rounds and the grown sizes' few calls, all in the spell, read 0.00067
    TFLOP/s. Now the pause is waited out: the same ceiling, 4 s later."""
    quiet, quiet_s, none = _fp32_ceiling(monkeypatch, None)
    assert quiet == (pytest.approx(0.197), 256) and none.seconds == 0.0
    paused, paused_s, pauses = _fp32_ceiling(monkeypatch, pause_at)
    assert paused == (pytest.approx(quiet[0], rel=1e-9), quiet[1])  # the clock's float sums apart
    assert (pauses.seconds, pauses.calls) == (pytest.approx(PAUSE_S), 1)
    assert pauses.describe() is None and "1 call(s) during which the process did not run (4.0 s)" in pauses.note()
    assert quiet_s + PAUSE_S - SLOW_S <= paused_s <= quiet_s + PAUSE_S + 5 * SLOW_S  # a round made again at most


class _SpellClock(_PausingClock):
    """Every call in the first ``spell_s`` of wall time waits ``SLOW_S`` for a core: its wall
    time is that, its CPU time the call's own work (the process did not run the rest)."""

    def __init__(self, spell_s: float):
        super().__init__(None)
        self.spell_s = spell_s

    def run(self, seconds: float) -> None:
        self.now += SLOW_S if self.now < self.spell_s else seconds
        self.cpu += seconds


def test_a_spell_of_other_work_longer_than_the_probes_is_waited_out(monkeypatch):
    """Other processes keep every thread of the measuring one off its cores for 4.8 s (wall):
    each 256 x 256 call takes 50 ms, of which it ran 0.17 ms. Those calls used to count: past
    ``PROBE_MAX_S`` (3 s) the probes stopped, every call slow, and the fp32 ceiling read 0.00067
    TFLOP/s; now the spell's calls are made again, and it reads 197 GFLOP/s."""
    clock = _SpellClock(spell_s=4.8)
    monkeypatch.setattr(probe_clock, "time", clock)
    monkeypatch.setattr(peaks_matmul, "routes", lambda device, kind: LAYOUTS + (ONEDNN,))
    monkeypatch.setattr(peaks_matmul, "_operands", _spelled_operands(clock, spell_s=0.0))
    pauses = probe_clock.start_measurement()
    rate, n, _ = matmul_tflops("fp32", "cpu", 7)
    assert (rate, n) == (pytest.approx(0.197, rel=1e-9), 256)
    assert pauses.seconds < FIGURE_PAUSES_MAX_S and pauses.describe() is None
    calls_in_spell = 4.8 / SLOW_S
    assert pauses.calls == pytest.approx(calls_in_spell, abs=2)  # the call that runs into it


def test_a_pause_in_a_bandwidth_figure_is_waited_out(monkeypatch):
    """A 128 MiB copy: its first 10 timed calls slowed by a neighbour (50 ms), the rest 13 ms;
    the figure is the fastest call in 0.75 s of running, 13 ms. A 4 s pause in the third call
    used to spend the budget, leaving the best of 7 slow calls: 50 ms."""
    clock, made = _PausingClock(pause_at=0.12), [0]

    def copy():
        made[0] += 1
        clock.run(0.050 if made[0] <= 11 else 0.013)  # the warm-up, then 10 slow timed calls

    monkeypatch.setattr(probe_clock, "time", clock)
    probe_clock.start_measurement()
    assert best_seconds(copy, "cpu", 7, 0.75) == pytest.approx(0.013)
    assert clock.now == pytest.approx(PAUSE_S + 0.05 + 10 * 0.050 + 20 * 0.013)  # its 20 quick calls as unpaused


def test_pauses_past_what_a_figure_waits_out_count_as_time_and_are_said(monkeypatch):
    """A pause longer than ``FIGURE_PAUSES_MAX_S``: the call it falls in is kept, the budget
    counts wall time from there on (the waits are bounded), and the measurement says why its
    figures may be low. The next figure waits its own pauses out again."""
    clock = _PausingClock(pause_at=0.005, pause_s=FIGURE_PAUSES_MAX_S + 1.0)  # after the warm-up
    monkeypatch.setattr(probe_clock, "time", clock)
    pauses = probe_clock.start_measurement()
    assert best_seconds(lambda: clock.run(0.01), "cpu", 3, 0.0) == pytest.approx(0.01)
    assert pauses.over and pauses.calls == 1 and clock.now == pytest.approx(FIGURE_PAUSES_MAX_S + 1.0 + 4 * 0.01)
    assert pauses.describe() == ("the measuring process did not run for 6.0 s of 1 timed call(s) "
                                 "(stopped, or its threads waiting for a core: more than its probes wait "
                                 "out, 5 s a figure and 15 s in all)")
    assert pauses.note() == ""
    pauses.next_figure()
    clock.pause_at, clock.pause_s = clock.cpu + 0.015, 4.0
    assert best_seconds(lambda: clock.run(0.01), "cpu", 3, 0.0) == pytest.approx(0.01)
    assert (pauses.seconds, pauses.calls, pauses.waited_s) == (pytest.approx(10.0), 2, pytest.approx(9.0))


def test_a_measurement_waits_out_so_much_pause_in_all(monkeypatch):
    """Four figures, each paused 4.5 s: the first three are waited out, the fourth only to
    ``PAUSES_MAX_S`` (15 s) in all, and the measurement says so."""
    clock = _PausingClock(None)
    monkeypatch.setattr(probe_clock, "time", clock)
    pauses = probe_clock.start_measurement()
    kept = []
    for _ in range(4):
        pauses.next_figure()
        clock.pause_at, clock.pause_s = clock.cpu, 4.5
        kept.append(probe_clock.timed(lambda: clock.run(0.01))[1])
    assert kept == [False, False, False, True]
    assert pauses.waited_s == pytest.approx(PAUSES_MAX_S) and pauses.describe() is not None


def test_a_measurement_paused_too_long_warns_and_is_not_taken_from_the_cache(monkeypatch, tmp_path):
    """Synthetic: the measurement's probes were paused 9 s in all (no other process busy). The
    ceilings say so, as a load is said, and the cached entry is measured again by the next run."""
    def measure(device, reps):
        probe_clock.start_measurement()
        probe_clock.PAUSES.seconds, probe_clock.PAUSES.calls, probe_clock.PAUSES.short_in = 9.0, 2, [""]
        return Ceilings("test cpu", 30.0, {"fp32": 0.2})

    monkeypatch.setattr(peaks_measure, "measure", measure)
    monkeypatch.setattr(peaks_measure, "cpu_counters", lambda: None)
    got = Ceilings.from_dict(peaks_measure.handle({"device": "cpu", "cache_dir": str(tmp_path)})["ceilings"])
    said = "the measuring process did not run for 9.0 s of 2 timed call(s)"
    assert got.load.startswith(said)
    lines = ceilings_lines(Roofline(measured=got))
    assert any(line.startswith(f"WARNING: the ceilings were measured while {said}") for line in lines)
    entry = peaks_measure.read_cached(next(tmp_path.glob("*.json")))
    assert peaks_measure.usable(entry, got.key) is None


CHILD = r"""
import sys, time
from inductor_bench.runner import probe_clock
from inductor_bench.runner.peaks_matmul import best_seconds

def spin():
    t = time.process_time()
    while time.process_time() - t < 0.002:
        pass

probe_clock.start_measurement()
print("go", flush=True)
started = time.perf_counter()
best_seconds(spin, "cpu", 7, float(sys.argv[1]))
print(time.perf_counter() - started, probe_clock.PAUSES.seconds, flush=True)
"""


def test_a_real_stop_of_the_probing_process_is_waited_out():
    """The process times 2 ms calls for 0.5 s of running; it is stopped (SIGSTOP) 0.1 s in, for
    1.5 s. Its calls go on for the rest of the budget after it runs again: it ends no sooner
    than budget + stop, and no later than that plus what it waits out (``FIGURE_PAUSES_MAX_S``) and 2 s
    of this machine's other work. Without the stop detection it ended 7 calls after SIGCONT."""
    budget, stop = 0.5, 1.5
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(budget)], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "go"
    time.sleep(0.1)
    child.send_signal(signal.SIGSTOP)
    time.sleep(stop)
    child.send_signal(signal.SIGCONT)
    out, _ = child.communicate(timeout=60)
    wall, paused = (float(x) for x in out.split())
    assert paused >= stop - 0.1
    assert budget + stop <= wall <= budget + stop + FIGURE_PAUSES_MAX_S + 2.0


def test_reading_the_process_time_is_not_timed_as_the_call(monkeypatch):
    """Synthetic: reading the process's CPU time costs 2 us of wall time (1.9 us measured on the
    2-core VM), a 256 x 256 int8 matmul 43 us. The call is timed at 43 us; it read 45 (4% low)."""
    clock = _PausingClock(None)

    def process_time():
        clock.now += 2e-6
        return clock.cpu

    monkeypatch.setattr(probe_clock, "time", clock)
    monkeypatch.setattr(clock, "process_time", process_time)
    probe_clock.start_measurement()
    assert probe_clock.timed(lambda: clock.run(43e-6)) == (pytest.approx(43e-6, rel=1e-9), True)


def test_a_coarse_cpu_clock_reads_no_pause(monkeypatch):
    """Synthetic: where the process's CPU time ticks coarsely (15.6 ms on Windows), a 5 ms call
    can read no CPU time at all; it is kept, not taken for a pause and made again without end."""
    clock = _PausingClock(None)
    monkeypatch.setattr(probe_clock, "time", clock)
    monkeypatch.setattr(probe_clock, "CPU_CLOCK_FINE", False)
    monkeypatch.setattr(clock, "process_time", lambda: 0.0)
    pauses = probe_clock.start_measurement()
    assert probe_clock.timed(lambda: clock.run(0.005)) == (pytest.approx(0.005), True)
    assert pauses.calls == 0
