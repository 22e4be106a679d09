"""diff's change cell: blank only where a section lacks a graph on one side (its sums are over
other graphs); a step read slower on a busy machine, not comparable though over the same graphs,
keeps its change."""

from __future__ import annotations

import math
import statistics

from inductor_bench.core.diff import diff_results
from inductor_bench.core.results import BreakdownResult
from inductor_bench.core.vocab import Outcome
from inductor_bench.render.diff import render_diff
from inductor_bench.render.diff_verdict import change_cell

from .test_diff import interrupted_run, recorded
from .test_stalled_start import synthetic_compare

# Student-t quantile at 1 - 0.025 / 2 with 119 degrees of freedom (each figure's 97.5% interval)
T_119 = 2.2714


def _ci(xs: list[float]) -> tuple[float, float]:
    m = statistics.fmean(xs)
    hw = T_119 * statistics.stdev(xs) / math.sqrt(len(xs))
    return m - hw, m + hw


def test_a_step_read_slower_on_a_busy_machine_shows_its_change():
    """Head timed beside 0.9 busy cores: 2.010 -> 3.015 ms, +50.0%, its interval from the two
    figures' (head.low / base.high, head.high / base.low): +49.7%..+50.3%."""
    b, h = [2.0, 2.02] * 60, [3.0, 3.03] * 60
    base = synthetic_compare([[2.0, 2.02] * 5] * 12, [[1.0]] * 12)
    head = synthetic_compare([[3.0, 3.03] * 5] * 12, [[1.5]] * 12, load=0.9)
    d = diff_results(base, head)
    eager = d.sections[0]
    assert eager.step.verdict == Outcome.NOT_COMPARABLE
    (bl, bh), (hl, hh) = _ci(b), _ci(h)
    rel = 100 * (statistics.fmean(h) / statistics.fmean(b) - 1)
    want = f"+{rel:.1f}% [+{100 * (hl / bh - 1):.1f}%..+{100 * (hh / bl - 1):.1f}%]"
    assert want == "+50.0% [+49.7%..+50.3%]"
    assert change_cell(eager.step, eager) == want
    row = next(line for line in render_diff(d).splitlines() if line.startswith("step time, ms"))
    assert want in row and row.endswith("not comparable")


def test_a_section_lacking_a_graph_shows_no_change():
    """A head interrupted before its backward: the step and kernel sums are over other graphs."""
    d = diff_results(BreakdownResult.from_dict(recorded()), BreakdownResult.from_dict(interrupted_run()))
    (s,) = d.sections
    assert s.step.verdict == Outcome.NOT_COMPARABLE
    assert change_cell(s.step, s) == "-" and change_cell(s.kernel_time, s) == "-"
    assert {change_cell(c.change, s) for c in s.categories} == {"-"}
