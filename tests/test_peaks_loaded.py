"""A ceiling is a best case: measured beside a neighbour that never stops, it is taken from the
fastest of many short calls, not from a few calls that a spell of the neighbour's slowed
(``runner/peaks_matmul.py``, ``runner/peaks_measure.py``). Synthetic timings on a synthetic
clock, shaped as measured on the 2-core EPYC VM (torch 2.13, 2 threads, 2026-12-07, a busy loop
on one core): a 256 x 256 fp32 matmul took 0.17 ms (197 GFLOP/s) when both threads ran and
50 ms inside a spell of the neighbour's, and a 1024 x 1024 one never fit between two scheduler
slices (50 ms and more)."""

from __future__ import annotations

import pytest

from inductor_bench.runner import peaks_matmul, probe_clock
from inductor_bench.runner.peaks_matmul import LAYOUTS, ONEDNN, best_seconds, matmul_tflops

pytestmark = pytest.mark.usefixtures("host_counters_off")  # synthetic clocks: no real counters
SLOW_S = 0.050  # a call inside it, or any call at n >= 1024


class _Clock:
    """A synthetic ``time`` whose ``perf_counter`` moves only by the synthetic calls, and whose
    ``process_time`` moves with it (the process ran through every call)."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now

    def process_time(self):
        return self.now


def _loaded_operands(clock: _Clock, calls: list, spell_s: float):
    """``_operands`` whose calls move the clock: at n = 256 by 0.17 ms out of the spell and by
    ``SLOW_S`` in the neighbour's spell (its first ``spell_s``); at n >= 512 by ``SLOW_S`` x (n / 1024)³ at best, never faster."""

    def operands(kind, n, device, layout="a @ b"):
        def call():
            calls.append((layout, n))
            quick = 2.0 * n**3 / 197e9
            spelled = SLOW_S if clock.now < spell_s else quick
            clock.now += spelled if n == 256 else max(quick, SLOW_S * (n / 1024) ** 3)
        return call
    return operands


@pytest.mark.parametrize("spell_s", [0.3, 1.5])
def test_the_fp32_ceiling_beside_a_busy_neighbour_is_its_fastest_calls_rate(monkeypatch, spell_s):
    """The probes' first rounds fall in the spell (0.67 GFLOP/s), the rounds after it run at
    197; every call at 1024 and above runs at 43 GFLOP/s. The ceiling is 197 GFLOP/s at n = 256,
    where the best of three calls a route and sizes from 1024 read 43 (or 0.67). A spell longer
    than the probes' 1 s budget keeps the rounds going past it, while every call is stalled."""
    clock, calls = _Clock(), []
    monkeypatch.setattr(probe_clock, "time", clock)
    monkeypatch.setattr(peaks_matmul, "routes", lambda device, kind: LAYOUTS + (ONEDNN,))
    monkeypatch.setattr(peaks_matmul, "_operands", _loaded_operands(clock, calls, spell_s))
    rate, n, _ = matmul_tflops("fp32", "cpu", 7)
    assert (rate, n) == (pytest.approx(0.197), 256)
    probe_calls = sum(1 for _, size in calls if size == 256)
    assert probe_calls > 5 * 10  # many short calls in rounds, not 4 a route
    probes_s = max(spell_s + 5 * SLOW_S, peaks_matmul.PROBE_BUDGET_S) + 5 * SLOW_S  # + the untimed round
    assert clock.now < probes_s + peaks_matmul.MATMUL_BUDGET_S + 5 * SLOW_S


def test_a_bandwidth_figure_is_the_fastest_call_in_its_time_budget(monkeypatch):
    """A 128 MiB copy: its first 10 calls slowed by the neighbour (50 ms), the rest 13 ms. The
    fastest of 7 calls is 50 ms; of the calls in 0.75 s, 13 ms."""
    clock, n = _Clock(), [0]

    def copy():
        n[0] += 1
        clock.now += 0.050 if n[0] <= 11 else 0.013  # the warm-up, then 10 slow timed calls

    monkeypatch.setattr(probe_clock, "time", clock)
    assert best_seconds(copy, "cpu", 7, 0.75) == pytest.approx(0.013)
    assert clock.now == pytest.approx(0.05 + 10 * 0.050 + 20 * 0.013)  # the budget's last call ends at 0.76 s
