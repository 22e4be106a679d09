"""`analyze`: what the typical step leaves out, and what a trace cannot say. Synthetic traces
built here (times in µs), every expected figure worked out by hand in the test; and the
recorded H200 trace whose device events lost their times (tests/fixtures/cuda_h200_mlp_zeroed)."""

from __future__ import annotations

import json

import pytest

from inductor_bench.core.analyze import analyze_trace
from inductor_bench.core.trace import load_for_analysis
from inductor_bench.core.typical_step import steady_kernels, steady_kernels_left_out, steady_step

from .conftest import FIXTURES
from .test_analyze import run_cli

T = 1.7e9  # a recorded trace's clock is far from 0


def x(name, cat, ts, dur, **args):
    dev = cat in ("kernel", "gpu_memcpy", "gpu_memset")
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": 0 if dev else 1,
            "tid": 7 if dev else 1, "args": args}


def launched(name, corr, issue, start, dur):
    """A kernel and its launch."""
    return [x("cudaLaunchKernel", "cuda_runtime", issue, 2, correlation=corr),
            x(name, "kernel", start, dur, correlation=corr)]


def write(tmp_path, evs, name="t.json"):
    f = tmp_path / name
    f.write_text(json.dumps({"traceEvents": evs}))
    return f


def both(capsys, f):
    """The JSON of both readers: the Event reader's result, and the CLI's (the column reader)."""
    r = analyze_trace(load_for_analysis(f))
    code, out, err = run_cli(capsys, str(f), "--format", "json")
    assert code == 0, err
    return [json.loads(r.to_json()), json.loads(out)]


def test_device_events_and_launches_without_times_are_left_out_and_counted(tmp_path, capsys):
    """One step T..T+100; kernel a launched at T+10, runs T+20..T+30. Kernel z and its launch
    at ts 0, dur 0 (their times lost): left out, not counted as launched outside every step
    (as they were); the step's wall 100 µs, busy 10, one event."""
    evs = [x("ProfilerStep#1", "user_annotation", T, 100), *launched("a", 1, T + 10, T + 20, 10),
           x("cudaLaunchKernel", "cuda_runtime", 0, 0, correlation=2), x("z", "kernel", 0, 0, correlation=2)]
    f = write(tmp_path, evs)
    for r in both(capsys, f):
        (s,) = r["steps"]
        (d,) = s["devices"]
        assert (s["wall_ms"] * 1e3, d["busy_ms"] * 1e3, d["events"]) == pytest.approx((100, 10, 1))
        assert r["untimed"] == {"cudaLaunchKernel": 1, "z": 1} and r["outside_steps"] == 0
        assert [k["name"] for k in r["kernels"]] == ["a"]
    code, out, _ = run_cli(capsys, str(f))
    assert code == 0 and "2 device event(s) and launch(es) at ts 0 with dur 0 were left out" in out


def test_without_step_markers_the_window_is_the_span_of_the_timed_events(tmp_path, capsys):
    """No steps: the whole trace is one window, from the op at T to the end of kernel a at
    T+30: 30 µs; the kernel at ts 0 (dur 0) would have made it T + 30 µs."""
    evs = [x("aten::mm", "cpu_op", T, 12), *launched("a", 1, T + 10, T + 20, 10), x("z", "kernel", 0, 0)]
    for r in both(capsys, write(tmp_path, evs)):
        (s,) = r["steps"]
        assert s["name"] == "whole trace" and s["wall_ms"] * 1e3 == pytest.approx(30)
        assert r["untimed"] == {"z": 1}


def test_a_step_or_kernel_at_ts_0_that_lasts_something_is_timed(tmp_path, capsys):
    """Synthetic traces start at 0: a step at 0..100 and a kernel at 0..5 are kept."""
    evs = [x("ProfilerStep#1", "user_annotation", 0, 100), x("cudaLaunchKernel", "cuda_runtime", 0, 2,
                                                               correlation=1),
           x("k", "kernel", 0, 5, correlation=1)]
    for r in both(capsys, write(tmp_path, evs)):
        (s,) = r["steps"]
        assert (s["wall_ms"] * 1e3, s["devices"][0]["busy_ms"] * 1e3) == pytest.approx((100, 5))
        assert r["untimed"] == {}


def test_a_trace_whose_device_events_all_lack_times_is_refused(tmp_path, capsys):
    evs = [x("ProfilerStep#1", "user_annotation", T, 100),
           x("cudaLaunchKernel", "cuda_runtime", 0, 0, correlation=1), x("k", "kernel", 0, 0, correlation=1)]
    code, out, err = run_cli(capsys, str(write(tmp_path, evs)))
    assert code == 2 and not out
    assert err.count("\n") == 1 and ("its one device event (kernel, memcpy, memset) carries no time (ts 0, dur 0): "
                                     "the profiler lost it") in err


def test_the_recorded_trace_whose_device_events_lost_their_times_is_refused(capsys):
    """The H200 recording: 160 kernels and 241 launches at ts 0, dur 0, the CPU ops whole.
    It read as a 4894217329.5 ms "whole trace" step."""
    code, out, err = run_cli(capsys, str(FIXTURES / "cuda_h200_mlp_zeroed" / "trace.json.gz"))
    assert code == 2 and not out and "its 160 device events" in err


def _slow_step_trace(tmp_path):
    """Six steps of 10 ms (10,000 µs), ProfilerStep#3 of 50 ms: far slower than the median, left
    out of the steady mean. Each step launches a (1 ms), b (1 ms) and c (1 ms); in step 3 a runs
    3 ms and a kernel `slow` (5 ms) runs there alone."""
    evs, t, corr = [], T, 1
    for i in range(6):
        length = 50_000 if i == 3 else 10_000
        evs.append(x(f"ProfilerStep#{i}", "user_annotation", t, length))
        ks = [("a", 3000 if i == 3 else 1000), ("b", 1000), ("c", 1000)] + ([("slow", 5000)] if i == 3 else [])
        start = t + 500
        for name, dur in ks:
            evs += launched(name, corr, start - 400, start, dur)
            corr, start = corr + 1, start + dur + 100
        t += length
    return write(tmp_path, evs)


def test_top_kernels_are_the_steady_mean_and_add_up_to_the_categories(tmp_path, capsys):
    """The steady steps are 0, 1, 2, 4, 5: a, b and c each 1 call and 1.000 ms a step, a third
    of kernel time each (over all six steps a read 8/6 = 1.333 ms and slow 0.833 ms, 21.7%);
    slow ran only in step 3 and is named apart; the JSON keeps the raw per-step figures."""
    f = _slow_step_trace(tmp_path)
    r = analyze_trace(load_for_analysis(f))
    rows = steady_kernels(r)
    assert [(k.name, k.calls, k.ms) for k in rows] == [(n, 1, pytest.approx(1.0)) for n in "abc"]
    assert steady_kernels_left_out(r) == [("slow", ["ProfilerStep#3"])]
    assert sum(k.ms for k in rows) == pytest.approx(sum(steady_step(r, "0").categories.values()))
    code, out, _ = run_cli(capsys, str(f))
    assert code == 0 and "Top 3 of 3 kernels (steady mean step)" in out
    assert ("kernels that ran only in steps left out of the steady mean, so not in its figures: "
            "slow (ProfilerStep#3)") in out
    assert out.count("33.3%") == 3 and "21.7%" not in out
    code, out, _ = run_cli(capsys, str(f), "--format", "json")
    j = json.loads(out)
    a = next(k for k in j["kernels"] if k["name"] == "a")
    assert a["per_step_ms"] == pytest.approx([1, 1, 1, 3, 1, 1]) and a["per_step_calls"] == [1] * 6


def test_the_steps_the_steady_mean_keeps_are_named(tmp_path, capsys):
    f = _slow_step_trace(tmp_path)
    code, out, _ = run_cli(capsys, str(f), "--format", "json")
    kept = ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#4", "ProfilerStep#5"]
    assert code == 0 and json.loads(out)["steady_steps"] == kept
    code, out, _ = run_cli(capsys, str(f))
    assert "steady mean (1 left out)" in out
    assert "steady mean: the mean over 5 steps; left out as disturbed" in out
    assert "docs/statistics.md): ProfilerStep#3" in out


def test_without_launch_records_the_idle_split_is_said_unknown(tmp_path, capsys):
    """Kernels alone (0..10, 30..40 in a step 0..50): the gap between them counts as waiting on
    CPU, 20 µs, 40..50 as nothing launched, and the report says the split is unknown; with
    their launches it does not."""
    evs = [x("ProfilerStep#1", "user_annotation", T, 50), x("k", "kernel", T, 10), x("k", "kernel", T + 30, 10)]
    code, out, _ = run_cli(capsys, str(write(tmp_path, evs)), "--format", "json")
    (d,) = json.loads(out)["steps"][0]["devices"]
    assert code == 0 and (d["waiting_on_cpu_ms"] * 1e3, d["nothing_launched_ms"] * 1e3) == pytest.approx((20, 10))
    assert json.loads(out)["launches"] == 0
    code, out, _ = run_cli(capsys, str(tmp_path / "t.json"))
    assert "no launch records" in out and "between waiting on CPU and queued is unknown" in out
    evs = [x("ProfilerStep#1", "user_annotation", T, 50), *launched("k", 1, T, T + 5, 10)]
    code, out, _ = run_cli(capsys, str(write(tmp_path, evs)))
    assert code == 0 and "no launch records" not in out


def test_several_traces_one_of_which_lost_its_device_times_leave_it_out_and_name_it(tmp_path, capsys):
    """The other rank is analysed, the one left out named (tests/test_ranks_times_lost.py)."""
    good = [x("ProfilerStep#1", "user_annotation", T, 100), *launched("a", 1, T + 10, T + 20, 10)]
    lost = [x("ProfilerStep#1", "user_annotation", T, 100),
            x("cudaLaunchKernel", "cuda_runtime", 0, 0, correlation=1), x("a", "kernel", 0, 0, correlation=1)]
    write(tmp_path, good, "rank0.json")
    write(tmp_path, lost, "rank1.json")
    code, out, err = run_cli(capsys, str(tmp_path))
    assert code == 0 and not err and out.startswith("inductor-bench analyze: 1 rank, rank 1 left out\n")
    assert f"WARNING: rank 1 left out ({tmp_path / 'rank1.json'}): its device events all carry no times" in out


def test_a_step_left_out_is_named_though_another_step_shares_its_name(tmp_path, capsys):
    """Two runs of steps 1 to 3 in one trace (six steps, each name twice), each step 1 ms and
    its one kernel 0.1 ms, the fifth step (the second ProfilerStep#2) 2 ms: it is left out as
    disturbed, and the line under the steps table names it, though the first ProfilerStep#2 is
    kept (the line had compared names, and said nothing)."""
    evs, corr = [], 1
    for i in range(6):
        t = T + i * 10_000
        evs.append(x(f"ProfilerStep#{1 + i % 3}", "user_annotation", t, 2000 if i == 4 else 1000))
        evs += launched("k", corr, t + 10, t + 20, 100)
        corr += 1
    f = write(tmp_path, evs)
    code, out, _ = run_cli(capsys, str(f), "--format", "json")
    j = json.loads(out)
    assert code == 0 and [s["wall_ms"] for s in j["steps"]] == pytest.approx([1, 1, 1, 1, 2, 1])
    code, out, _ = run_cli(capsys, str(f))
    assert code == 0 and "steady mean (1 left out)" in out
    assert "steady mean: the mean over 5 steps; left out as disturbed (slower than the median step by over " \
        "3.5 robust sigmas and 5%, docs/statistics.md): ProfilerStep#2" in out


def test_a_trace_with_nothing_inside_its_steps_prints_no_empty_table(tmp_path, capsys):
    """One step T..T+100 and one kernel at T+500, launched at T+490, after it: no device has
    anything of its own in the step. The header says so and counts the kernel as launched
    outside every step, in the singular ('1 device events ... are' before); no steps table or top
    kernels table is printed with no rows (they were: a header and a rule, 'Top 0 of 0 kernels')."""
    f = write(tmp_path, [x("ProfilerStep#1", "user_annotation", T, 100), *launched("k", 1, T + 490, T + 500, 5)])
    code, out, _ = run_cli(capsys, str(f))
    assert code == 0
    assert "devices: none: no op, runtime call or device event is inside a step" in out
    assert ("1 device event launched outside every step (or before the profiler started) is no step's own "
            "work: in a step it ran in, it is other steps' work") in " ".join(out.split())
    assert "Steps (per device)" not in out and "Top 0" not in out and "wall ms" not in out
    code, out, _ = run_cli(capsys, str(f), "--format", "json")
    j = json.loads(out)
    assert code == 0 and j["steps"] == [{"name": "ProfilerStep#1", "wall_ms": pytest.approx(0.1), "devices": [],
                                        "past_recording_ms": 0.0}]
    assert j["outside_steps"] == 1 and j["kernels"] == []


def test_a_trace_whose_one_device_event_writes_no_dur_is_refused_in_the_singular(tmp_path, capsys):
    evs = [x("ProfilerStep#1", "user_annotation", T, 100), x("cudaLaunchKernel", "cuda_runtime", T + 5, 2, correlation=1),
           x("a", "kernel", T + 10, 1, correlation=1)]
    del evs[-1]["dur"]
    undurated = write(tmp_path, evs)
    code, out, err = run_cli(capsys, str(undurated))
    assert (code, out) == (2, "") and err == (
        f"inductor-bench: error: {undurated}: its one device event (kernel, memcpy, memset) writes no dur: its "
        "time is not known\n")
