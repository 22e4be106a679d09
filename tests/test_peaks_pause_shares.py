"""Under a steady load every figure of a measurement (the three bandwidth figures, measured
first, then each compute type) keeps a share of the pauses the measurement waits out, and the
warning names the figures that ran out of theirs: only those may be low. Synthetic pauses on a
synthetic clock (as ``tests/test_peaks_paused.py``'s): each figure's probes see 3 s of pauses
in 0.5 s spells; the whole measurement waits out ``PAUSES_MAX_S`` (15 s)."""

from __future__ import annotations

import pytest

from inductor_bench.core.ceilings import Ceilings
from inductor_bench.runner import peaks_measure, probe_clock
from inductor_bench.runner.probe_clock import FIGURE_PAUSES_MAX_S, PAUSES_MAX_S

pytestmark = pytest.mark.usefixtures("host_counters_off")  # synthetic clocks: no real counters
SPELL_S, SPELLS = 0.5, 6  # each figure: 6 calls, each paused 0.5 s


class _LoadedClock:
    """A synthetic ``time``: every call waits ``SPELL_S`` of wall time in which the process
    does not run, then runs 10 ms."""

    def __init__(self) -> None:
        self.now, self.cpu = 0.0, 0.0

    def perf_counter(self):
        return self.now

    def process_time(self):
        return self.cpu

    def run(self) -> None:
        self.now += SPELL_S + 0.01
        self.cpu += 0.01


def _expected_waits(figures: int) -> list[float]:
    """Each figure's pauses waited out, worked by hand from the rule: a figure waits up to 5 s,
    and leaves each figure after it (15 - 5) / (figures - 1) s of the 15."""
    share = (PAUSES_MAX_S - FIGURE_PAUSES_MAX_S) / (figures - 1)
    waited, out = 0.0, []
    for i in range(figures):
        room = min(FIGURE_PAUSES_MAX_S, PAUSES_MAX_S - (figures - 1 - i) * share - waited)
        spells = min(SPELLS, int(room / SPELL_S + 1e-9))
        out.append(spells * SPELL_S)
        waited += spells * SPELL_S
    return out


def test_a_steady_load_leaves_the_last_figures_their_share_and_names_those_that_ran_out(monkeypatch):
    """Six figures (copy, memcpy, triad, fp32, bf16, int8), each paused 3 s: the whole
    measurement waits out 15 s, 3 + 3 + 3 + 2 + 2 + 2; the int8 figure, measured last, used to
    get none of it (the bandwidth figures and fp32 spent it all: int8 read 0.046 TOP/s against
    0.63). The warning names the three that ran out."""
    clock = _LoadedClock()
    monkeypatch.setattr(probe_clock, "time", clock)
    waited: list[float] = []

    def probe(*_args, **_kwargs):
        before = probe_clock.PAUSES.waited_s
        for _ in range(SPELLS):
            probe_clock.timed(clock.run)
        waited.append(probe_clock.PAUSES.waited_s - before)
        return 0.01

    monkeypatch.setattr(peaks_measure, "best_seconds", probe)
    monkeypatch.setattr(peaks_measure, "matmul_tflops", lambda kind, device, reps: (probe(), 256, "a @ b"))
    monkeypatch.setattr(peaks_measure, "compute_kinds", lambda device: ["fp32", "bf16", "int8"])
    monkeypatch.setattr(peaks_measure, "HOST_ARRAY_BYTES", 4096)
    monkeypatch.setattr(peaks_measure, "last_level_cache_bytes", lambda: 0)
    c = peaks_measure.measure("cpu", 7)
    assert isinstance(c, Ceilings)
    assert _expected_waits(6) == pytest.approx([3.0, 3.0, 3.0, 2.0, 2.0, 2.0])
    assert waited == pytest.approx(_expected_waits(6))
    pauses = probe_clock.PAUSES
    assert pauses.waited_s == pytest.approx(PAUSES_MAX_S)
    assert pauses.short_in == ["fp32", "bf16", "int8"]
    assert pauses.describe() == (
        "the measuring process did not run for 18.0 s of 36 timed call(s) (stopped, or its threads "
        "waiting for a core: more than its probes wait out, 5 s a figure and 15 s in all; ran out in "
        "fp32, bf16, int8)")


def test_one_long_pause_in_the_first_figure_is_still_waited_out():
    """A quiet measurement but for one 4.5 s pause in its first figure: waited out whole, as
    before the shares (the first figure leaves the other five 2 s each: 15 - 10 = 5 s)."""
    pauses = probe_clock.start_measurement(figures=6)
    pauses.next_figure("copy")
    assert pauses.add(4.5) and pauses.describe() is None
    for name in ("memcpy", "triad", "fp32", "bf16"):
        pauses.next_figure(name)
    pauses.next_figure("int8")
    assert pauses.room() == pytest.approx(FIGURE_PAUSES_MAX_S)  # the last: its own 5 s, 4.5 of 15 spent
