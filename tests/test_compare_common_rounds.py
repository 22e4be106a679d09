"""A column that stopped before the others: its step time, its samples, the speedups and the
fastest pick all stand on the rounds every column ran, while compare.json keeps every round."""

from __future__ import annotations

import pytest

from inductor_bench.core.compare import CompareResult, ModeResult, fastest, judge
from inductor_bench.core.diff import diff_results
from inductor_bench.core.sweep_table import mode_figures
from inductor_bench.core.vocab import Stop
from inductor_bench.render.compare import render_compare, verdict_line
from inductor_bench.render.doc import new_doc

EAGER_MS, DEFAULT_EARLY_MS, DEFAULT_LATE_MS = 0.5, 0.6, 0.9
CALLS = 4  # calls per block


def stopped_early() -> CompareResult:
    """Eager ran 10 of 20 rounds (its call limit); default ran all 20, slower in the last 10."""
    eager = [[EAGER_MS] * CALLS] * 10 + [[]] * 10
    default = [[DEFAULT_EARLY_MS] * CALLS] * 10 + [[DEFAULT_LATE_MS] * CALLS] * 10
    return CompareResult(
        model="mlp", device="cpu", device_name="Test CPU",
        interleaved={"rounds": 20, "block_steps": [CALLS, CALLS], "load": None, "stopped": {"eager": Stop.CALL_LIMIT}},
        modes=[
            ModeResult(mode="eager", compile_s=0.0, paired_ms=eager),
            ModeResult(mode="default", compile_s=1.0, paired_ms=default),
        ],
    )


def test_each_column_s_step_time_comes_from_the_rounds_every_column_ran():
    r = stopped_early()
    eager, default = r.modes
    assert r.rounds_with_every_column() == 10
    assert r.step_samples(eager) == [EAGER_MS] * (10 * CALLS)
    assert r.step_samples(default) == [DEFAULT_EARLY_MS] * (10 * CALLS)
    assert r.step(default).ms == pytest.approx(DEFAULT_EARLY_MS)
    # all its rounds hold its slower half too, which the rule takes for a stalled half and
    # leaves out (core/steady.py): the rounds the speedup is judged on leave out none
    assert default.step().left_out == 10 * CALLS and r.step(default).left_out == 0
    ch = judge(r, eager, default)
    assert ch.paired.rounds == 10
    assert ch.head.ms == pytest.approx(r.step(default).ms)
    assert ch.speedup == pytest.approx(EAGER_MS / DEFAULT_EARLY_MS)
    assert r.speedup("eager", "default") == pytest.approx(DEFAULT_EARLY_MS / EAGER_MS)


def test_the_table_the_fastest_pick_and_the_sweep_agree_with_the_speedups():
    r = stopped_early()
    assert fastest(r) is r.modes[0]
    ratio = DEFAULT_EARLY_MS / EAGER_MS
    line = verdict_line(r, new_doc("text"))
    assert line.startswith(f"Fastest steady state: eager {EAGER_MS:.4f} ms ({ratio:.2f}x [{ratio:.2f}x-{ratio:.2f}x] "
                           "over default (significant)")
    rows = {ln.split("  ")[0]: ln.split() for ln in render_compare(r).splitlines() if "  " in ln}
    assert rows["step time, ms (steady mean ± spread)"][-4:] == [f"{EAGER_MS:.4f}", "±0.0%", f"{DEFAULT_EARLY_MS:.4f}",
                                                                 "±0.0%"]
    assert rows["steady samples"][-2:] == [f"{10 * CALLS}/{10 * CALLS}"] * 2  # equal calls: none left out
    text = " ".join(render_compare(r).split())
    assert ("a speedup is the median of the ratios of the rounds every column ran in (10 of the 20: eager "
            "stopped after 10, having reached its call limit, and sat out the rest), and each column's step "
            "time and samples come from those rounds too (compare.json keeps all its rounds)") in text
    assert mode_figures(r, "mlp", "default", "eager").step_ms == pytest.approx(DEFAULT_EARLY_MS)


def test_compare_json_keeps_every_round():
    r = stopped_early()
    back = CompareResult.from_dict(r.to_dict())
    assert back.modes[1].paired_ms == [[DEFAULT_EARLY_MS] * CALLS] * 10 + [[DEFAULT_LATE_MS] * CALLS] * 10
    assert back.step(back.modes[1]).ms == pytest.approx(DEFAULT_EARLY_MS)


def test_diff_of_two_such_compares_shows_the_compares_own_step_times():
    """diff's step row of a column is the figure each compare printed: the common rounds'."""
    base, head = stopped_early(), stopped_early()
    head.modes[1].paired_ms = [[0.7] * CALLS] * 10 + [[1.2] * CALLS] * 10
    section = next(s for s in diff_results(base, head).sections if s.mode == "default")
    assert (section.step.base.ms, section.step.head.ms) == (pytest.approx(DEFAULT_EARLY_MS), pytest.approx(0.7))
    assert section.step.head.ms == pytest.approx(head.step(head.modes[1]).ms)


def test_the_samples_row_counts_the_steady_calls_the_step_time_is_the_mean_of():
    """Synthetic: 19 calls of 1 ms and one stalled call of 5 ms; the stall is left out, so the
    step time is 1 ms and the row reads 19 of 20."""
    r = CompareResult(model="mlp", modes=[ModeResult(mode="eager", compile_s=0.0,
                                                     step_samples_ms=[1.0] * 19 + [5.0])])
    rows = {ln.split("  ")[0]: ln.split() for ln in render_compare(r).splitlines() if "  " in ln}
    assert rows["steady samples"][-1] == "19/20"
    assert rows["step time, ms (steady mean ± spread)"][-2] == "1.000"
