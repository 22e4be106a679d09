"""The step line of ``breakdown --autotune-top`` (render/autotune_step.py) where one side of the
interleaved timing stopped before the other: the progress line counts every round run, the
verdict only the rounds both sides ran, and the line says which and why. Synthetic rounds, as
seen on a loaded 2-core machine: default's every call stalled (1-call blocks, 15 rounds before
its 1 s budget), max-autotune's 20-call blocks reached the 200-call limit after 10."""

from __future__ import annotations

from inductor_bench.core.autotune_records import Recompile, autotune_from_dict
from inductor_bench.core.vocab import Stop
from inductor_bench.render.autotune_step import rounds_run, step_change

BASE = [[70.0 + r] for r in range(15)]  # 1 call a round, 15 rounds
TUNED = [[1.05] * 20 for _ in range(10)] + [[] for _ in range(5)]


def recompile(base, tuned, stopped) -> Recompile:
    return Recompile(n=3, tuned_run="runs/m/max-autotune", tuned_status="ok", base_step_ms=77.0,
                     tuned_step_ms=1.05, base_kernel_ms=0.5, tuned_kernel_ms=0.5, rows=[],
                     base_paired_ms=base, tuned_paired_ms=tuned, step_stopped=stopped)


def test_the_line_says_the_verdict_rests_on_the_rounds_both_ran_and_why_the_others():
    line = step_change(recompile(BASE, TUNED, [Stop.TIME_BUDGET, Stop.CALL_LIMIT]), "default")
    assert rounds_run(BASE) == 15 and rounds_run(TUNED) == 10
    assert ("the median of 10 rounds' ratios, both timed interleaved in one process; 10 of 15 rounds, "
            "the ones both sides ran: max-autotune stopped after 10, having reached its call limit, "
            "and sat out the rest)") in line


def test_the_base_side_stopping_first_is_named_by_its_mode_and_a_result_without_reasons_says_when():
    line = step_change(recompile(TUNED, BASE, []), "reduce-overhead")
    assert "10 of 15 rounds, the ones both sides ran: reduce-overhead stopped after 10, and sat out the rest)" in line


def test_rounds_both_sides_ran_add_nothing():
    line = step_change(recompile(BASE[:10], TUNED[:10], [Stop.TIME_BUDGET, Stop.CALL_LIMIT]), "default")
    assert line.endswith("the median of 10 rounds' ratios, both timed interleaved in one process)")


def test_the_stop_reasons_are_saved_and_read_back():
    rec = recompile(BASE, TUNED, [Stop.TIME_BUDGET, Stop.CALL_LIMIT])
    assert autotune_from_dict(rec.to_dict()).step_stopped == [Stop.TIME_BUDGET, Stop.CALL_LIMIT]
    assert "step_stopped" not in recompile(BASE, TUNED, []).to_dict()
