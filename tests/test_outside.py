"""The time outside the compiled graphs by op (core/outside.py, render/outside.py) and the max
gain held against the whole step (core/step.gain_frame): on a hand-built (synthetic) host
trace with its figures worked out by hand below, on the recorded stalled run, and end to end
on `breakdown models/mlp.py --train` against the saved trace read with json alone."""

from __future__ import annotations

import gzip
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench.core.analysis import reanalyze
from inductor_bench.core.columns import load_columns
from inductor_bench.core.outside import (
    OutsideOp,
    OutsideProfile,
    outside_of,
    outside_of_trace,
    outside_profile,
)
from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat, StepTurns
from inductor_bench.core.rundir import STEP_PYTHON_TRACE_FILE, STEP_TRACE_FILE, load_breakdown
from inductor_bench.core.step import STEP_SLOWER, gain_frame, set_aside, split_step
from inductor_bench.core.views import top_step_units
from inductor_bench.render import format as fmt
from inductor_bench.render.breakdown import render_breakdown

FIXTURES = Path(__file__).parent / "fixtures"
STALLED = FIXTURES / "runs" / "cpu_mlp_train_stalled"
BACKWARD = "autograd::engine::evaluate_function: "


def op(name: str, ts: float, dur: float, tid: int = 1) -> dict:
    return {"ph": "X", "cat": "cpu_op", "name": name, "ts": ts, "dur": dur, "pid": 7, "tid": tid}


def step(k: int, t0: float, lstm_us: float) -> list[dict]:
    """One synthetic training step of 1000 µs: guards, Dynamo's frame holding the AOT prologue,
    the compiled forward and (after a graph break) an eager LSTM, then the compiled backward
    and two eager backward nodes, one on another thread."""
    return [
        {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{k}", "ts": t0, "dur": 1000.0,
         "pid": 7, "tid": 1},
        op("TorchDynamo Cache Lookup", t0 + 10, 20),
        op("Torch-Compiled Region: 0/0", t0 + 30, 570),
        op("AOTDispatcher Runtime Wrapper Prologue", t0 + 32, 6),
        op("CompiledFunction", t0 + 40, 260),
        op("## Call CompiledFxGraph abc ##", t0 + 50, 240),
        op("aten::addmm", t0 + 60, 100),
        op("aten::lstm", t0 + 310, lstm_us),
        op("aten::mkldnn_rnn_layer", t0 + 320, lstm_us - 20),
        op(BACKWARD + "CompiledFunctionBackward", t0 + 650, 150),
        op("CompiledFunctionBackward", t0 + 651, 148),
        op(BACKWARD + "AddmmBackward0", t0 + 800, 50),
        op("AddmmBackward0", t0 + 801, 48),
        op(BACKWARD + "MkldnnRnnLayerBackward0", t0 + 850, 100, tid=2),
    ]


@pytest.fixture
def synthetic(tmp_path) -> Path:
    path = tmp_path / "steps.json"
    events = step(0, 0.0, 190.0) + step(1, 1000.0, 290.0)
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def test_a_step_splits_into_graphs_ops_outside_them_and_time_in_no_op(synthetic):
    p = outside_profile(load_columns(synthetic))
    assert (p.steps, p.kept, p.error) == (2, 2, "")
    assert p.step_ms == pytest.approx(1.0)
    # inside the graphs: CompiledFunction 260 and the backward's evaluate_function 150 µs
    assert p.graphs_ms == pytest.approx(0.410)
    got = {o.name: (o.calls, o.ms) for o in p.ops}
    assert got == {
        "aten::lstm": (1, pytest.approx(0.240)),  # (190 + 290) / 2, its mkldnn layer inside it
        BACKWARD + "MkldnnRnnLayerBackward0": (1, pytest.approx(0.100)),  # on the other thread
        BACKWARD + "AddmmBackward0": (1, pytest.approx(0.050)),
        "TorchDynamo Cache Lookup": (1, pytest.approx(0.020)),
        "AOTDispatcher Runtime Wrapper Prologue": (1, pytest.approx(0.006)),
    }  # the frame itself and the ops inside a graph or a counted op: none
    assert [o.name for o in p.ops][:2] == ["aten::lstm", BACKWARD + "MkldnnRnnLayerBackward0"]
    # covered per step: 20 + 6 + 260 + lstm + 150 + 50 + 100 = 586 + lstm: 224 and 124 µs in none
    assert p.uncovered_ms == pytest.approx((224 + 124) / 2 / 1000)
    assert p.outside_ms + p.graphs_ms == pytest.approx(p.step_ms)


def test_what_cannot_be_split_says_why(tmp_path):
    no_steps = tmp_path / "plain.json"
    no_steps.write_text(json.dumps({"traceEvents": [op("aten::mm", 0, 5)]}))
    assert "no profiled step" in outside_of_trace(no_steps).error
    assert "no such trace file" in outside_of_trace(tmp_path / "gone.json.gz").error
    assert outside_of({"error": "RuntimeError: profiler busy"}).error == "RuntimeError: profiler busy"


def test_the_split_round_trips_through_the_result_json():
    p = OutsideProfile(steps=3, kept=2, step_ms=2.0, graphs_ms=1.0, uncovered_ms=0.25,
                       ops=[OutsideOp("aten::lstm", 1.0, 0.75)])
    assert OutsideProfile.from_dict(json.loads(json.dumps(p.to_dict()))) == p
    assert OutsideProfile.from_dict(None) is None


def test_the_report_shows_the_ops_and_holds_max_gain_against_the_whole_step(synthetic):
    r = load_breakdown(STALLED)
    r.outside = outside_profile(load_columns(synthetic))
    s = split_step(r)
    assert s is not None and s.outside_pct > 10  # the table, not the one line
    text = render_breakdown(r)
    section = text.split("Outside the graphs, by op (profiled steps)")[1].split("\n\n")[1]
    rows = [line.split() for line in section.splitlines()[2:]]
    # outside: the ops' 0.416 ms and 0.174 ms in none, 0.590 ms; aten::lstm 0.240 of it
    assert rows[0][:4] == ["aten::lstm", "1", "0.240", "40.7%"]
    assert rows[1][:3] == ["MkldnnRnnLayerBackward0", "(eager", "backward)"]
    assert rows[-2][-2:] == ["0.174", "29.5%"] and rows[-1][-2:] == ["0.590", "100.0%"]
    # max gain: each kernel's share of the graphs' wall and the time outside them; the stalled
    # run's turns read 5.926 ms outside, 10x these profiled steps' 0.590: the profiled figure
    frame = gain_frame(r)
    t = r.totals()
    assert s.outside_ms > 1.5 * 0.590 and frame.outside_ms == pytest.approx(0.590, abs=5e-4)
    assert frame.wall_ms == pytest.approx(t.wall_ms + frame.outside_ms)
    top = top_step_units(r)[0]
    row = next(line for line in text.splitlines() if line.strip().startswith("1  "))
    assert fmt.pct(100 * top.ms / frame.wall_ms) in row.split()
    assert (f"max gain = the kernel's share of {fmt.ms(frame.wall_ms)} ms, the all-graphs row's "
            f"{fmt.ms(t.wall_ms)} ms and the {fmt.ms(frame.outside_ms)} ms outside the graphs: the most "
            "the step can speed up") in text


def test_a_small_outside_share_is_one_line(synthetic):
    r = load_breakdown(STALLED)
    r.outside = outside_profile(load_columns(synthetic))
    r.step_turns = None
    r.step_samples_ms = [t.wall_ms for t in [r.totals()]]  # a step no longer than its graphs
    text = render_breakdown(r)
    assert "Outside the graphs, by op" not in text
    assert "outside the graphs, by op (profiled steps" in text and "aten::lstm 0.240 ms" in text


def _wrappers_us(events: list[dict]) -> float:
    outer = [e for e in events if e["name"] in ("CompiledFunction", BACKWARD + "CompiledFunctionBackward")]
    total = 0.0
    for g in outer:
        t0, t1 = g["ts"], g["ts"] + g["dur"]
        inner = sorted((e["ts"], min(e["ts"] + e["dur"], t1)) for e in events
                       if e is not g and e["tid"] == g["tid"] and t0 <= e["ts"] < t1
                       and not e["name"].startswith(("CompiledFunction", "## ", "ProfilerStep#"))
                       and e["name"] != BACKWARD + "CompiledFunctionBackward")
        covered, cur = 0.0, t0
        for a, b in inner:
            a = max(a, cur)
            if b > a:
                covered, cur = covered + b - a, b
        total += g["dur"] - covered
    return total


@pytest.mark.e2e
def test_a_breakdown_profiles_its_steps_and_splits_them(mlp_train):
    result, run_dir, err = mlp_train
    assert err is None
    p = result.outside
    assert p is not None and p.error == "" and p.steps >= 1
    with gzip.open(Path(run_dir) / STEP_TRACE_FILE, "rt") as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    steps = [e for e in events if e["name"].startswith("ProfilerStep#")]
    assert len(steps) == p.steps
    # the graphs: the compiled forward and backward calls, read from the trace with json alone
    # (to a nanosecond: the tool takes an op as its end less its start, in µs since the epoch)
    graphs = [e["dur"] for e in events if e["name"] in ("CompiledFunction", BACKWARD + "CompiledFunctionBackward")]
    assert len(graphs) == 2 * p.steps
    if p.kept == p.steps:
        assert p.graphs_ms == pytest.approx(math.fsum(graphs) / p.steps / 1000, abs=1e-6)
        guards = [e["dur"] for e in events if e["name"] == "TorchDynamo Cache Lookup"]
        by_name = {o.name: o for o in p.ops}
        if guards:
            assert by_name["TorchDynamo Cache Lookup"].ms == pytest.approx(math.fsum(guards) / p.steps / 1000, abs=1e-6)
    # whose Python the time in no op is: from as many more steps, each in the step function
    # the analysis looks for, the layers adding up to the time in no op
    assert (p.python_error, p.python_steps) == ("", p.steps)
    assert sum(x.ms for x in p.python) == pytest.approx(p.uncovered_ms, abs=1e-9)
    with gzip.open(Path(run_dir) / STEP_PYTHON_TRACE_FILE, "rt") as f:
        calls = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "python_function"]
    windows = [e for e in calls if e["name"].endswith("): _profiled_step")]
    assert len(windows) == p.python_steps
    # each window an end less its start, each a float64 of the trace's timestamps: two of their
    # steps (math.ulp) per window apart from its duration at most
    resolution_ms = 2 * len(windows) * math.ulp(max(e["ts"] for e in windows)) / 1000
    assert p.python_step_ms * p.python_steps <= math.fsum(e["dur"] for e in windows) / 1000 + resolution_ms + 1e-6
    assert {x.name for x in p.python} >= {"Dynamo (frame entry, guards, its wrappers)"}
    # the graphs' wrappers: each graph call's time in none of the ops it holds on its thread
    # (its kernels, extern calls; the compiled module's own record and the backward's node
    # aside), from the JSON alone
    assert sum(x.ms for x in p.graph_python) == pytest.approx(p.graphs_uncovered_ms, abs=1e-9)
    assert 0 < p.graphs_uncovered_ms < p.graphs_ms
    if p.kept == p.steps:
        assert p.graphs_uncovered_ms == pytest.approx(_wrappers_us(events) / p.steps / 1000, abs=1e-6)
    assert load_breakdown(run_dir).outside == p  # saved with the result
    assert reanalyze(run_dir)[0].outside == p  # and split again from the run directory alone


@pytest.mark.e2e
def test_a_re_analysis_in_another_process_writes_the_run_s_result_byte_for_byte(mlp_train, tmp_path):
    # another process, another order of its sets' strings (PYTHONHASHSEED): the same figures
    _, run_dir, err = mlp_train
    assert err is None
    copy = tmp_path / "copy"
    shutil.copytree(run_dir, copy)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run([sys.executable, "-m", "inductor_bench.cli", "report", str(copy), "--reanalyze"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    before = (Path(run_dir) / "breakdown.json").read_text()
    after = (copy / "breakdown.json").read_text()
    assert json.loads(after)["run_dir"] == str(copy)  # where it now is: the one field that moves
    assert after == before.replace(json.dumps(str(run_dir)), json.dumps(str(copy)))


def test_the_profiled_steps_are_held_against_the_step_that_stands_not_one_set_aside():
    """Synthetic, after `breakdown models/mlp.py --train` beside other work: the step timed 1.140
    ms, then 2.700 ms in its turns with its 0.950 ms graph, 2.4x: the turns' step is set aside
    (``STEP_SLOWER``). The 1.759 ms profiled steps are held against the 1.140 ms that stands, as
    the profiler's cost would have them, not against the 2.700 ms the warning set aside."""
    r = BreakdownResult(
        model="mlp", device="cpu", step_samples_ms=[1.14] * 5,
        graphs=[GraphResult(id="0-forward", role="forward", device="cpu", wall_ms=0.95, iterations=5)],
        step_turns=StepTurns(graphs=["0-forward"], blocks=[[[2.7]] * 5, [[0.95]] * 5]),
        outside=OutsideProfile(steps=3, kept=3, step_ms=1.759, graphs_ms=1.17, uncovered_ms=0.5,
                               ops=[OutsideOp("aten::sum", 1.0, 0.089)]))
    assert set_aside(r, split_step(r))[0] == STEP_SLOWER
    text = " ".join(render_breakdown(r).split())
    assert "the turns' 1.750 ms outside the graphs (of a 2.700 ms step, 5 rounds) is set aside" in text
    assert "per step: 1.759 ms against 1.140 ms timed without it" in text
    assert "against 2.700 ms timed without it" not in text


def test_a_step_shorter_than_its_graphs_says_how_far_the_turns_ran_from_the_profile():
    """Synthetic, after `breakdown` of a timm resnet18 (inference, batch 2, 64x64, one thread)
    beside other work: the graph's profile 17.948 ms, its own calls in the turns 58.552 ms
    (3.26x) against a 57.460 ms step, 1.4 of 2 cores busy with other processes. The line said
    only that 58.552 ms exceeded the step, where the graph table beside it reads 17.948 ms;
    it now says the turns ran 3.3x the profile, that max gain counts nothing outside the
    graphs, and what load the turns met."""
    r = BreakdownResult(
        model="resnet18", device="cpu", step_samples_ms=[57.46] * 5,
        graphs=[GraphResult(id="0-inference", role="inference", device="cpu", wall_ms=17.948, iterations=20)],
        step_turns=StepTurns(graphs=["0-inference"], blocks=[[[57.46]] * 5, [[58.552]] * 5],
                             load={"others_cores": 1.4, "steal_pct": 0.0, "cores": 2}))
    s = split_step(r)
    assert s.outside_ms < 0 and gain_frame(r).outside_ms == 0.0
    text = " ".join(render_breakdown(r).split())
    assert ("outside the graphs: not measurable: the graphs' own calls took 58.552 ms, more than the "
            "57.460 ms step timed in turns with them (3.3x their profiled 17.948 ms, the graph table's: "
            "the machine busier while the turns ran); max gain counts no time outside the graphs. "
            "WARNING: the step and its graphs were timed in turns while other processes kept 1.4 of 2 "
            "cores busy: each block met its own stalls.") in text


def test_a_step_shorter_than_its_graphs_at_the_profile_s_speed_adds_nothing_more():
    """Synthetic: the graph's turns at its profiled 2.631 ms, the step 2.5 ms, a quiet machine:
    the line names no speed and no load."""
    r = BreakdownResult(
        model="m", device="cpu", step_samples_ms=[2.5] * 5,
        graphs=[GraphResult(id="0-inference", role="inference", device="cpu", wall_ms=2.631, iterations=20)],
        step_turns=StepTurns(graphs=["0-inference"], blocks=[[[2.5]] * 5, [[2.631]] * 5]))
    text = " ".join(render_breakdown(r).split())
    assert ("not measurable: the graphs' own calls took 2.631 ms, more than the 2.500 ms step timed in "
            "turns with them; max gain counts no time outside the graphs.") in text
    assert "x their profiled" not in text and "WARNING: the step and its graphs" not in text


def test_profiled_steps_far_slower_than_the_step_stand_in_by_their_share_of_it():
    """After `breakdown` of a two-layer timm ViT (inference, batch 2, 64x64, one thread; torch
    2.13 CPU, 2026-12-07) on a busy machine: the step timed 2.393 ms, then 9.959 ms in its turns
    with its 1.936 ms graph (set aside, ``STEP_SLOWER``); the steps profiled after them took
    17.127 ms, 7.2x the step, 4.066 ms of it outside the graphs: more than the whole step. Max
    gain takes their share of the step, 4.066 / 17.127 x 2.393 ms; within 1.5x, their figure."""
    ops = [OutsideOp("TorchDynamo Cache Lookup", 1.0, 3.391), OutsideOp("Pregraph bytecode", 1.0, 0.022),
           OutsideOp("AOTDispatcher Runtime Wrapper Prologue", 1.0, 0.0079)]
    r = BreakdownResult(
        model="vit_tiny", device="cpu", step_samples_ms=[2.393] * 5,
        graphs=[GraphResult(id="0-inference", role="inference", device="cpu", wall_ms=1.936, iterations=5,
                            kernels=[KernelStat("aten::mm", "extern_gemm", 1.0, 0.742)], kernel_ms=0.742)],
        step_turns=StepTurns(graphs=["0-inference"], blocks=[[[9.959]] * 5, [[6.812]] * 5]),
        outside=OutsideProfile(steps=3, kept=3, step_ms=17.127, graphs_ms=13.061, uncovered_ms=0.645, ops=ops))
    assert set_aside(r, split_step(r))[0] == STEP_SLOWER
    profiled = 3.391 + 0.022 + 0.0079 + 0.645
    share = profiled / 17.127 * 2.393
    assert gain_frame(r).outside_ms == pytest.approx(share) and share == pytest.approx(0.568, abs=5e-4)
    text = " ".join(render_breakdown(r).split())
    assert ("outside the graphs: 0.568 ms per step, the profiled steps' share (4.066 of their 17.127 ms) "
            "of the 2.393 ms step timed before the turns, as they ran 7.2x slower than it (the profiler's "
            "own cost, a busier machine). WARNING: the step took 4.2x as long") in text
    assert "the kernel's share of 2.504 ms, the all-graphs row's 1.936 ms and the 0.568 ms outside" in text
    r.outside.step_ms = 3.5  # 1.46x the step: the profiled figure stands
    assert gain_frame(r).outside_ms == pytest.approx(profiled)
    assert "outside the graphs: 4.066 ms per step, the profiled steps' (the profiler's own cost" in (
        " ".join(render_breakdown(r).split()))
