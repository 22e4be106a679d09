"""compare's hint where speedups were lost to disturbed rounds while its timing ran more intra-op
threads than the cores other processes left free: one line naming OMP_NUM_THREADS with the thread
count the rule accepts, in text, Markdown, HTML and the JSON, and in the sweep's notes
(hand-built interleaved rounds and loads, synthetic)."""

from __future__ import annotations

import json
from itertools import combinations

from inductor_bench.core.compare import CompareResult, ModeResult
from inductor_bench.core.compare_threads import timing_threads
from inductor_bench.core.free_cores import threads_over_free
from inductor_bench.core.load import Load
from inductor_bench.core.sweep import CellStatus
from inductor_bench.core.sweep_plan import new_sweep
from inductor_bench.core.sweep_table import build_table
from inductor_bench.render.compare import render_compare
from inductor_bench.render.sweep import render_sweep
from inductor_bench.runner.compare import _time_interleaved
from inductor_bench.runner.compare_timer import CompareRun

from .test_sweep_disturbed_rounds import FIXTURE, STALLS, _result, _stalled_rounds

# 2 threads while others kept 1.0 of the 2 cores busy: 1.0 left, the rule accepts 1 thread; eager
# and default are one pair, though the table reads it both ways (default vs eager, eager vs default)
HINT = ("hint: speedups lost to disturbed rounds (n/m, or no interval) in 1 of 1 pair of columns while "
        "the timing ran 2 intra-op threads and other processes kept 1.0 of the 2 cores busy: each parallel region "
        "waits for a thread whose core is taken; try OMP_NUM_THREADS=1 (or torch.set_num_threads(1) "
        "in the model file) to fit the free cores (docs/statistics.md)")


def _timed(disturbed: int, threads: int, others: float, cores: int = 2, limit: float | None = None) -> CompareResult:
    """eager and default in 10 rounds, ``disturbed`` of default's blocks stalled, timed on
    ``threads`` threads while other processes kept ``others`` of ``cores`` busy."""
    r = _result(*_stalled_rounds(disturbed))
    load = Load(others_cores=others, steal_pct=0.0, cores=cores, cpu_limit=limit)
    r.interleaved = {"rounds": 10, "load": load.to_dict(), "threads": {"eager": threads, "default": threads}}
    return r


def test_lost_speedups_on_more_threads_than_the_free_cores_name_the_setting():
    r = _timed(7, threads=2, others=1.0)
    assert HINT in render_compare(r).splitlines()
    assert HINT in render_compare(r, "markdown")
    assert "OMP_NUM_THREADS=1 (or torch.set_num_threads(1) in the model file)" in render_compare(r, "html")
    got = json.loads(r.to_json())["summary"]["threads_over_free_cores"]
    assert got == {"lost": 1, "pairs": 1, "threads": 2, "free_cores": 1.0, "cgroup_limit": False,
                   "suggested_threads": 1, "hint": HINT.removeprefix("hint: ")}


def test_the_threads_to_try_follow_the_measured_free_cores():
    """8 threads while others kept 3.2 of 8 cores: 4.8 left; the rule takes up to 4.8 + 0.5."""
    r = _timed(7, threads=8, others=3.2, cores=8)
    got = json.loads(r.to_json())["summary"]["threads_over_free_cores"]
    assert (got["suggested_threads"], got["free_cores"]) == (5, 4.8)
    assert "try OMP_NUM_THREADS=5 (or torch.set_num_threads(5) in the model file)" in render_compare(r)
    assert threads_over_free(5, [r.interleaved_load()]) is None  # the count given passes the rule
    assert threads_over_free(6, [r.interleaved_load()]) is not None


def test_a_cgroup_limit_below_the_free_cores_sets_the_count():
    r = _timed(7, threads=4, others=0.0, cores=4, limit=1.5)
    text = render_compare(r)
    assert "while the timing ran 4 intra-op threads and a cgroup limits the process to 1.5 cores" in text
    assert "try OMP_NUM_THREADS=2 (or torch.set_num_threads(2)" in text


def test_a_lost_interval_counts_too():
    """2 of 10 rounds disturbed: the speedup stays, its interval goes (few steady rounds)."""
    r = _timed(2, threads=2, others=1.0)
    assert json.loads(r.to_json())["summary"]["speedups"][0]["no_interval"]
    assert HINT in render_compare(r)


def test_no_hint_where_nothing_was_lost_or_the_threads_fit():
    quiet = _timed(0, threads=2, others=1.0)  # no disturbed round: nothing lost
    fitting = _timed(7, threads=1, others=1.0)  # one thread beside the loop: nothing to change
    for r in (quiet, fitting):
        assert "OMP_NUM_THREADS" not in render_compare(r)
        assert json.loads(r.to_json())["summary"]["threads_over_free_cores"] is None


def _three_columns(stalled: dict[str, set[int]]) -> CompareResult:
    """eager, default and max-autotune of the recorded mlp compare in 10 steady rounds, four of
    six calls stalled in the rounds ``stalled`` names for a column, timed on 2 threads while
    others kept 1.0 of 2 cores busy (synthetic)."""
    d = json.loads(FIXTURE.read_text())
    d["modes"] = d["modes"][:3]
    steady = [1.84, 1.85, 1.86, 1.85, 1.84, 1.86]
    for m in d["modes"]:
        m["paired_ms"] = [[1.85, 1.85] + [STALLS[i]] * 4 if i in stalled.get(m["mode"], ()) else steady
                          for i in range(10)]
    r = CompareResult.from_dict(d)
    r.interleaved = {"rounds": 10, "load": Load(others_cores=1.0, steal_pct=0.0, cores=2).to_dict(),
                     "threads": {m.label: 2 for m in r.modes}}
    return r


def test_a_pair_of_columns_counts_once_though_the_table_reads_it_both_ways():
    """eager stalled in round 0, default in round 1: the eager/default pair has 2 of 10 rounds
    disturbed, as many as the interval of 10 rounds leaves out on a side (x_(2)..x_(9)), so its
    speedup has no interval, in the row vs eager and in the row vs default; either pair with
    max-autotune has one, and keeps its interval. One of the three pairs is lost."""
    stalled = {"eager": {0}, "default": {1}}
    columns = ["eager", "default", "max-autotune"]
    pairs = list(combinations(columns, 2))
    lost = [p for p in pairs if len(set().union(*(stalled.get(c, set()) for c in p))) >= 2]
    assert (len(lost), len(pairs)) == (1, 3)
    r = _three_columns(stalled)
    rows = json.loads(r.to_json())["summary"]
    assert sum(1 for s in rows["speedups"] if s.get("no_interval")) == 2  # both ways round
    assert (rows["threads_over_free_cores"]["lost"], rows["threads_over_free_cores"]["pairs"]) == (1, 3)
    line = "in 1 of 3 pairs of columns while the timing ran 2 intra-op threads"
    assert f"hint: speedups lost to disturbed rounds (n/m, or no interval) {line}" in render_compare(r)
    sweep = new_sweep(["/m/a.py"], ["a"], ["default", "max-autotune"], [], device="cpu", shard=None,
                      executor="local", created="")
    for c in sweep.cells:
        c.status, c.run_dir, c.attempts = CellStatus.DONE, c.model, 1
    notes = [n for n in render_sweep(build_table(sweep, {"a": r})).splitlines() if n.startswith("hint: a:")]
    assert len(notes) == 1 and line in notes[0]


def test_the_sweep_notes_carry_a_models_hint():
    sweep = new_sweep(["/m/a.py", "/m/b.py"], ["a", "b"], ["default"], [], device="cpu", shard=None,
                      executor="local", created="")
    for c in sweep.cells:
        c.status, c.run_dir, c.attempts = CellStatus.DONE, c.model, 1
    table = build_table(sweep, {"a": _timed(0, threads=2, others=1.0), "b": _timed(7, threads=2, others=1.0)})
    text = render_sweep(table)
    assert f"hint: b: {HINT.removeprefix('hint: ')}" in text.splitlines()
    assert "hint: a:" not in text
    assert "hint: b: speedups lost to disturbed rounds (n/m, or no interval) in 1 of 1 pair of columns" in \
        render_sweep(table, "html")
    assert f"hint: b: {HINT.removeprefix('hint: ')}" in render_sweep(table, "markdown")
    assert json.loads(render_sweep(table, "json"))["threads_hints"] == {"b": HINT.removeprefix("hint: ")}


class BusyTimer(CompareRun):
    """Answers with the threads and the load its worker read: 2 threads, 1.0 of 2 cores taken."""

    def time_sides(self, sides, device, run_dir, label):
        load = Load(others_cores=1.0, steal_pct=0.0, cores=2).to_dict()
        return {"blocks": [[[1.0] * 5] * 10, [[1.0] * 5] * 10], "stopped": [None, None], "load": load,
                "threads": [2, 1]}


def test_the_timing_workers_threads_are_kept_per_column(tmp_path):
    e, m = (ModeResult(mode=x, run_dir=str(tmp_path)) for x in ("eager", "default"))
    result = CompareResult(model="mlp", device="cpu", step_budget_s=1.0, modes=[e, m])
    _time_interleaved([(e, {}), (m, {})], BusyTimer(repeat=None, step_budget_s=1.0), tmp_path, result)
    assert result.interleaved["threads"] == {"eager": 2, "default": 1}
    assert timing_threads(result) == 2  # the most a column ran: the rule's count


def test_breakdowns_hint_names_the_same_thread_count():
    """A profiled window on 4 threads while others kept 2.0 of 4 cores busy: 2.0 left, the rule
    accepts up to 2.5, so OMP_NUM_THREADS=2; compare's rule on the same load says the same."""
    from inductor_bench.core.ceilings import Ceilings, Roofline
    from inductor_bench.core.step import oversubscribed

    from .test_machine_speed import _result as _breakdown

    r = _breakdown([1.0, 1.0], 0.0)
    r.device = "cpu"
    load = Load(others_cores=2.0, steal_pct=0.0, cores=4)
    r.graphs[0].window_load = [None, load]
    r.roofline = Roofline(measured=Ceilings(device_name="x", gbps=10.0, threads=4))
    assert "with OMP_NUM_THREADS=2 (the free cores' worth) (the workers inherit it)" in oversubscribed(r)
    assert threads_over_free(4, [load]).fitting_threads() == 2
