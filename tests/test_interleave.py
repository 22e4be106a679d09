"""Interleaved step timing (runner/timer.py) and what compare makes of it: the rounds a
worker runs, the paired verdicts of several columns and several model files, and a real
compare of one model file against itself."""

from __future__ import annotations

import importlib.util
import json
import statistics
import subprocess
import sys
import threading
import time

import pytest

from inductor_bench.core import paired_rounds, stats
from inductor_bench.core.compare import CompareResult, ModeResult, judge, outside_load
from inductor_bench.core.compare_summary import few_steady
from inductor_bench.core.devices import backend
from inductor_bench.core.diff import diff_results
from inductor_bench.core.load import Load, worst
from inductor_bench.core.steady import steady_mean
from inductor_bench.core.step import split_step
from inductor_bench.render.compare import model_verdicts, render_compare
from inductor_bench.render.format import speedup_at, speedup_x
from inductor_bench.runner.compare_names import model_names
from inductor_bench.runner.compare_timer import CompareRun
from inductor_bench.runner.rounds import (
    CALL_LIMIT,
    MAX_BLOCK_STEPS,
    TIME_BUDGET,
    Pace,
    block_steps,
    charged_s,
    stop_reasons,
)
from inductor_bench.runner.timer import BLOCK_S, Plan, interleave

from .conftest import FIXTURES, MODELS
from .steady_rule import limit_of_repeats


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, FIXTURES / "models" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


sleepy, sleepy_slow = _load("sleepy"), _load("sleepy_slow")

CLI = [sys.executable, "-c", "from inductor_bench.cli import main; main()"]

# ---- the worker's loop, with stand-in calls ----------------------------------------------------


class Clock:
    """Stand-in sides: each call appends its side to ``log`` and returns a fixed time."""

    def __init__(self, times_ms: list[float]) -> None:
        self.times_ms, self.log = times_ms, []

    def call(self, i: int):
        def one() -> float:
            self.log.append(i)
            return self.times_ms[i]

        return one


def test_block_steps_aim_at_the_block_length():
    assert block_steps(0.004, BLOCK_S) == 13  # ceil(0.05 / 0.004)
    assert block_steps(0.2, BLOCK_S) == 1
    assert block_steps(1e-6, BLOCK_S) == MAX_BLOCK_STEPS
    assert block_steps(0.0, BLOCK_S) == MAX_BLOCK_STEPS


def test_rounds_alternate_the_order_and_stop_at_the_budget():
    clock = Clock([10.0, 20.0])
    plan = Plan(budget_s=0.1, max_steps=1000, min_steps=1)
    blocks = interleave([clock.call(0), clock.call(1)], [2, 1], plan)
    # side 0 runs 2 calls of 10 ms per round and needs 5 rounds for 0.1 s; side 1 one call of
    # 20 ms per round, 5 rounds as well
    assert blocks == [[[10.0, 10.0]] * 5, [[20.0]] * 5]
    assert clock.log[:6] == [0, 0, 1, 1, 0, 0]  # forward, then backward
    assert clock.log.count(0) == 10 and clock.log.count(1) == 5


def test_a_side_that_is_done_sits_out_the_later_rounds():
    clock = Clock([1.0, 50.0])
    blocks = interleave([clock.call(0), clock.call(1)], [1, 1], Plan(budget_s=0.1, max_steps=3, min_steps=1))
    # side 0 reaches max_steps after 3 rounds; side 1 reaches the budget after 2
    assert blocks[0] == [[1.0], [1.0], [1.0]]
    assert blocks[1] == [[50.0], [50.0], []]


class Stalls:
    """Stand-in sides whose calls take their times in turn: side i's n-th call ``times_ms[i][n %
    len]``."""

    def __init__(self, times_ms: list[list[float]]) -> None:
        self.times_ms, self.made = times_ms, [0] * len(times_ms)

    def call(self, i: int):
        def one() -> float:
            t = self.times_ms[i][self.made[i] % len(self.times_ms[i])]
            self.made[i] += 1
            return t

        return one


def test_a_budget_is_charged_the_calls_times_their_median():
    assert charged_s([4.0, 4.0, 150.0, 4.0, 5.0]) == pytest.approx(5 * 4.0 / 1e3)
    assert charged_s([2.0, 6.0]) == pytest.approx(2 * 4.0 / 1e3)
    assert charged_s([]) == 0.0


def test_stalled_calls_do_not_use_up_a_columns_budget():
    """Side 0's every fifth call stalls 150 ms (another process took its core); side 1's never
    does. Both take 4 ms a call otherwise, so both have the same budget of calls: 25 each, five
    rounds of 5. Charged their sum, side 0 would stop after its first block (166 ms)."""
    clock = Stalls([[4.0, 4.0, 150.0, 4.0, 4.0], [4.0]])
    plan = Plan(budget_s=0.1, max_steps=1000, min_steps=1)
    blocks = interleave([clock.call(0), clock.call(1)], [5, 5], plan)
    assert [len(side) for side in blocks] == [5, 5]
    assert blocks[0] == [[4.0, 4.0, 150.0, 4.0, 4.0]] * 5 and blocks[1] == [[4.0] * 5] * 5
    assert stop_reasons(blocks, plan) == [TIME_BUDGET, TIME_BUDGET]


class StalledStart:
    """A stand-in side whose first ``stalled`` calls take ``stall_ms`` and the rest ``ms``."""

    def __init__(self, stalled: int, stall_ms: float, ms: float) -> None:
        self.stalled, self.stall_ms, self.ms, self.made = stalled, stall_ms, ms, 0

    def __call__(self) -> float:
        self.made += 1
        return self.stall_ms if self.made <= self.stalled else self.ms


def test_a_side_sized_on_stalled_calls_gets_full_blocks_once_it_runs_fast():
    """The sizing calls of side 0 both stalled (176 ms against 2 ms), so it starts with 1-call
    blocks; after its first fast call (round 4), its blocks hold ceil(50 ms / 2 ms) = 25 calls, as many
    as side 1's. Without resizing it would end with 10 calls against side 1's 250."""
    side0, side1 = StalledStart(3, 176.0, 2.0), StalledStart(0, 2.0, 2.0)
    sizes = [block_steps(0.176, BLOCK_S), block_steps(0.002, BLOCK_S)]
    assert sizes == [1, 25]
    plan = Plan(budget_s=None, max_steps=1000, min_steps=1)
    paces = [Pace(BLOCK_S, plan.max_steps, 176.0), Pace(BLOCK_S, plan.max_steps, 2.0)]
    blocks = interleave([side0, side1], sizes, plan, max_rounds=10, paces=paces)
    assert [len(b) for b in blocks[0]] == [1, 1, 1, 1] + [25] * 6  # 3 stalled, then 1 fast
    assert [len(b) for b in blocks[1]] == [25] * 10
    assert sizes == [25, 25]


def test_resized_blocks_keep_the_rounds_the_call_limit_asks_for():
    """``fit_rounds`` still cuts a resized block: 100 calls in at least 10 rounds."""
    assert Pace(BLOCK_S, 100, 2.0).block_size() == 10
    assert Pace(BLOCK_S, 1000, 5.0).block_size() == 10  # ceil(50 / 5)


def test_stop_reasons_tell_the_call_limit_from_the_budget():
    clock = Clock([1.0, 50.0])
    plan = Plan(budget_s=0.1, max_steps=3, min_steps=1)
    blocks = interleave([clock.call(0), clock.call(1)], [1, 1], plan)
    assert stop_reasons(blocks, plan) == [CALL_LIMIT, TIME_BUDGET]  # 3 calls of 1 ms; 2 of 50 ms
    assert stop_reasons(interleave([Clock([1.0]).call(0)], [1], plan, max_rounds=2), plan) == [None]


def test_exact_runs_exactly_max_steps_each():
    clock = Clock([1.0, 2.0, 3.0])
    plan = Plan(budget_s=None, max_steps=7, min_steps=1, exact=True)
    blocks = interleave([clock.call(i) for i in range(3)], [3, 3, 3], plan)
    assert [sum(len(b) for b in side) for side in blocks] == [7, 7, 7]
    assert blocks[0] == [[1.0] * 3, [1.0] * 3, [1.0]]


def test_min_steps_outlast_the_budget():
    clock = Clock([100.0])
    blocks = interleave([clock.call(0)], [1], Plan(budget_s=0.01, max_steps=50, min_steps=4))
    assert sum(len(b) for b in blocks[0]) == 4


def test_the_timer_request_carries_the_budget_or_the_exact_count():
    sides = [{"options": {}}, {"options": {}}]
    r = CompareRun(step_budget_s=1.5).timer_request(sides, "cpu")
    assert (r["budget_s"], r["max_steps"], r["exact"], r["device"]) == (1.5, 200, False, "cpu")
    r = CompareRun(repeat=25).timer_request(sides, "cpu")
    assert (r["budget_s"], r["max_steps"], r["exact"], r["min_steps"]) == (None, 25, True, 1)


def test_model_names_are_stems_made_unique():
    assert model_names(["a/mlp.py", "b/mlp.py", "mlp_slow25.py", "mlp.py"]) == ["mlp", "mlp-2", "mlp_slow25", "mlp-3"]
    # a column's directory is named so, and the C++ compile command is split at spaces, quotes, backslashes
    assert model_names(["a/my mlp.py", "my_mlp.py", "it's \\ x.py"]) == ["my_mlp", "my_mlp-2", "it_s_x"]


# ---- verdicts of interleaved columns ---------------------------------------------------------


def rounds(level_ms: float, n: int = 12) -> list[list[float]]:
    """n rounds of 3 calls whose level drifts by up to 60% from round to round."""
    return [[level_ms * (1 + 0.15 * (r % 5)) * j for j in (0.98, 1.0, 1.02)] for r in range(n)]


def two_models() -> CompareResult:
    return CompareResult(
        model="mlp vs mlp-2 vs slow",
        device="cpu",
        device_name="Test CPU",
        models=["mlp", "mlp-2", "slow"],
        interleaved={"rounds": 12, "block_steps": [3, 3, 3], "load": None},
        modes=[
            ModeResult(mode="default", model="mlp", step_samples_ms=[5.0] * 10, paired_ms=rounds(4.0)),
            ModeResult(mode="default", model="mlp-2", step_samples_ms=[3.0] * 10, paired_ms=rounds(4.0)),
            ModeResult(mode="default", model="slow", step_samples_ms=[4.0] * 10, paired_ms=rounds(5.0)),
        ],
    )


def test_paired_columns_are_judged_round_by_round():
    r = two_models()
    base, again, slow = r.modes
    same = judge(r, base, again)
    assert same.paired is not None and same.paired.ratio == pytest.approx(1.0)
    assert same.verdict == stats.WITHIN_NOISE  # the compile workers' 5 vs 3 ms are not used
    worse = judge(r, base, slow)
    assert worse.slower and worse.paired.ratio == pytest.approx(1.25)
    assert base.samples == [x for blk in base.paired_ms for x in blk]
    assert base.step().ms == pytest.approx(steady_mean(base.samples))


def test_model_verdicts_name_each_model_against_the_first():
    assert model_verdicts(two_models()) == [
        "mlp-2 against mlp, default: 1.00x [1.00x-1.00x] (within noise)",
        "slow against mlp, default: 0.80x [0.80x-0.80x] (significant, slower)",
    ]


def test_the_report_labels_columns_by_model_and_explains_the_rounds():
    text = render_compare(two_models())
    assert "mlp:default" in text and "mlp-2:default" in text and "slow:default" in text
    assert "speedup vs mlp" in text and "speedup vs default" not in text
    assert "interleaved in 12 rounds of blocks" in text
    assert text.index("slow against mlp, default: 0.80x") < text.index("inductor-bench compare:")


def test_the_rounds_a_column_sat_out_are_said_with_why_and_left_out_of_its_ratios():
    """A column that stopped first (its call limit, or its time budget) runs no block in the
    later rounds: the report says on how many rounds the speedups stand, which column stopped
    and why, and the ratios use only those rounds."""
    r = two_models()
    assert r.rounds_with_every_column() == 12
    assert "the median of the rounds' ratios" in render_compare(r)
    r.modes[1].paired_ms = rounds(4.0)[:9] + [[], [], []]
    assert r.rounds_with_every_column() == 9
    words = "a speedup is the median of the ratios of the rounds every column ran in (9 of the 12: "
    assert (words + "mlp-2:default stopped after 9, and sat out the rest)") in " ".join(render_compare(r).split())
    r.interleaved["stopped"] = {"mlp:default": TIME_BUDGET, "mlp-2:default": TIME_BUDGET, "slow:default": TIME_BUDGET}
    assert (words + "mlp-2:default stopped after 9, having used up its time budget (--step-budget), and sat out "
            "the rest)") in " ".join(render_compare(r).split())
    r.modes[2].paired_ms = rounds(5.0)[:7] + [[]] * 5
    r.interleaved["stopped"]["slow:default"] = CALL_LIMIT
    assert ("every column ran in (7 of the 12: mlp-2:default stopped after 9, having used up its time budget "
            "(--step-budget); slow:default stopped after 7, having reached its call limit, and sat out the rest)"
            ) in " ".join(render_compare(r).split())
    assert len(paired_rounds.round_ratios(r.modes[0].paired_ms, r.modes[1].paired_ms)) == 9
    assert len(paired_rounds.round_ratios(r.modes[0].paired_ms, r.modes[2].paired_ms)) == 7


def test_columns_without_paired_samples_fall_back_to_their_own():
    r = two_models()
    r.modes[2].paired_ms = []
    ch = judge(r, r.modes[0], r.modes[2])
    assert ch.paired is None and ch.base.ms == pytest.approx(steady_mean(r.modes[0].samples))


def test_compare_results_round_trip_and_diff_by_label():
    r = two_models()
    back = CompareResult.from_dict(json.loads(r.to_json()))
    assert back.to_dict() == r.to_dict() and back.mode("slow:default").paired_ms == rounds(5.0)
    d = diff_results(r, back)
    assert [s.mode for s in d.sections] == ["mlp:default", "mlp-2:default", "slow:default"]


# ---- the real thing ------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def self_compare(tmp_path_factory):
    """`compare models/mlp.py models/mlp.py --modes default --no-eager --train`."""
    tmp = tmp_path_factory.mktemp("self-compare")
    mlp = str(MODELS / "mlp.py")
    cmd = CLI + ["compare", mlp, mlp, "--modes", "default", "--no-eager", "--train", "--device", "cpu",
                 "--warm-cache", "--step-budget", "0.5", "--processes", "1", "--out", str(tmp / "run")]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=900)
    return proc, tmp / "run"


def block_figure(xs: list[float]) -> float:
    """A block's figure by the policy's rule written out in tests/steady_rule.py: from five
    calls, those over the limit of one call repeated left out (the faster half's where most of
    the block stalled, as a loaded machine makes it); the mean of the rest."""
    kept = [x for x in xs if len(xs) < 5 or x <= limit_of_repeats(xs)]
    return sum(kept) / len(kept)


@pytest.mark.slow
@pytest.mark.e2e
def test_one_model_against_itself_is_judged_from_the_saved_rounds(self_compare):
    """The report's line on one model file against itself, its figure, interval and verdict
    recomputed here from the saved rounds. Its verdict is the rule's on those rounds (within
    noise unless the rounds' interval leaves out 1x and their median is past the CPU's floor,
    which a loaded machine can bring about), and its figure is written with more decimals
    beside that floor (0.905x, not 0.91x, under a 10% floor), as every speedup is."""
    proc, run = self_compare
    assert proc.returncode == 0, proc.stderr[-2000:]
    r = CompareResult.from_dict(json.loads((run / "compare.json").read_text()))
    assert r.models == ["mlp", "mlp-2"] and [m.label for m in r.modes] == ["mlp:default", "mlp-2:default"]
    a, b = r.modes
    assert len(a.paired_ms) == len(b.paired_ms) == r.interleaved["rounds"] >= stats.MIN_SAMPLES
    assert sum(len(blk) for blk in a.paired_ms) >= 10 and sum(len(blk) for blk in b.paired_ms) >= 10
    assert all(x > 0 for blk in a.paired_ms + b.paired_ms for x in blk)
    # the verdict, recomputed here from the saved raw rounds
    pairs = [(ha, hb) for ha, hb in zip(a.paired_ms, b.paired_ms, strict=True) if ha and hb]  # a side done early sits out
    ratios = sorted(block_figure(hb) / block_figure(ha) for ha, hb in pairs)
    n = len(ratios)
    k = paired_rounds.median_ci_rank(n, paired_rounds.PAIR_CONFIDENCE)
    lo, mid, hi = ratios[k - 1], statistics.median(ratios), ratios[n - k]
    # the bounds as the report writes any interval: a bound that would round onto 1.00x gets
    # more places (``[1.00003x-1.04x]``), so that an interval excluding 1x never reads as reaching it
    floor = backend(r.device).min_rel_change
    verdict = "within noise"
    if (lo > 1.0 or hi < 1.0) and (mid > 1.0 + floor or mid * (1.0 + floor) < 1.0):
        verdict = "significant, slower" if mid > 1.0 else "significant, faster"
    line = (f"mlp-2 against mlp, default: {speedup_at(1 / mid, floor)} "
            f"{stats.interval_x_text((1 / hi, 1 / lo))} ({verdict})")
    if few := few_steady(r, a, b):  # a bound may be a disturbed round's ratio: no verdict without one
        line = f"not comparable: mlp-2:default: a steady step not measured in mlp and mlp-2 ({few})"
    assert line in proc.stdout.splitlines()
    assert (run / "logs" / "timer.log").exists()
    assert (run / "mlp-default" / "breakdown.json").exists() and (run / "mlp-2-default" / "breakdown.json").exists()


class SleepClock(threading.Thread):
    """This test's own clock on the same sleeps as the sleepy models', in this process, while
    the tool times them: a sleep's wake-up comes late by what the machine's load costs at that
    moment (a 4 ms sleep took a median 12 ms here minutes after the tool had timed 4.8 ms, with
    a busy loop and other users' jobs on both cores), so only a sleep timed alongside is a fair
    yardstick."""

    def __init__(self, seconds: tuple[float, ...]) -> None:
        super().__init__(daemon=True)
        self.seconds, self.stop = seconds, threading.Event()
        self.slept: dict[float, list[float]] = {x: [] for x in seconds}

    def run(self) -> None:
        while not self.stop.is_set():
            for x in self.seconds:
                t0 = time.perf_counter()
                time.sleep(x)
                self.slept[x].append((time.perf_counter() - t0) * 1e3)

    def ms(self, seconds: float) -> float:
        """The sleep's figure by the tool's own policy (core/steady.py), as its steps get."""
        assert len(self.slept[seconds]) >= stats.MIN_SAMPLES, self.slept
        return steady_mean(self.slept[seconds])

    def high_ms(self, seconds: float) -> float:
        """The sleep's upper decile over the phase: what a stretch of it (the turns come after
        the interleaved steps) may see when the load moves meanwhile."""
        assert len(self.slept[seconds]) >= stats.MIN_SAMPLES, self.slept
        return statistics.quantiles(self.slept[seconds], n=10)[-1]


@pytest.fixture(scope="session")
def sleepy_compare(tmp_path_factory):
    """`compare sleepy.py sleepy_slow.py`: steps of 4 ms and 6 ms of sleep; the same sleeps
    timed here while the tool times its columns (its progress line says when)."""
    tmp = tmp_path_factory.mktemp("sleepy")
    models = [str(FIXTURES / "models" / f) for f in ("sleepy.py", "sleepy_slow.py")]
    cmd = CLI + ["compare", *models, "--modes", "default", "--no-eager", "--device", "cpu",
                 "--warm-cache", "--step-budget", "0.5", "--processes", "1", "--out", str(tmp / "run")]
    clock = SleepClock((sleepy.SLEEP_S, sleepy_slow.SLEEP_S))
    with open(tmp / "stdout.txt", "w+") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, text=True)
        err = ""
        for line in proc.stderr:
            err += line
            if line.startswith(TIMING) and not clock.is_alive():
                clock.start()
            elif line.startswith(TIMING) and clock.is_alive():  # the phase's closing line
                clock.stop.set()
        proc.wait(timeout=900)
        clock.stop.set()
        out.seek(0)
        stdout = out.read()
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, err), tmp / "run", clock


TIMING = "timing 2 columns interleaved"
# What a step of a sleepy model may add to its sleep on a machine to itself: guards, the call
# of the disabled function, the graph of one multiplication. Typically 0.2-0.5 ms; a CI run whose
# load read as quiet saw 1.009 ms, so the bound leaves half as much again: a step that leaves out
# its sleep, or times another column's, still fails.
OVERHEAD_MS = 1.5


def overhead_bound_ms(*loads: Load | None) -> float:
    """OVERHEAD_MS as stretched by the load the tool read while it timed (the worst of
    ``loads``): with other processes wanting more cores than there are, each runs at its share
    of them, and the hypervisor's steal takes its part of the rest. With a busy loop and two
    other users' jobs on 2 cores a step added 1.07 ms to its sleep: a fixed bound would judge
    how busy the machine was, not what the tool measured."""
    load = worst(list(loads))
    if load is None or load.cores <= 0:
        return OVERHEAD_MS
    share = max(1.0, (load.others_cores + 1.0) / load.cores)
    return OVERHEAD_MS * share / max(0.05, 1.0 - load.steal_pct / 100.0)


@pytest.mark.slow
@pytest.mark.e2e
def test_interleaved_step_times_agree_with_a_known_sleep(sleepy_compare):
    """The independent measurement: a step that sleeps 4 ms (and 6 ms in the slower file), the
    same sleeps timed here meanwhile. The tool's step never takes less than its sleep (a sleep
    never returns early) and adds at most the call itself (guards, a doubling kernel) to the
    sleep as timed here; the printed speedup is the ratio of the sleeps."""
    proc, run, clock = sleepy_compare
    assert proc.returncode == 0, proc.stderr[-2000:]
    r = CompareResult.from_dict(json.loads((run / "compare.json").read_text()))
    base, slow = r.modes
    bound = overhead_bound_ms(r.interleaved_load())
    slept = {}
    for m, seconds in ((base, sleepy.SLEEP_S), (slow, sleepy_slow.SLEEP_S)):
        slept[m.label] = clock.ms(seconds)
        assert 1e3 * seconds <= m.step().ms <= slept[m.label] + bound, (m.label, m.step().ms, slept, bound)
    ch = judge(r, base, slow)
    # each step is its sleep plus the same late wake-up and call overhead o >= 0: the ratio
    # (6 + o) / (4 + o) is at most the sleeps' own 1.5, and at least that with o at its bound
    s4, s6 = slept[base.label], slept[slow.label]
    low, high = (s6 + bound) / (s4 + bound), sleepy_slow.SLEEP_S / sleepy.SLEEP_S
    assert ch.slower and low - 0.02 <= ch.paired.ratio <= high + 0.02, (ch.paired, s4, s6, bound)
    assert f"sleepy_slow against sleepy, default: {speedup_x(ch)} " in proc.stdout


@pytest.mark.slow
@pytest.mark.e2e
def test_the_time_outside_the_graphs_agrees_with_a_known_sleep(sleepy_compare):
    """The sleep runs outside the compiled graph (``torch.compiler.disable``): the time outside
    the graphs, from the step and the graph timed in turns, holds at least the sleep and at most
    the sleep as this test's own clock timed it meanwhile (its upper decile: the turns are a
    stretch of the phase, after the interleaved steps), plus the call's own overhead. A turns'
    step of 5.95 ms against the phase's 4.11 ms median sleep was seen on a busy machine."""
    proc, run, clock = sleepy_compare
    assert proc.returncode == 0, proc.stderr[-2000:]
    r = CompareResult.from_dict(json.loads((run / "compare.json").read_text()))
    for m, seconds in zip(r.modes, (sleepy.SLEEP_S, sleepy_slow.SLEEP_S), strict=True):
        s = split_step(m.breakdown)
        slept = clock.high_ms(seconds)
        bound = overhead_bound_ms(r.interleaved_load(), m.step_load)
        assert s is not None and s.rounds >= 5, m.label  # timed in turns, not across processes
        assert 1e3 * seconds - 0.05 <= s.outside_ms <= slept + bound, (m.label, s, slept, bound)
        assert 1e3 * seconds <= s.step_ms <= slept + bound, (m.label, s, slept, bound)  # the step it is a share of
        assert m.breakdown.step_turns.graphs == [g.id for g in m.breakdown.graphs]
    # the table's row: the turns' share outside the graphs times the column's own step. The
    # sleep's share of a turns' step is at least the sleep over the longest such step can take
    # (as above), so the row holds at least that share of the column's step, and never more
    # than the step
    row = next(ln for ln in proc.stdout.splitlines() if ln.startswith("outside graphs, ms"))
    words = row.split()[3:]
    cells = [w for w in words if w != "(!)"]  # a cell whose turns met other work is marked (!)
    assert len(cells) == 2, row
    assert [words[i - 1] for i, w in enumerate(words) if w == "(!)"] == [
        f"{m.outside_ms():.3f}" for m in r.modes if outside_load(m) is not None], row
    for m, seconds, cell in zip(r.modes, (sleepy.SLEEP_S, sleepy_slow.SLEEP_S), cells, strict=True):
        step, outside = m.step().ms, m.outside_ms()
        longest = clock.high_ms(seconds) + overhead_bound_ms(r.interleaved_load(), m.step_load)
        assert cell == f"{outside:.3f}", (row, outside)
        assert (1e3 * seconds - 0.05) / longest * step <= outside <= step, (m.label, outside, step, longest)


@pytest.mark.slow
@pytest.mark.e2e
def test_the_sleep_is_the_model_s_python_in_the_profiled_steps(sleepy_compare):
    """The time in no op split by whose Python it is (core/host_python.py): the sleep is the
    model's own function's, ``_sleep`` in sleepy.py (``time.sleep``, a built-in, counts for the
    frame that called it), and holds at least the sleep in each step profiled with Python's
    calls, no more than that step."""
    proc, run, _ = sleepy_compare
    assert proc.returncode == 0, proc.stderr[-2000:]
    r = CompareResult.from_dict(json.loads((run / "compare.json").read_text()))
    for m, seconds in zip(r.modes, (sleepy.SLEEP_S, sleepy_slow.SLEEP_S), strict=True):
        p = m.breakdown.outside
        assert p is not None and (p.error, p.python_error) == ("", ""), m.label
        model = next(x for x in p.python if x.name == "the model and its libraries")
        assert model is p.python[0] and model.top.startswith("sleepy.py(") and model.top.endswith("): _sleep")
        in_python_steps = model.ms * p.python_uncovered_ms / p.uncovered_ms  # the shares' own figure
        assert 1e3 * seconds - 0.05 <= in_python_steps <= p.python_step_ms, (m.label, p)


SETTINGS_MODEL = '''
import torch
import torch._inductor.config

{at_import}


class Seen(torch.nn.Module):
    def forward(self, x):
        with open({log!r}, "a") as f:
            f.write(f"{name} threads={{torch.get_num_threads()}}\\n")
        return x + 1


def make_workload(device, dtype):
    with open({log!r}, "a") as f:
        f.write(f"{name} built: cpp_wrapper={{torch._inductor.config.cpp_wrapper}}\\n")
    {in_factory}
    return Seen(), (torch.ones(4),)
'''


def test_each_side_is_built_and_timed_with_its_own_process_wide_settings(tmp_path):
    """Two eager sides in the timing worker, in this process: the second takes one thread in
    its factory and turns the C++ wrapper on at import. The first is still built with the
    Inductor config the process started with, the second is not built with the first's, and
    every call of each runs with the threads its own factory left."""
    torch = pytest.importorskip("torch")
    import torch._inductor.config as inductor_config

    from inductor_bench.core.workload import WorkloadOptions
    from inductor_bench.runner import timer

    log = tmp_path / "seen.log"
    files = {"b": ("torch._inductor.config.cpp_wrapper = True", "torch.set_num_threads(1)"),
             "a": ("", "pass")}
    sides = []
    for name in ("b", "a"):
        at_import, in_factory = files[name]
        path = tmp_path / f"{name}.py"
        path.write_text(SETTINGS_MODEL.format(at_import=at_import, log=str(log), name=name, in_factory=in_factory))
        sides.append({"options": WorkloadOptions(str(path), device="cpu", mode="eager").to_dict()})
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        out = timer.handle({"sides": sides, "device": "cpu", "budget_s": None, "max_steps": 12,
                            "min_steps": 1, "exact": True})
    finally:
        torch.set_num_threads(threads)
        inductor_config.cpp_wrapper = False
    lines = log.read_text().splitlines()
    assert lines[0] == "b built: cpp_wrapper=True"
    assert "a built: cpp_wrapper=False" in lines  # b's import-time config undone before a is built
    calls = [ln for ln in lines if "threads" in ln]
    assert {ln for ln in calls if ln.startswith("b")} == {"b threads=1"}
    assert {ln for ln in calls if ln.startswith("a")} == {"a threads=2"}
    assert [sum(len(b) for b in side) for side in out["blocks"]] == [12, 12]
