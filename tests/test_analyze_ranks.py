"""`inductor-bench analyze` of several ranks: per rank and step, compute, communication and
their overlap; the straggler of each step. Checked against an independent reading of the raw
JSON (plain json, sort-and-merge unions, the overlap by inclusion-exclusion) on the real NCCL
trace and on tests/fixtures/ranks/ (8 ranks made from it, moved and slowed by known amounts)."""

from __future__ import annotations

import gzip
import json
import pickle
import re
import shutil
from pathlib import Path

import pytest

from inductor_bench.core.analyze_ranks import analyze_ranks
from inductor_bench.core.ranks import intersection_length, merged, rank_of, rank_summary

from .conftest import FIXTURES, HALF_NS
from .test_analyze import merged_length, raw_events, run_cli

NCCL = FIXTURES / "hta" / "nccl_parser_config_nccl_data.json.gz"
RANKS = FIXTURES / "ranks"
RANK_FILES = sorted(RANKS.glob("rank-*.json.gz"))
DEVICE = {"kernel", "gpu_memcpy", "gpu_memset"}
LAUNCH = {"cuda_runtime", "cuda_driver"}
COMM_NAME = re.compile(r"^nccl(Dev)?Kernel_")
# what tests/fixtures/ranks/make_ranks.py did
SLOWDOWN = {0: 1.0, 1: 1.01, 2: 0.99, 3: 1.0, 4: 1.02, 5: 1.0, 6: 1.25, 7: 1.005}
GAP_RANK, GAP_STEP, GAP_US = 3, "ProfilerStep#5", 80_000.0


def independent(path: Path) -> dict[str, dict[str, float]]:
    """step -> wall, busy, compute, comm, overlap (µs) of device 0, from the raw JSON."""
    evs = raw_events(path)
    steps = sorted(
        ((e["name"], e["ts"], e["ts"] + e["dur"]) for e in evs if re.fullmatch(r"ProfilerStep#\d+", e["name"])),
        key=lambda s: s[1],
    )
    issued = {e["args"]["correlation"]: e["ts"] for e in evs if e.get("cat") in LAUNCH and "correlation" in e["args"]}
    out = {}
    for name, start, end in steps:
        mine = []
        for e in evs:
            if e.get("cat") not in DEVICE or str(e["pid"]) != "0":
                continue
            t = issued.get(e.get("args", {}).get("correlation"), e["ts"])
            owner = [s for s in steps if s[1] <= t]
            if owner and owner[-1][0] == name and t <= end:
                mine.append(e)
        stop = max([end, *(e["ts"] + e["dur"] for e in mine)])
        clip = [(e["name"], max(e["ts"], start), min(e["ts"] + e["dur"], stop)) for e in mine]
        comm = [(a, b) for n, a, b in clip if COMM_NAME.match(n)]
        compute = [(a, b) for n, a, b in clip if not COMM_NAME.match(n)]
        busy = merged_length(comm + compute)
        c, k = merged_length(comm), merged_length(compute)
        out[name] = {"wall": stop - start, "busy": busy, "compute": k, "comm": c, "overlap": c + k - busy}
    return out


def test_real_nccl_trace_equals_an_independent_reading():
    r = rank_summary(NCCL, 0)
    expected = independent(NCCL)
    assert [s.step for s in r.steps] == list(expected) == ["ProfilerStep#4", "ProfilerStep#5", "ProfilerStep#6"]
    for s in r.steps:
        e = expected[s.step]
        got = (s.wall_ms, s.busy_ms, s.compute_ms, s.comm_ms, s.overlap_ms)
        assert [g * 1e3 for g in got] == pytest.approx(
            [e["wall"], e["busy"], e["compute"], e["comm"], e["overlap"]], rel=1e-9, abs=1e-6
        ), s.step
        assert e["comm"] > 10_000 and 0 < e["overlap"] < e["comm"]  # NCCL ran, partly hidden
        assert s.compute_ms + s.exposed_comm_ms + s.idle_ms == pytest.approx(s.wall_ms, rel=1e-12)
        assert s.categories["communication"] * 1e3 >= e["comm"] - 0.01  # durations >= union (ts ~4e12 µs)
    assert rank_of(NCCL) == 0  # from its distributedInfo


def straggler_expected(per_rank: dict[int, dict[str, dict[str, float]]], step: str) -> dict:
    rows = sorted(((v[step]["wall"], r) for r, v in per_rank.items()))
    (slow_wall, slow), (_, mid) = rows[-1], rows[(len(rows) - 1) // 2]

    def parts(r):
        s = per_rank[r][step]
        return s["compute"], s["comm"] - s["overlap"], s["wall"] - s["busy"]

    deltas = [a - b for a, b in zip(parts(slow), parts(mid), strict=True)]
    return {
        "rank": slow,
        "median_rank": mid,
        "excess_ms": (slow_wall - per_rank[mid][step]["wall"]) / 1e3,
        "compute_ms": deltas[0] / 1e3,
        "exposed_comm_ms": deltas[1] / 1e3,
        "idle_ms": deltas[2] / 1e3,
    }


@pytest.fixture(scope="module")
def eight_ranks_json(tmp_path_factory):
    """The CLI's JSON for the 8-rank directory (ranks read in worker processes)."""
    out = tmp_path_factory.mktemp("ranks") / "ranks.json"
    code = 0
    from inductor_bench.cli import main

    try:
        main(["analyze", str(RANKS), "--json", str(out), "--format", "markdown"])
    except SystemExit as e:
        code = e.code or 0
    assert code == 0
    return json.loads(out.read_text())


def test_eight_ranks_straggler_and_overlap(eight_ranks_json):
    per_rank = {r: independent(f) for r, f in enumerate(RANK_FILES)}
    got = eight_ranks_json
    assert [r["rank"] for r in got["ranks"]] == list(range(8))
    for rank in got["ranks"]:
        for s in rank["steps"]:
            e = per_rank[rank["rank"]][s["step"]]
            assert [s[k] * 1e3 for k in ("wall_ms", "busy_ms", "compute_ms", "comm_ms", "overlap_ms")] == pytest.approx(
                [e["wall"], e["busy"], e["compute"], e["comm"], e["overlap"]], abs=5e-4  # µs; the JSON: to the ns
            )
    stragglers = {g["step"]: g for g in got["stragglers"]}
    assert list(stragglers) == ["ProfilerStep#4", "ProfilerStep#5"]
    for step, g in stragglers.items():
        expected = straggler_expected(per_rank, step)
        assert {k: g[k] for k in expected} == pytest.approx(expected, abs=HALF_NS), step  # the JSON: to the ns
        assert g["compute_ms"] + g["exposed_comm_ms"] + g["idle_ms"] == pytest.approx(g["excess_ms"], abs=2e-6)


def test_eight_ranks_match_how_they_were_made(eight_ranks_json):
    """Known by construction: rank 6 runs 1.25x slower (the straggler of step 4, by 25% of the
    median rank's 1.0x step), rank 3 idles 80 ms more in step 5 (its straggler, all idle)."""
    walls = {(r["rank"], s["step"]): s for r in eight_ranks_json["ranks"] for s in r["steps"]}
    g4, g5 = eight_ranks_json["stragglers"]
    base4 = walls[0, "ProfilerStep#4"]
    assert (g4["rank"], g4["median_rank"]) == (6, 5)  # walls sorted: 0.99, 1.0 x3 (ranks 0, 3, 5) ...
    assert g4["excess_ms"] == pytest.approx(0.25 * base4["wall_ms"], rel=1e-6)
    for k in ("compute_ms", "idle_ms"):  # within the files' 0.01 µs rounding of ts and dur
        assert g4[k] == pytest.approx(0.25 * base4[k], abs=2e-3)
    assert g5["rank"] == GAP_RANK and g5["median_rank"] == 7
    base5 = walls[0, GAP_STEP]
    assert walls[3, GAP_STEP]["wall_ms"] - base5["wall_ms"] == pytest.approx(GAP_US / 1e3, abs=1e-4)
    assert walls[3, GAP_STEP]["idle_ms"] - base5["idle_ms"] == pytest.approx(GAP_US / 1e3, abs=1e-4)
    for r, f in SLOWDOWN.items():  # overlap / comm does not change with the slowdown
        s = walls[r, "ProfilerStep#4"]
        assert s["overlap_ms"] / s["comm_ms"] == pytest.approx(base4["overlap_ms"] / base4["comm_ms"], rel=1e-4)
        assert s["busy_ms"] == pytest.approx(f * base4["busy_ms"], abs=2e-3)


def test_text_report_names_the_straggler(capsys):
    code, out, err = run_cli(capsys, *map(str, RANK_FILES[:4]), "--format", "text")
    assert code == 0, err
    assert out.startswith("inductor-bench analyze: 4 ranks")
    line = next(ln for ln in out.splitlines() if ln.startswith("ProfilerStep#5") and "rank 3" in ln)
    assert "+80.000" in line  # excess, all of it idle
    assert "Steps per rank" in out and "communication (collectives)" in out


def test_in_process_and_in_workers_agree():
    one = analyze_ranks(RANK_FILES[:3], workers=1)
    two = analyze_ranks(RANK_FILES[:3], workers=2)
    assert one == two and [r.rank for r in one.ranks] == [0, 1, 2]


def test_intervals():
    xs = merged([(0, 10), (5, 12), (20, 30), (30, 31), (40, 40)])
    assert xs == [(0, 12), (20, 31)]
    assert intersection_length(xs, merged([(11, 21), (25, 26), (100, 200)])) == 1 + 1 + 1


def test_rank_from_the_file_name_else_the_order(tmp_path):
    evs = {"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": 1, "pid": 0, "tid": 7}]}
    for name in ("trainer_rank-5.json", "b.json", "a.json"):
        (tmp_path / name).write_text(json.dumps(evs))
    assert rank_of(tmp_path / "trainer_rank-5.json") == 5 and rank_of(tmp_path / "a.json") is None
    r = analyze_ranks([tmp_path / "b.json", tmp_path / "a.json"], workers=1)
    assert [(x.rank, Path(x.trace).name) for x in r.ranks] == [(0, "b.json"), (1, "a.json")]


def _one_line_exit_2(capsys, *argv: str, words: str) -> None:
    code, out, err = run_cli(capsys, *argv)
    lines = err.strip().splitlines()
    assert (code, out) == (2, "") and "Traceback" not in err
    assert len(lines) == 1 and lines[0].startswith("inductor-bench: error: ") and words in lines[0]


def test_bad_rank_sets(capsys, tmp_path):
    _one_line_exit_2(capsys, str(tmp_path), words="no trace files")
    _one_line_exit_2(capsys, str(RANK_FILES[0]), str(RANK_FILES[0]), words="given twice")
    shutil.copy(RANK_FILES[0], tmp_path / "again-rank0.json.gz")
    _one_line_exit_2(capsys, str(RANK_FILES[0]), str(tmp_path / "again-rank0.json.gz"), words="the same trace as")
    (tmp_path / "again-rank0.json.gz").unlink()
    shutil.copy(RANK_FILES[1], tmp_path / "rank-1.json.gz")
    (tmp_path / "rank-2.json.gz").write_bytes(gzip.compress(b'{"traceEvents": [{"ph": "X", "ts": '))
    code, out, err = run_cli(capsys, str(tmp_path))  # a trace cut short is left out, the others read
    assert code == 0 and "rank-2.json.gz: left out, cut short" in out and "rank-2.json.gz: left out" in err
    (tmp_path / "rank-1.json.gz").unlink()
    _one_line_exit_2(capsys, str(tmp_path), words="rank-2.json.gz")


def test_a_rank_comes_back_small():
    """What a worker sends back is the per-step figures, not the trace: a few KB for a rank of
    ~2,700 device events (memory in the parent does not grow with the events)."""
    events = len([e for e in raw_events(NCCL) if e.get("cat") in DEVICE])
    result = rank_summary(NCCL, 0)
    assert events > 2500 and len(pickle.dumps(result)) < 5_000


def test_parallel_ranks_are_read_in_the_workers_alone(monkeypatch):
    """With workers, the parent reads no trace at all: reading one there fails, and four ranks
    still come back, equal to reading them in this process."""
    import inductor_bench.core.ranks as ranks_module

    expected = analyze_ranks(RANK_FILES[:4], workers=1)

    def no_reading_here(path):
        raise AssertionError(f"the parent read {path}")

    monkeypatch.setattr(ranks_module, "load_columns", no_reading_here)
    assert analyze_ranks(RANK_FILES[:4], workers=2) == expected


def test_ranks_in_one_process_hold_one_rank_at_a_time(monkeypatch):
    """Without workers, ranks are read one after another and each rank's columns are gone
    before the next rank is read: at most one rank's events are held at a time."""
    import weakref

    import inductor_bench.core.ranks as ranks_module

    real = ranks_module.load_columns
    read: list[weakref.ref] = []

    def reading(path):
        assert all(r() is None for r in read), "an earlier rank's columns are still held"
        cols = real(path)
        read.append(weakref.ref(cols))
        return cols

    monkeypatch.setattr(ranks_module, "load_columns", reading)
    result = analyze_ranks(RANK_FILES[:4], workers=1)
    assert len(read) == 4 and [r.rank for r in result.ranks] == [0, 1, 2, 3]


CPU_GLOO = sorted((RANKS / "cpu_gloo").glob("rank-*.json.gz"))


@pytest.mark.parametrize("path", CPU_GLOO, ids=[p.name for p in CPU_GLOO])
def test_a_cpu_only_rank_counts_its_collectives_where_they_ran_as_communication(path):
    """A gloo DDP step on the CPU: the main thread's c10d::allreduce_ (an op inside autograd's
    node) only hands the all-reduce to gloo's worker thread, whose gloo:all_reduce range lasts
    until it is done. The rank's comm is the union of both, its busy the union of comm and the
    main thread's ops (read independently from the raw JSON: the main thread's cpu_op events
    that start in each step, its c10d::allreduce_ ones, and every thread's gloo:* ranges)."""
    evs = raw_events(path)
    steps = [e for e in evs if re.fullmatch(r"ProfilerStep#\d+", e["name"])]
    main = steps[0]["tid"]
    result = rank_summary(path, 0)
    assert [s.step for s in result.steps] == [s["name"] for s in sorted(steps, key=lambda e: e["ts"])]
    for s in result.steps:
        marker = next(e for e in steps if e["name"] == s.step)
        lo, hi = marker["ts"], marker["ts"] + s.wall_ms * 1e3

        def clip(es, lo=lo, hi=hi):
            return [(max(e["ts"], lo), min(e["ts"] + e["dur"], hi)) for e in es]

        ops = [e for e in evs if e.get("cat") == "cpu_op" and e["tid"] == main and lo <= e["ts"] < hi]
        enqueue = [e for e in ops if e["name"] == "c10d::allreduce_"]
        ran = [e for e in evs if e["name"].startswith("gloo:") and e["ts"] < hi and e["ts"] + e["dur"] > lo]
        assert enqueue and ran and all(e["tid"] != main for e in ran)
        assert s.comm_ms == pytest.approx(merged_length(clip(enqueue + ran)) / 1e3, abs=1e-6)
        assert s.busy_ms == pytest.approx(merged_length(clip(ops + ran)) / 1e3, abs=1e-6)
        assert s.comm_ms > 2 * merged_length(clip(enqueue)) / 1e3  # the enqueue alone is a fraction
        assert s.compute_ms + s.exposed_comm_ms + s.idle_ms == pytest.approx(s.wall_ms, abs=1e-6)
        # the thread's own categories: its c10d op's time is its communication
        assert s.categories["communication"] == pytest.approx(merged_length(clip(enqueue)) / 1e3, abs=1e-6)


def _distributed(path: Path, rank: int, world: int) -> Path:
    """Synthetic: one step with one kernel, a header that names the rank and the world size."""
    evs = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100, "pid": 1, "tid": 1},
           {"ph": "X", "cat": "kernel", "name": "k", "ts": 10, "dur": 50 + rank, "pid": 0, "tid": 7}]
    path.write_text(json.dumps({"distributedInfo": {"backend": "nccl", "rank": rank, "world_size": world},
                                "traceEvents": evs}))
    return path


def test_world_sizes_tell_ranks_of_other_runs_and_ranks_left_out(capsys, tmp_path):
    a, b = _distributed(tmp_path / "a.json", 1, 2), _distributed(tmp_path / "b.json", 3, 8)
    code, out, _ = run_cli(capsys, str(a), str(b))
    assert code == 0
    assert ("WARNING: the traces name different world sizes (rank 1: 2, rank 3: 8): they come from "
            "different runs") in out
    b = _distributed(tmp_path / "b.json", 3, 2)
    code, out, _ = run_cli(capsys, str(a), str(b))
    assert code == 0 and "world size" not in out
    a, b = _distributed(tmp_path / "a.json", 1, 8), _distributed(tmp_path / "b.json", 3, 8)
    code, out, _ = run_cli(capsys, str(a), str(b))
    assert "2 of the run's 8 ranks (its world size)" in out and "WARNING" not in out


def _ranked(path: Path, rank: int, kernels: list[tuple[int, int, int]]) -> Path:
    """Synthetic rank: steps 0..100 and 100..200 (µs), kernels (launched at, start, duration)."""
    evs = [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{k}", "ts": a, "dur": 100, "pid": 1,
            "tid": 1} for k, a in ((1, 0), (2, 100))]
    for c, (issue, start, dur) in enumerate(kernels):
        evs += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": issue, "dur": 2, "pid": 1,
                 "tid": 1, "args": {"correlation": c}},
                {"ph": "X", "cat": "kernel", "name": f"k{c}", "ts": start, "dur": dur, "pid": 0, "tid": 7,
                 "args": {"correlation": c}}]
    path.write_text(json.dumps({"distributedInfo": {"rank": rank, "world_size": 2}, "traceEvents": evs}))
    return path


def test_a_pipelined_ranks_other_steps_work_is_not_idle(tmp_path):
    """Rank 1 is pipelined: step 1's kernel runs 20..150, past its step; step 2's kernel,
    launched at 110, waits for it and runs 150..180. Its step 2 (100..200): busy 30, other
    steps' work 50 (100..150), idle 20. Rank 0 runs each step's kernel in its step: step 2 busy
    30 (120..150), idle 70. Rank 1 is step 2's straggler by nothing (walls equal, the later
    rank) and its split is busy 0, other +50, idle -50."""
    r0 = _ranked(tmp_path / "r0.json", 0, [(10, 20, 30), (110, 120, 30)])
    r1 = _ranked(tmp_path / "r1.json", 1, [(10, 20, 130), (110, 150, 30)])
    result = analyze_ranks([r0, r1], workers=1)
    one = result.ranks[1].step("ProfilerStep#2")
    assert (one.wall_ms, one.busy_ms, one.other_work_ms, one.idle_ms) == pytest.approx((0.1, 0.03, 0.05, 0.02))
    zero = result.ranks[0].step("ProfilerStep#2")
    assert (zero.busy_ms, zero.other_work_ms, zero.idle_ms) == pytest.approx((0.03, 0.0, 0.07))
    for rank in result.ranks:
        for s in rank.steps:
            assert s.compute_ms + s.exposed_comm_ms + s.other_work_ms + s.idle_ms == pytest.approx(s.wall_ms)
    g = next(g for g in result.stragglers if g.step == "ProfilerStep#2")
    assert (g.rank, g.median_rank) == (1, 0)
    assert (g.compute_ms, g.other_work_ms, g.idle_ms) == pytest.approx((0.0, 0.05, -0.05))


def test_a_rank_s_step_that_holds_nothing_is_left_out_of_its_typical_step():
    """Synthetic: five steps of 2.0 ms of GEMM each and a last one the profiler stopped in as it
    opened (0.01 ms, no event). Its typical step is the mean over the five, 2.0 ms of GEMM, not
    10 / 6; a rank whose every step is empty keeps them all."""
    from inductor_bench.core.ranks import RankResult, RankStep
    from inductor_bench.render.ranks_typical import typical_categories

    full = [RankStep(f"ProfilerStep#{k}", 2.5, 2.0, 0.5, 2.0, 0.0, 0.0, {"extern_gemm": 2.0}) for k in range(5)]
    empty = RankStep("ProfilerStep#5", 0.01, 0.0, 0.01, 0.0, 0.0, 0.0)
    rank = RankResult(0, "rank-0.json", "GPU 0", [*full, empty])
    assert rank.steady_indices() == [0, 1, 2, 3, 4]
    assert typical_categories(rank) == {"extern_gemm": 2.0}
    assert RankResult(1, "rank-1.json", "GPU 0", [empty, empty]).steady_indices() == [0, 1]


def test_a_rank_s_unfinished_events_are_counted_in_its_line(capsys, tmp_path):
    """Synthetic: rank 1's trace holds a second step marker still open when its profiler
    stopped (a duration of -1): left out, and said on that rank's line alone."""
    a, b = _distributed(tmp_path / "a.json", 0, 2), _distributed(tmp_path / "b.json", 1, 2)
    trace = json.loads(b.read_text())
    trace["traceEvents"].append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "ts": 100,
                                 "dur": -1, "pid": 1, "tid": 1})
    b.write_text(json.dumps(trace))
    code, out, _ = run_cli(capsys, str(a), str(b))
    lines = {ln.split(":")[0].strip("- *"): ln for ln in out.splitlines() if ln.lstrip("- *").startswith("rank ")}
    assert code == 0 and "1 step; 1 event(s) with a negative duration left out (unfinished when the profiler " \
        "stopped)" in lines["rank 1"]
    assert "negative duration" not in lines["rank 0"]


def test_a_rank_s_events_left_out_are_named_in_its_json_as_in_one_trace_s(capsys, tmp_path):
    """Synthetic: rank 1's second step marker is unfinished (dur -1), rank 0 holds a kernel
    whose times were lost (ts 0, dur 0). Each rank's JSON names them as one trace's JSON does
    (name: count), and the lost kernel is said on rank 0's line."""
    a, b = _distributed(tmp_path / "a.json", 0, 2), _distributed(tmp_path / "b.json", 1, 2)
    for path, ev in ((b, {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "ts": 100, "dur": -1,
                          "pid": 1, "tid": 1}),
                     (a, {"ph": "X", "cat": "kernel", "name": "lost", "ts": 0, "dur": 0, "pid": 0, "tid": 7})):
        trace = json.loads(path.read_text())
        trace["traceEvents"].append(ev)
        path.write_text(json.dumps(trace))
    code, out, _ = run_cli(capsys, str(a), str(b), "--format", "json")
    ranks = {r["rank"]: r for r in json.loads(out)["ranks"]}
    assert code == 0
    assert (ranks[0]["unfinished"], ranks[0]["untimed"], ranks[0]["restarted_ranges"]) == ({}, {"lost": 1}, [])
    assert (ranks[1]["unfinished"], ranks[1]["untimed"]) == ({"ProfilerStep#2": 1}, {})
    assert ranks[0]["steps"][0]["busy_ms"] == 0.05  # the lost kernel is not counted: k's 50 µs
    code, out, _ = run_cli(capsys, str(a), str(b))
    line = next(ln for ln in out.splitlines() if ln.lstrip("- *").startswith("rank 0"))
    assert "1 device event(s) and launch(es) at ts 0 with dur 0 left out (their times lost)" in line


def test_traces_of_different_runs_are_said_to_be_no_ranks_of_one(capsys, tmp_path):
    """Synthetic: two traces that name no rank, one step each, the second 12 s after the first
    (two runs of one loop, given as if ranks): a warning says their steps overlap in no rank's
    time; in the JSON too (``apart``). The same traces with overlapping steps say nothing; the
    same timestamps under time bases 12 s apart (baseTimeNanoseconds) are apart again."""
    def trace(path: Path, ts: int, base_ns: int | None = None) -> Path:
        pid = len(path.stem)  # a process each: one process's traces are its profiler cycles
        evs = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "ts": ts, "dur": 100, "pid": pid,
                "tid": 1},
               {"ph": "X", "cat": "kernel", "name": "k", "ts": ts + 10, "dur": 50, "pid": 0, "tid": 7}]
        head = {"baseTimeNanoseconds": base_ns} if base_ns is not None else {}
        path.write_text(json.dumps(head | {"traceEvents": evs}))
        return path

    a, b = trace(tmp_path / "a.json", 1_000), trace(tmp_path / "bb.json", 12_001_000)
    code, out, _ = run_cli(capsys, str(a), str(b))
    assert code == 0
    assert ("WARNING: the steps of ranks 0, 1 overlap no other rank's in time (the traces span 12.0 s): "
            "traces of different runs, or of one process at different times, not the ranks of one run; "
            "their steps are compared below as if they were one run's\n") in out
    code, out, _ = run_cli(capsys, str(a), str(b), "--format", "json")
    assert json.loads(out)["apart"].startswith("the steps of ranks 0, 1 overlap no other rank's in time")
    b = trace(tmp_path / "bb.json", 1_050)
    code, out, _ = run_cli(capsys, str(a), str(b))
    assert code == 0 and "2 ranks" in out and "overlap no other" not in out
    a, b = trace(tmp_path / "a.json", 1_000, 0), trace(tmp_path / "bb.json", 1_000, 12_000_000_000)
    code, out, _ = run_cli(capsys, str(a), str(b))
    assert "(the traces span 12.0 s)" in out


def test_ranks_that_tie_name_no_straggler(capsys, tmp_path):
    """Synthetic: two ranks whose one step takes 100 µs each (the step marker outlasts their
    kernels): no rank straggles, the table says so and the chart marks none."""
    from inductor_bench.render.ranks import render_ranks

    a, b = _distributed(tmp_path / "a.json", 0, 2), _distributed(tmp_path / "b.json", 1, 2)
    r = analyze_ranks([a, b], workers=1)
    (g,) = r.stragglers
    assert g.excess_ms == 0 and g.tied
    text = render_ranks(r)
    row = next(ln for ln in text.splitlines() if ln.startswith("ProfilerStep#1"))
    assert "none (tied)" in row and "rank 1" not in row.split("none (tied)")[0]
    assert "straggler" not in render_ranks(r, "html").split("Steps per rank")[1].split("</svg>")[0]


def test_a_trace_that_names_no_rank_beside_ranked_ones_is_said_to_renumber_them(capsys, tmp_path):
    """rank-3 and rank-5 name their ranks in their headers; the Triton example names none: every
    trace is then numbered in the order given, and the report and its JSON say whose ranks
    were set aside. The ranked traces alone keep their own ranks and no warning."""
    unnamed = FIXTURES / "hta" / "triton_example_triton_example.json.gz"
    given = [RANKS / "rank-3.json.gz", RANKS / "rank-5.json.gz", unnamed]
    assert [rank_of(p) for p in given] == [3, 5, None]
    code, out, _ = run_cli(capsys, *map(str, given), "--format", "json")
    doc = json.loads(out)
    assert code == 0 and [r["rank"] for r in doc["ranks"]] == [0, 1, 2]
    assert doc["renumbered"].startswith("triton_example_triton_example.json.gz names no rank, so every "
                                        "trace is numbered in the order given, the ranks the others name "
                                        "set aside (rank-3.json.gz: 3, rank-5.json.gz: 5)")
    code, out, _ = run_cli(capsys, *map(str, given))
    assert f"WARNING: {doc['renumbered']}" in out.splitlines()
    code, out, _ = run_cli(capsys, *map(str, given[:2]), "--format", "json")
    doc = json.loads(out)
    assert [r["rank"] for r in doc["ranks"]] == [3, 5] and doc["renumbered"] == ""


def test_a_rank_s_line_names_its_thread_or_device_and_counts_its_steps(capsys):
    """The gloo ranks are CPU-only: each line names the busiest thread (the one that holds the
    ProfilerStep# markers in the raw JSON) as a CPU thread, not as a device; the Triton example
    holds one step, which its line counts as '1 step'. A CPU-only trace's steps and category
    tables are of that thread."""
    threads = [next(e["tid"] for e in raw_events(p) if re.fullmatch(r"ProfilerStep#\d+", e["name"]))
               for p in CPU_GLOO]
    steps = [len({e["name"] for e in raw_events(p) if re.fullmatch(r"ProfilerStep#\d+", e["name"])})
             for p in CPU_GLOO]
    code, out, _ = run_cli(capsys, *map(str, CPU_GLOO))
    assert code == 0
    for r, (path, tid, n) in enumerate(zip(CPU_GLOO, threads, steps, strict=True)):
        assert f"rank {r}: {path} (CPU thread {tid}, {n} steps)" in out.splitlines()
    one = FIXTURES / "hta" / "triton_example_triton_example.json.gz"
    code, out, _ = run_cli(capsys, str(RANKS / "rank-3.json.gz"), str(one))
    assert code == 0 and f"rank 1: {one} (device 0, 1 step)" in out.splitlines()
    code, out, _ = run_cli(capsys, str(CPU_GLOO[0]))
    assert code == 0 and f"Time by category, CPU thread {threads[0]} (steady mean step)" in out.splitlines()
    lines = out.splitlines()
    at = lines.index("Steps (per CPU thread)")
    assert lines[at + 3].split()[:2] == ["step", "thread"]


def test_a_directory_whose_subdirectories_hold_the_ranks_names_them(capsys, tmp_path):
    """Ranks written one directory each (jobs/rank0/, jobs/rank1/): the directory given holds
    no trace itself, and its one line names the subdirectories that do; given those, the two
    ranks read as the fixture's rank 0 and rank 3 do."""
    for r in (0, 3):
        (tmp_path / "jobs" / f"r{r}").mkdir(parents=True)
        shutil.copy(RANKS / f"rank-{r}.json.gz", tmp_path / "jobs" / f"r{r}" / f"rank-{r}.json.gz")
    (tmp_path / "jobs" / "empty").mkdir()
    jobs = tmp_path / "jobs"
    _one_line_exit_2(capsys, str(jobs), words=(
        f"{jobs}: no trace files (*.json, *.json.gz) in this directory; its subdirectories {jobs / 'r0'}, "
        f"{jobs / 'r3'} hold some: give them (a directory is read alone, not the directories in it)"))
    shutil.rmtree(jobs / "r3")
    _one_line_exit_2(capsys, str(jobs), words=f"; its subdirectory {jobs / 'r0'} holds some: give it")
    code, out, _ = run_cli(capsys, str(jobs / "r0"), str(RANKS / "rank-3.json.gz"), "--format", "json")
    assert code == 0 and [r["rank"] for r in json.loads(out)["ranks"]] == [0, 3]


def _range_means(path: Path) -> dict[str, float]:
    """record_function range -> its mean wall (ms) over the trace's steps, from the raw JSON: each
    of cpu_gloo's ranges is called once a step, and every step is steady."""
    calls: dict[str, list[float]] = {}
    for e in raw_events(path):
        if e.get("cat") == "user_annotation" and not e["name"].startswith("ProfilerStep#"):
            calls.setdefault(e["name"], []).append(e["dur"] / 1000)
    return {name: sum(d) / len(d) for name, d in calls.items()}


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_top_limits_the_named_ranges_per_rank(capsys, fmt):
    """--top N keeps the N ranges any rank spends longest in, and the heading counts the rest."""
    ranks = [_range_means(p) for p in sorted((RANKS / "cpu_gloo").glob("rank-*.json.gz"))]
    names = sorted({n for r in ranks for n in r}, key=lambda n: -max(r.get(n, 0.0) for r in ranks))
    assert len(names) == 4
    code, out, err = run_cli(capsys, str(RANKS / "cpu_gloo"), "--top", "2", "--format", fmt)
    assert code == 0, err
    assert "Named ranges per rank: record_function (top 2 of 4, steady mean step, wall ms)" in out
    section = out.split("Named ranges per rank")[1]
    assert all(n in section for n in names[:2])
    assert not any(n in section for n in names[2:])
    slowest = max(ranks[0]["gloo:all_reduce"], ranks[1]["gloo:all_reduce"])
    assert f"rank 0: {slowest:.3f}" in section


def test_top_limits_the_named_ranges_of_every_rank_cycle(capsys):
    code, out, err = run_cli(capsys, str(RANKS / "cpu_gloo_cycles"), "--top", "1")
    assert code == 0, err
    headings = [line for line in out.splitlines() if line.startswith("Named ranges per rank")]
    assert len(headings) == 2 and all("(top 1 of " in h for h in headings)
    assert [len(s.split("\n\n")[1].splitlines()) for s in out.split("Named ranges per rank")[1:]] == [3, 3]


def test_cpu_ranks_categories_say_their_communication_is_the_ops_alone(capsys):
    """On CPU-only ranks a category is the busiest thread's top-level ops' time: communication is
    the c10d::allreduce_ op alone (from the raw JSON, its mean over the steps), not the gloo
    ranges the steps table's comm also counts; the note says so, not 'kernel durations'."""
    code, out, err = run_cli(capsys, str(RANKS / "cpu_gloo"))
    assert code == 0, err
    section = out[out.index("Time by category per rank"):out.index("Named ranges per rank")]
    for path in sorted((RANKS / "cpu_gloo").glob("rank-*.json.gz")):
        evs = raw_events(path)
        steps = [e for e in evs if re.fullmatch(r"ProfilerStep#\d+", e["name"])]
        main = steps[0]["tid"]
        ops = [e["dur"] for e in evs if e.get("cat") == "cpu_op" and e["tid"] == main
               and e["name"] == "c10d::allreduce_" and any(s["ts"] <= e["ts"] < s["ts"] + s["dur"] for s in steps)]
        rank = int(path.name.split("-")[1].split(".")[0])
        row = next(line.split() for line in section.splitlines() if line.startswith(f"{rank} "))
        assert float(row[3]) == pytest.approx(sum(ops) / len(steps) / 1e3, abs=6e-4)
    assert "Its communication is its collectives' own ops (c10d::allreduce_)" in section
    assert "kernel durations" not in section
    code, out, err = run_cli(capsys, str(RANKS))
    assert "Summed kernel durations (concurrent streams can exceed busy)." in out


def test_top_help_names_the_tables_it_limits(capsys):
    code, out, _ = run_cli(capsys, "--help")
    assert code == 0
    text = " ".join(out.split())
    assert "Rows shown per ranked table: the top kernels (a CPU-only trace's ops), the named ranges" in text
    assert "Kernels shown per table" not in text


def test_a_step_some_ranks_lack_says_whose_straggler_it_is(tmp_path, capsys):
    """Ranks 0-2 of the set, rank 2's ProfilerStep#5 marker taken out: step 5's straggler is of
    ranks 0 and 1 (rank 1, 1.01x, against rank 0, the lower middle of two), and the note says so."""
    for r in range(3):
        trace = json.loads(gzip.decompress(RANK_FILES[r].read_bytes()))
        if r == 2:
            trace["traceEvents"] = [e for e in trace["traceEvents"] if e.get("name") != "ProfilerStep#5"]
        (tmp_path / f"rank-{r}.json").write_text(json.dumps(trace))
    code, out, err = run_cli(capsys, str(tmp_path))
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith("ProfilerStep#5  rank"))
    assert row.split()[1:3] == ["rank", "1"] and "rank 0" in row
    held = [line for line in out.splitlines() if "held by" in line]
    assert held == ["ProfilerStep#5: held by 2 of the 3 ranks, not by rank 2: the straggler and median "
                    "rank are of those that hold it"]


def test_a_rank_without_step_markers_is_named_as_why_no_step_is_shared(tmp_path, capsys):
    """Ranks 0 and 1 of the set, rank 1's ProfilerStep# markers taken out (prof.step() not
    called): its whole trace is one window, which no step of rank 0 matches; the warning says so
    rather than only blaming different runs."""
    for r in range(2):
        trace = json.loads(gzip.decompress(RANK_FILES[r].read_bytes()))
        if r == 1:
            trace["traceEvents"] = [e for e in trace["traceEvents"]
                                    if not str(e.get("name", "")).startswith("ProfilerStep#")]
        (tmp_path / f"rank-{r}.json").write_text(json.dumps(trace))
    code, out, err = run_cli(capsys, str(tmp_path))
    assert code == 0, err
    assert ("WARNING: no step is held by two ranks (rank 0: ProfilerStep#4 to ProfilerStep#5; rank 1: "
            "whole trace): rank 1: no ProfilerStep# markers (prof.step() not called, or called with no "
            "profiler schedule: the whole trace is one window), or the traces come from different profiler cycles or runs, so no step has a "
            "straggler") in out


def test_one_rank_left_beside_a_trace_with_nothing_profiled_is_one_rank(tmp_path, capsys):
    shutil.copy(RANK_FILES[0], tmp_path / RANK_FILES[0].name)
    (tmp_path / "rank-1.json").write_text(json.dumps({"traceEvents": [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#9", "ts": 0, "dur": 10, "pid": 7, "tid": 1}]}))
    code, out, err = run_cli(capsys, str(tmp_path))
    assert code == 0, err
    assert out.startswith("inductor-bench analyze: 1 rank\n") and "rank-1.json: skipped, nothing profiled" in out
