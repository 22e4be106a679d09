"""A stall at the start of the timing must not decide a verdict: a block whose majority
stalled is not steady, a column's budget does not end it after one round, a speedup of too few
samples heads no report, and a side measured on a busy machine is not called slower by a gate.
Hand-built samples; the compare results are synthetic (no compile)."""

from __future__ import annotations

import pytest

from inductor_bench.core.compare import CompareResult, ModeResult, fastest
from inductor_bench.core.diff import diff_results
from inductor_bench.core.steady import steady
from inductor_bench.core.vocab import Outcome
from inductor_bench.render.compare import verdict_line
from inductor_bench.render.doc import new_doc
from inductor_bench.runner.rounds import MIN_ROUNDS, TIME_BUDGET, Plan, fit_rounds, interleave, stop_reasons

# eager's first block of 25 calls on a loaded 2-core machine: 12 calls stalled at ~176 ms
STALLED_BLOCK = [175.0, 176.0, 176.0, 176.1, 175.9, 101.6, 2.2, 2.4, 1.6, 6.0, 2.2, 1.6, 2.4, 2.4, 2.6, 2.6,
                 2.0, 77.2, 176.0, 176.0, 176.0, 176.0, 176.0, 176.0, 180.0]


def test_a_block_whose_median_is_a_stall_keeps_its_fast_calls_only():
    st = steady(STALLED_BLOCK)
    # the faster 13: median 2.4, MAD 0.2 -> margin 3.5 x 0.29652 = 1.03782, over 5% of 2.4
    assert st.limit == pytest.approx(2.4 + 3.5 * 1.4826 * 0.2)
    assert st.pick(STALLED_BLOCK) == [2.2, 2.4, 1.6, 2.2, 1.6, 2.4, 2.4, 2.6, 2.6, 2.0]
    assert st.mean(STALLED_BLOCK) == pytest.approx(2.2)


def test_a_steady_set_and_a_minority_of_stalls_are_judged_as_before():
    quiet = [2.0, 2.1, 1.9, 2.0, 2.2, 2.0, 1.9, 2.1, 2.0, 2.0]
    assert steady(quiet).limit == pytest.approx(2.0 + 3.5 * 1.4826 * 0.05)  # the median and its MAD
    stalls = [2.0] * 15 + [176.0] * 10
    st = steady(stalls)
    assert st.limit == pytest.approx(2.1) and len(st.kept) == 15


class Calls:
    """Side i's n-th call takes ``times_ms[i][n]`` (the last one from then on)."""

    def __init__(self, times_ms: list[list[float]]) -> None:
        self.times_ms, self.made = times_ms, [0] * len(times_ms)

    def call(self, i: int):
        def one() -> float:
            ts = self.times_ms[i]
            t = ts[min(self.made[i], len(ts) - 1)]
            self.made[i] += 1
            return t

        return one


def test_a_stalled_first_block_does_not_end_a_column_after_one_round():
    """Side 0's first block: 13 of 20 calls stalled at 176 ms (its median a stall, 20 x 176 ms
    over its 1 s budget); it still runs MIN_ROUNDS rounds beside side 1."""
    calls = Calls([[176.0] * 13 + [2.0] * 7 + [1.4], [2.0]])
    plan = Plan(budget_s=1.0, max_steps=200, min_steps=10, min_rounds=MIN_ROUNDS)
    blocks = interleave([calls.call(0), calls.call(1)], [20, 20], plan)
    ran = [sum(1 for b in side if b) for side in blocks]
    assert ran == [MIN_ROUNDS, MIN_ROUNDS] == [10, 10]
    assert stop_reasons(blocks, plan) == ["call limit", "call limit"]
    without = Plan(budget_s=1.0, max_steps=200, min_steps=10)  # the rule before: one round
    calls = Calls([[176.0] * 13 + [2.0] * 7 + [1.4], [2.0]])
    before = interleave([calls.call(0), calls.call(1)], [20, 20], without)
    assert sum(1 for b in before[0] if b) == 1 and stop_reasons(before, without)[0] == TIME_BUDGET


def test_blocks_are_cut_so_the_call_limit_allows_min_rounds():
    assert fit_rounds([25, 25, 1], 200) == [20, 20, 1]
    assert fit_rounds([25, 3], 25) == [2, 2]
    assert fit_rounds([25], 5) == [1]


def synthetic_compare(eager: list[list[float]], autotune: list[list[float]], load: float = 0.0) -> CompareResult:
    """A synthetic compare: eager against default, interleaved, ``load`` cores busy."""
    return CompareResult(
        model="mlp", device="cpu", device_name="Test CPU",
        interleaved={"rounds": len(eager), "block_steps": [len(eager[0]), 1],
                     "load": {"others_cores": load, "steal_pct": 0.0, "cores": 2}},
        modes=[ModeResult(mode="eager", compile_s=0.0, paired_ms=eager),
               ModeResult(mode="default", compile_s=1.0, paired_ms=autotune)],
    )


def test_a_column_with_too_few_samples_heads_no_report_and_no_figure_of_too_few_is_quoted():
    r = synthetic_compare([[2.0] * 10] * 3, [[1.0]] * 3)  # 3 rounds: default has 3 samples
    assert fastest(r) is r.modes[0]
    line = verdict_line(r, new_doc("text"))
    # default read faster but is not ranked: eager is the fastest of the ranked columns, not of all
    assert line == ("Fastest ranked steady state: eager 2.000 ms (too few samples to judge it against default); "
                    "default read 1.000 ms on 3 steady samples, too few to rank")
    one = synthetic_compare([[2.0]] * 3, [[1.0]] * 3)  # no column with 5: the fastest, no figure
    assert verdict_line(one, new_doc("text")) == ("Fastest steady state: default 1.000 ms (too few samples "
                                                  "to judge it against eager)")
    slower_on_few = synthetic_compare([[2.0] * 10] * 3, [[3.0]] * 3)  # the column of 3 reads slower
    assert verdict_line(slower_on_few, new_doc("text")) == ("Fastest steady state: eager 2.000 ms (too few "
                                                            "samples to judge it against default)")


def test_a_headline_within_noise_says_its_column_is_the_fastest_ranked_where_an_unranked_one_read_faster():
    # synthetic: eager and default alike over 6 rounds; max-autotune's 3 calls of its own read faster
    r = CompareResult(
        model="mlp", device="cpu", device_name="Test CPU",
        interleaved={"rounds": 6, "block_steps": [10, 10], "load": {"others_cores": 0.0, "steal_pct": 0.0, "cores": 2}},
        modes=[ModeResult(mode="eager", compile_s=0.0, paired_ms=[[2.0] * 10] * 6),
               ModeResult(mode="default", compile_s=1.0, paired_ms=[[2.0] * 10] * 6),
               ModeResult(mode="max-autotune", compile_s=2.0, step_samples_ms=[1.0] * 3)],
    )
    assert verdict_line(r, new_doc("text")) == (
        "No mode is faster than eager beyond noise: fastest ranked steady state eager 2.000 ms (1.00x "
        "[1.00x-1.00x] over default (within noise)); max-autotune read 1.000 ms on 3 steady samples, too few to rank")
    r.modes[2].step_samples_ms = [3.0] * 3  # read slower: eager is the fastest of all, as the line says
    assert verdict_line(r, new_doc("text")).startswith(
        "No mode is faster than eager beyond noise: fastest steady state eager 2.000 ms")


def test_diff_gate_gives_no_verdict_where_the_slower_side_was_timed_on_a_busy_machine():
    """Two synthetic compares of the same code; head's step timing ran beside 0.9 busy cores and
    reads 50% slower: not comparable (exit 5), not a regression."""
    base = synthetic_compare([[2.0, 2.02] * 5] * 12, [[1.0]] * 12)
    head = synthetic_compare([[3.0, 3.03] * 5] * 12, [[1.5]] * 12, load=0.9)
    d = diff_results(base, head)
    assert d.regressions(10.0) == [] and d.status() == Outcome.NOT_COMPARABLE
    eager = d.sections[0]
    assert eager.step.verdict == Outcome.NOT_COMPARABLE
    (u,) = eager.unmeasured
    assert (u.side, u.disturbed) == ("head", True)
    assert u.describe() == ("eager: the step time read slower in head, measured on a busy or slow machine (steps "
                            "timed while other processes kept 0.9 of 2 cores busy): measure again, or time both "
                            "sides in one process (compare)")
    assert d.to_dict()["not_comparable"][0]["disturbed"] is True


def test_a_side_that_reads_faster_though_disturbed_keeps_the_verdict():
    """The busy machine was base's: it can only have made base slower, so head's regression
    stands."""
    base = synthetic_compare([[2.0, 2.02] * 5] * 12, [[1.0]] * 12, load=0.9)
    head = synthetic_compare([[3.0, 3.03] * 5] * 12, [[1.5]] * 12)
    d = diff_results(base, head)
    assert [s.mode for s in d.regressions(10.0)] == ["eager", "default"]
    assert d.status() == Outcome.REGRESSION and not d.unmeasured


@pytest.mark.parametrize("statuses, changed", [
    ((), False),  # eager: no kernels, nothing says the code changed
    (("same code", "calls changed"), False),
    (("same code", "within noise"), True),  # judged on its times: not shown to be one code
    (("same code", "added"), True),
    (("removed",), True),
])
def test_a_slower_disturbed_side_is_not_comparable_only_where_no_kernel_changed(statuses, changed):
    """Synthetic sections: a kernel added, removed or judged on its times is a change of code,
    and then the slower side's verdict stands with its caveat (a real regression measured on a
    busy machine still fails the gate); kernels all of one code leave the disturbance alone to
    explain the step."""
    from inductor_bench.core.diff_records import KernelDiff, SectionDiff
    from inductor_bench.core.disturbed_side import code_changed, slower_where_disturbed
    from inductor_bench.core.stats import compare_samples

    kernels = [KernelDiff(status=s, graph="0-forward", name=f"k{i}", category="cpp_pointwise", aten_ops=[])
               for i, s in enumerate(statuses)]
    step = compare_samples([2.0] * 10, [3.0] * 10)
    section = SectionDiff(mode="eager", step=step, step_source="model", kernels=kernels)
    assert code_changed([section]) is changed
    base = synthetic_compare([[2.0, 2.02] * 5] * 12, [[1.0]] * 12)
    head = synthetic_compare([[3.0, 3.03] * 5] * 12, [[1.5]] * 12, load=0.9)
    judged = slower_where_disturbed(section, base, head, changed)
    assert judged.step.verdict == ("significant" if changed else Outcome.NOT_COMPARABLE)
    assert [u.side for u in judged.unmeasured] == ([] if changed else ["head"])
