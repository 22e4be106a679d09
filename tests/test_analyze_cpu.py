"""`inductor-bench analyze` of CPU-only traces (no device events): each CPU thread is a row,
its busy time the union of its top-level ``cpu_op`` events in the step. Checked on a recorded
CPU trace against an independent reading of the raw JSON, and on a hand-built trace with
``ProfilerStep#N`` markers whose numbers are worked out by hand below."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest

from inductor_bench.core.analyze import WHOLE_TRACE, analyze_trace
from inductor_bench.core.trace import load_for_analysis
from inductor_bench.core.typical_step import steady_step, steady_wall

from .conftest import FIXTURES
from .test_analyze import merged_length, raw_events, run_cli

CPU_TRACES = sorted((FIXTURES / "cpu_mlp_train").glob("*/trace.json.gz"))
SPAN_CATS = {"cpu_op", "user_annotation", "kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver"}
STEP = re.compile(r"ProfilerStep#\d+")


def host_expected(path: Path) -> dict[tuple[str, str], tuple[float, float, float, float, float]]:
    """(step, "CPU thread <tid>") -> (wall, busy, summed, waiting, after-last) in µs."""
    evs = raw_events(path)
    steps = sorted(
        ((e["name"], e["ts"], e["ts"] + e["dur"]) for e in evs if STEP.fullmatch(e["name"])), key=lambda s: s[1]
    )
    if not steps:  # inductor-bench's own trace: its marked iterations, numbered by start
        marked = sorted((e["ts"], e["ts"] + e["dur"]) for e in evs if e["name"] == "inductor_bench::iteration")
        steps = [(f"iteration {i}", ts, end) for i, (ts, end) in enumerate(marked, 1)]
    if not steps:
        span = [e for e in evs if e.get("cat") in SPAN_CATS]
        steps = [(WHOLE_TRACE, min(e["ts"] for e in span), max(e["ts"] + e["dur"] for e in span))]
    ops = [
        e
        for e in evs
        if e.get("cat") == "cpu_op" and not STEP.fullmatch(e["name"]) and not re.fullmatch(r"## .* ##", e["name"])
    ]
    out = {}
    for name, start, end in steps:
        mine = [e for e in ops if [s for s in steps if s[1] <= e["ts"]][-1:] == [(name, start, end)]]
        mine = [e for e in mine if e["ts"] <= end]
        stop = max([end, *(e["ts"] + e["dur"] for e in mine)])
        for tid in {e["tid"] for e in mine}:
            top, cover = [], float("-inf")
            for e in sorted((e for e in mine if e["tid"] == tid), key=lambda e: (e["ts"], -e["dur"])):
                if e["ts"] >= cover:
                    top.append(e)
                    cover = e["ts"] + e["dur"]
            busy = merged_length([(e["ts"], e["ts"] + e["dur"]) for e in top])
            waiting, covered = 0.0, start
            for e in top:
                waiting += max(e["ts"] - covered, 0.0)
                covered = max(covered, e["ts"] + e["dur"])
            summed = sum(e["dur"] for e in top)
            out[name, f"CPU thread {tid}"] = (stop - start, busy, summed, waiting, stop - covered)
    return out


@pytest.mark.parametrize("path", CPU_TRACES, ids=lambda p: p.parent.name)
def test_recorded_cpu_trace_equals_an_independent_reading(path):
    r = analyze_trace(load_for_analysis(path))
    # recorded without ProfilerStep markers: a breakdown's graph trace, its iterations the steps
    marked = [e for e in raw_events(path) if e["name"] == "inductor_bench::iteration"]
    assert [s.name for s in r.steps] == [f"iteration {i}" for i in range(1, len(marked) + 1)] and marked
    got = {
        (s.name, d.device): (
            s.wall_ms * 1e3, d.busy_ms * 1e3, d.kernel_ms * 1e3, d.waiting_on_cpu_ms * 1e3, d.nothing_launched_ms * 1e3
        )
        for s in r.steps
        for d in s.devices
    }
    expected = host_expected(path)
    assert got.keys() == expected.keys() and expected
    for key, values in expected.items():
        assert got[key] == pytest.approx(values, rel=1e-9, abs=1e-6), key
    for s in r.steps:
        for d in s.devices:
            assert d.queued_ms == 0.0
            assert sum(d.categories.values()) == pytest.approx(d.kernel_ms, rel=1e-12)
            assert d.busy_ms + d.waiting_on_cpu_ms + d.nothing_launched_ms == pytest.approx(s.wall_ms, rel=1e-9)
    assert {k.category for k in r.kernels} == {"extern_gemm", "cpp_kernel"}


def x(name, ts, dur, tid=1, cat="cpu_op"):
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": 9, "tid": tid}


HAND_BUILT = [
    x("ProfilerStep#1", 0, 100, cat="user_annotation"),
    x("aten::mm", 10, 20),  # 10..30
    x("aten::resolve_conj", 12, 1),  # inside aten::mm: not top level
    x("aten::add", 40, 10),  # 40..50
    x("## Call CompiledFxGraph abc ##", 55, 25),  # a wrapper: its children are the ops
    x("graph_0_cpp_fused_relu_0", 60, 10),  # 60..70
    x("autograd::engine::evaluate_function: MmBackward0", 20, 25, tid=2),  # 20..45
    x("aten::mm", 21, 23, tid=2),  # inside it: it wraps the mm, which is GEMM time
    x("ProfilerStep#2", 100, 100, cat="user_annotation"),
    x("aten::mm", 150, 80),  # 150..230: runs past the step's end, which it extends
]


def test_hand_built_steps_and_threads(tmp_path):
    f = tmp_path / "cpu_steps.json"
    f.write_text(json.dumps({"traceEvents": HAND_BUILT}))
    r = analyze_trace(load_for_analysis(f))
    got = {
        (s.name, d.device): (s.wall_ms, d.busy_ms, d.kernel_ms, d.waiting_on_cpu_ms, d.queued_ms, d.nothing_launched_ms)
        for s in r.steps
        for d in s.devices
    }
    # times in µs / 1000: thread 1 busy 20+10+10, gaps 0..10, 30..40, 50..60, then 70..100;
    # thread 2 busy 20..45, gap 0..20, then 45..100; step 2: 100..230, gap 100..150; thread 2
    # has nothing in step 2: all of its 130 µs idle, nothing launched.
    expected = {
        ("ProfilerStep#1", "CPU thread 1"): (0.100, 0.040, 0.040, 0.030, 0.0, 0.030),
        ("ProfilerStep#1", "CPU thread 2"): (0.100, 0.025, 0.025, 0.020, 0.0, 0.055),
        ("ProfilerStep#2", "CPU thread 1"): (0.130, 0.080, 0.080, 0.050, 0.0, 0.0),
        ("ProfilerStep#2", "CPU thread 2"): (0.130, 0.0, 0.0, 0.0, 0.0, 0.130),
    }
    assert got.keys() == expected.keys()  # pytest.approx compares no dict of tuples (pytest >= 9.2)
    for key, figures in expected.items():
        assert got[key] == pytest.approx(figures, rel=1e-12), key
    s1 = r.steps[0].device("CPU thread 1")
    assert s1.categories == pytest.approx({"extern_gemm": 0.020, "cpp_kernel": 0.010, "extern_other": 0.010})
    # the autograd node wraps the mm: its 25 µs are the mm's 23 and its own 2 (the framework's)
    assert r.steps[0].device("CPU thread 2").categories == pytest.approx(
        {"extern_gemm": 0.023, "host_framework": 0.002})
    mm = next(k for k in r.kernels if (k.device, k.name) == ("CPU thread 1", "aten::mm"))
    assert (mm.calls, mm.per_step_ms) == (2, pytest.approx([0.020, 0.080]))


def test_cli_reports_a_cpu_trace(capsys):
    code, out, err = run_cli(capsys, str(CPU_TRACES[0]))
    assert code == 0, err
    assert "CPU threads (no device activity): CPU thread " in out
    assert "No device activity in this trace" in out and "Time by category" in out
    assert " ops (steady mean step)" in out and "launched by" not in out  # host ops, no launcher
    assert "iterations inductor-bench profiled (its inductor_bench::iteration ranges" in out
    # the host queues nothing: no queued column (0 in the JSON), the idle split's others kept
    header = next(ln for ln in out.splitlines() if ln.startswith("step ") and "between ops" in ln)
    assert "queued" not in header and "after last op" in header and "other steps' work" in header
    code, out, _ = run_cli(capsys, str(CPU_TRACES[0]), "--format", "json")
    data = json.loads(out)
    step = data["steps"][0]
    assert step["name"] == "iteration 1" and step["devices"][0]["device"].startswith("CPU thread ")
    # the marker whose ranges are the steps is no named range of them (as no ProfilerStep is)
    assert "inductor_bench::iteration" not in [g["name"] for g in data["regions"]]


# -- a user's own training loop around a compiled model, traced with CPU activity only --------
# tests/fixtures/cpu_loop/: recorded by its record.py on this project's CPU machine on
# 2026-11-27 with torch 2.13.0+cpu and 2.5.1 (3 ProfilerStep#N of an MLP trained with SGD).
# Inductor's C++ kernels are no op there: the compiled graph is CompiledFunction (forward) and
# CompiledFunctionBackward, inside Torch-Compiled Region and autograd's evaluate_function.
# eager-torch-2.13.0.json.gz: the same loop without torch.compile (record.py --eager,
# 2026-11-28, torch 2.13.0+cpu): the backward's ops sit inside autograd's nodes (AddmmBackward0).
LOOP_TRACES = sorted((FIXTURES / "cpu_loop").glob("torch-*.json.gz"))
EAGER_LOOP = FIXTURES / "cpu_loop" / "eager-torch-2.13.0.json.gz"
WRAPS = re.compile(r"^(?:CompiledFunction(?:Backward)?|Torch-Compiled Region.*|TorchDynamo Cache Lookup"
                   r"|Pregraph bytecode|AOTDispatcher .*|autograd::engine::evaluate_function: .*"
                   r"|[A-Z]\w*Backward\d*|torch::autograd::\w+)$")


def _parent(e: dict, ops: list[dict]) -> dict | None:
    """The shortest op of the same thread that holds ``e`` (containment, not a stack)."""
    holders = [o for o in ops if o is not e and o["tid"] == e["tid"] and o["ts"] <= e["ts"]
               and e["ts"] + e["dur"] <= o["ts"] + o["dur"] and (o["dur"], o["ts"]) != (e["dur"], e["ts"])]
    return min(holders, key=lambda o: o["dur"], default=None)


def loop_expected(path: Path) -> list[dict[str, float]]:
    """Per step, µs by how the time is spent: each op not inside an op that wraps nothing (a
    real op) its whole duration, an op that wraps others (WRAPS) what its direct children leave."""
    evs = raw_events(path)
    steps = sorted((e for e in evs if STEP.fullmatch(e["name"])), key=lambda e: e["ts"])
    # "## Call CompiledFxGraph <key> ##" (a cpu_op in 2.13's traces) stands aside for its ops
    ops = [e for e in evs if e.get("cat") == "cpu_op" and not STEP.fullmatch(e["name"])
           and not re.fullmatch(r"## .* ##", e["name"])]
    parent = {id(e): _parent(e, ops) for e in ops}
    out = []
    for s in steps:
        mine = [e for e in ops if s["ts"] <= e["ts"] <= s["ts"] + s["dur"]]
        got: dict[str, float] = {}
        for e in mine:
            chain, p = [], parent[id(e)]
            while p is not None:
                chain.append(p)
                p = parent[id(p)]
            if any(not WRAPS.match(p["name"]) for p in chain):
                continue  # a real op's part
            own = e["dur"]
            if WRAPS.match(e["name"]):
                own -= sum(c["dur"] for c in mine if parent[id(c)] is e)
            kind = ("wrap:" + e["name"]) if WRAPS.match(e["name"]) else e["name"]
            got[kind] = got.get(kind, 0.0) + own
        out.append(got)
    return out


@pytest.mark.parametrize("path", LOOP_TRACES, ids=lambda p: p.name.split(".json")[0])
def test_a_compiled_training_loop_is_split_into_what_ran(path):
    r = analyze_trace(load_for_analysis(path))
    expected = loop_expected(path)
    assert len(r.steps) == len(expected) == 3
    for s, want in zip(r.steps, expected, strict=True):
        (d,) = s.devices
        cats = d.categories
        gemm = sum(us for k, us in want.items() if k in ("aten::mm", "aten::addmm"))
        compiled = sum(us for k, us in want.items() if re.fullmatch(r"wrap:CompiledFunction(Backward)?", k))
        framework = sum(us for k, us in want.items() if k.startswith("wrap:")) - compiled
        assert gemm > 0 and compiled > 0 and framework > 0
        assert cats["extern_gemm"] == pytest.approx(gemm / 1000, abs=1e-9)
        assert cats["host_compiled"] == pytest.approx(compiled / 1000, abs=1e-9)
        assert cats["host_framework"] == pytest.approx(framework / 1000, abs=1e-9)
        # every op's share together is the thread's busy time: no time counted twice or lost
        assert d.kernel_ms == pytest.approx(sum(want.values()) / 1000, abs=1e-9)
        assert d.kernel_ms == pytest.approx(d.busy_ms, abs=1e-5)  # busy: from the ops' ends
    rows = {k.name: k for k in r.kernels}
    assert rows["CompiledFunctionBackward"].category == "host_compiled"
    assert rows["aten::mm"].calls == 3 * 3  # the backward's three matmuls, three steps


def test_an_eager_loops_backward_gemms_are_gemm_time_not_their_autograd_nodes():
    """Eager autograd: evaluate_function holds AddmmBackward0, which holds the two aten::mm of
    the gradients. The node only wraps them: the matmuls' time is GEMM, the node keeps what
    they leave (framework), as an independent reading of the raw events by containment says."""
    r = analyze_trace(load_for_analysis(EAGER_LOOP))
    expected = loop_expected(EAGER_LOOP)
    assert len(r.steps) == len(expected) == 3
    for s, want in zip(r.steps, expected, strict=True):
        (d,) = s.devices
        gemm = sum(us for k, us in want.items() if k in ("aten::mm", "aten::addmm", "aten::linear"))
        framework = sum(us for k, us in want.items() if k.startswith("wrap:"))
        assert "wrap:AddmmBackward0" in want and gemm > 0
        assert d.categories["extern_gemm"] == pytest.approx(gemm / 1000, abs=1e-9)
        assert d.categories["host_framework"] == pytest.approx(framework / 1000, abs=1e-9)
        assert d.kernel_ms == pytest.approx(sum(want.values()) / 1000, abs=1e-9)
        assert d.kernel_ms == pytest.approx(d.busy_ms, abs=1e-5)
        assert "host_compiled" not in d.categories
    rows = {k.name: k for k in r.kernels}
    assert rows["AddmmBackward0"].category == "host_framework"
    # the forward's 2 linears (their addmm inside them) and the backward's mm (2 per linear,
    # the first linear's input grad not needed: 3), per step
    assert rows["aten::mm"].calls == 3 * 3 and rows["aten::linear"].calls == 2 * 3


# -- a serving loop: the compiled model's forward under no_grad ---------------------------------
# tests/fixtures/cpu_loop/inference-torch-*.json.gz: record.py --inference on this project's CPU
# machine on 2026-12-02 with torch 2.5.1, 2.13.0+cpu and 2.15.0 (3 ProfilerStep#N);
# unscheduled-inference-torch-2.13.0.json.gz: record.py --inference --unscheduled (no steps,
# record_shapes=True: the graph's call record is a user annotation there, an op in the others).
INFERENCE_LOOPS = sorted((FIXTURES / "cpu_loop").glob("*inference-torch-*.json.gz"))
CALL = re.compile(r"## Call CompiledFxGraph \S+ ##")


def compiled_call_expected(path: Path) -> float:
    """µs of the whole trace in the compiled graphs' call records outside the ops directly
    inside them: each record's length less its children's (containment on its thread)."""
    evs = [e for e in raw_events(path) if e.get("cat") in ("cpu_op", "user_annotation")
           and not STEP.fullmatch(e["name"])]
    calls = [e for e in evs if CALL.fullmatch(e["name"])]
    ops = [e for e in evs if e.get("cat") == "cpu_op" or CALL.fullmatch(e["name"])]
    return sum(c["dur"] - sum(o["dur"] for o in ops if _parent(o, ops) is c) for c in calls)


@pytest.mark.parametrize("path", INFERENCE_LOOPS, ids=lambda p: p.name.split(".json")[0])
def test_an_inference_loops_cpp_kernels_are_the_compiled_graphs_time_not_the_frameworks(path):
    """Under no_grad no CompiledFunction wraps the graph, and Inductor's C++ kernels (the ReLU
    and LayerNorm here) are no op in a user's trace: torch 2.9+ wraps each graph's call in a
    record of its own, whose time outside its extern ops is those kernels and the graph's
    wrapper. That is the compiled graph's time (before: Torch-Compiled Region's, framework).
    Torch 2.5 writes no such record: its Region keeps the time, as framework."""
    r = analyze_trace(load_for_analysis(path))
    cats: dict[str, float] = {}
    for s in r.steps:
        for k, ms in s.devices[0].categories.items():
            cats[k] = cats.get(k, 0.0) + ms
    want = compiled_call_expected(path) / 1000
    if "2.5.1" in path.name:
        assert want == 0 and "host_compiled" not in cats and cats["host_framework"] > 0
        return
    assert want > 0.05  # the kernels of 3 calls of the graph
    assert cats["host_compiled"] == pytest.approx(want, abs=1e-9)
    assert cats["host_compiled"] > cats["host_framework"] * 0.3


def test_a_step_that_holds_nothing_is_left_out_of_the_steady_mean(tmp_path, capsys):
    """Synthetic: three steps with an op each, then the step the profiler stopped in (15 µs,
    no op). The typical step is the mean of the three: wall (100+120+140)/3 = 120 µs, busy
    (60+60+90)/3 = 70; the empty step still has its row, all of it nothing launched."""
    evs = []
    for k, (start, wall, busy) in enumerate([(0, 100, 60), (100, 120, 60), (220, 140, 90)], 1):
        evs += [x(f"ProfilerStep#{k}", start, wall, cat="user_annotation"), x("aten::mm", start + 10, busy)]
    evs.append(x("ProfilerStep#4", 360, 15, cat="user_annotation"))
    f = tmp_path / "stopped.json"
    f.write_text(json.dumps({"traceEvents": evs}))
    r = analyze_trace(load_for_analysis(f))
    last = r.steps[-1].device("CPU thread 1")
    assert (r.steps[-1].wall_ms, last.busy_ms, last.nothing_launched_ms) == pytest.approx((0.015, 0.0, 0.015))
    assert steady_wall(r) == pytest.approx(0.120)
    typical = steady_step(r, "CPU thread 1")
    assert (typical.busy_ms, typical.waiting_on_cpu_ms) == pytest.approx((0.070, 0.010))
    assert typical.busy_ms + typical.waiting_on_cpu_ms + typical.nothing_launched_ms == pytest.approx(0.120)
    code, out, _ = run_cli(capsys, str(f))
    assert code == 0
    assert "ProfilerStep#4 held nothing of its own" in out
    assert re.search(r"steady mean \(1 left out\) +CPU thread 1 +0\.120 +0\.070 +58\.3%", out)


@pytest.mark.parametrize("graph", ["0-forward", "0-backward"])
def test_a_run_directorys_graph_trace_reads_as_the_breakdown_measured_it(graph):
    """A breakdown's graph trace (tests/fixtures/runs/cpu_mlp_train_stalled, recorded on this
    project's CPU machine beside a process stalling it): analyze takes the iterations the
    profile marked as its steps, so each step's wall and busy time are the breakdown's own
    samples of that iteration (its wall_samples_ms, busy_samples_ms), to the float's rounding."""
    run = FIXTURES / "runs" / "cpu_mlp_train_stalled"
    g = next(g for g in json.loads((run / "breakdown.json").read_text())["graphs"] if g["id"] == graph)
    r = analyze_trace(load_for_analysis(run / "graphs" / graph / "trace.json.gz"))
    assert [s.wall_ms for s in r.steps] == pytest.approx(g["wall_samples_ms"], abs=1e-5)
    assert [sum(d.busy_ms for d in s.devices) for s in r.steps] == pytest.approx(g["busy_samples_ms"], abs=1e-5)


def test_a_run_directorys_graph_trace_says_its_steady_mean_is_by_the_walls_alone(capsys):
    """tests/fixtures/runs/cpu_checkpoint_train's forward: analyze's steady mean leaves out the
    walls far slower than their median (here the first iteration alone), where the breakdown
    also left out iterations by their kernels, idle gaps and clock (its left_out): the two means
    differ, each the mean of the saved samples it keeps, and the header says why."""
    run = FIXTURES / "runs" / "cpu_checkpoint_train"
    g = next(g for g in json.loads((run / "breakdown.json").read_text())["graphs"] if g["id"] == "0-forward")
    walls = g["wall_samples_ms"]
    med = statistics.median(walls)
    sigma = 1.4826 * statistics.median(abs(w - med) for w in walls)
    kept = [w for w in walls if not (w - med > 3.5 * sigma and w - med > 0.05 * med)]
    assert len(walls) == 34 and len(kept) == 33 and walls.index(max(walls)) == 0
    breakdown_kept = [w for i, w in enumerate(walls) if i not in g["left_out"]]
    assert len(breakdown_kept) == 27 and g["wall_ms"] == pytest.approx(statistics.fmean(breakdown_kept))
    code, out, _ = run_cli(capsys, str(run / "graphs" / "0-forward" / "trace.json.gz"))
    assert code == 0
    assert re.search(rf"steady mean \(1 left out\) +CPU thread \d+ +{statistics.fmean(kept):.3f} ", out)
    assert f"{statistics.fmean(kept):.3f}" == "5.730" and f"{g['wall_ms']:.3f}" == "5.642"
    assert ("each iteration a step; the steady mean here leaves out slow walls alone, where the "
            "breakdown's (report) also leaves out an iteration with a slow kernel, idle gap or clock "
            "reading (docs/statistics.md)") in " ".join(out.split())
