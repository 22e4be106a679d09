"""Whose Python the time in no op is (core/host_python.py, core/outside.with_python,
render/outside.py): the layer rules, the attribution on hand-built (synthetic) calls with every
figure worked out by hand, the split of a synthetic pair of step traces, and the recorded
steps of torch 2.13.0 and 2.5.1 (tests/fixtures/cpu_step_python) against an independent count
made here from the JSON alone, by each moment's innermost call and its ``Python parent id``s."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from inductor_bench.core import host_python as hp
from inductor_bench.core.analyze import analyze_file
from inductor_bench.core.host_python import INDUCTOR, MODEL, NO_FRAME, PythonLayer
from inductor_bench.core.outside import OutsideProfile, outside_of, outside_of_trace
from inductor_bench.core.rundir import load_breakdown
from inductor_bench.core.steady import steady
from inductor_bench.core.trace import Event
from inductor_bench.core.typical_step import steady_host_python
from inductor_bench.render.analyze import render_analyze
from inductor_bench.render.breakdown import render_breakdown

FIXTURES = Path(__file__).parent / "fixtures"
RECORDED = FIXTURES / "cpu_step_python"
STALLED = FIXTURES / "runs" / "cpu_mlp_train_stalled"
DYNAMO = "Dynamo (frame entry, guards, its wrappers)"
HARNESS = "the tool's step harness (its calls around the model)"
NN = "torch.nn (module calls and hooks, parameters)"
STEP = "inductor_bench/runner/step_profile.py(105): _profiled_step"


@pytest.mark.parametrize("name, layer", [
    ("torch/_dynamo/eval_frame.py(1076): compile_wrapper", DYNAMO),
    ("torch/_functorch/_aot_autograd/subclass_codegen.py:codegen(backward_prologue)(1): _backward_prologue",
     "AOTAutograd (runtime wrappers)"),
    ("/tmp/torchinductor_root/j5/cj5ghsti4jvtp5q2lucj6zijztbtqzipnezbp6fng4soaw4ntyc5.py(164): call", INDUCTOR),
    ("torch/_inductor/output_code.py(721): __call__", INDUCTOR),
    ("torch/autograd/profiler.py(932): __exit__", "the profiler itself"),  # before autograd's rule
    ("torch/autograd/graph.py(966): _engine_run_backward", "autograd (backward entry, its engine, Function.apply)"),
    ("torch/nn/modules/module.py(1782): _call_impl", NN),
    ("torch/optim/adam.py(214): step", "the optimizer"),
    ("torch/cuda/__init__.py(1083): synchronize", "torch.cuda (its synchronize waits for the device)"),
    ("inductor_bench/runner/workload.py(157): step", HARNESS),
    ("torch/utils/_pytree.py(890): tree_iter", "other torch Python"),
    ("mlp.py(19): forward", MODEL),
    ("transformers/models/llama/modeling_llama.py(300): forward", MODEL),
    ("<built-in method run_backward of torch._C._EngineBase object at 0x7f4ccffa7100>", None),
    ("<built-in function isinstance>", None),
    ("contextlib.py(141): __exit__", None),  # the standard library: its caller's
    ("concurrent/futures/thread.py(81): _worker", None),
    ("<frozen importlib._bootstrap>(1165): _find_and_load", None),
])
def test_a_frame_s_file_names_its_layer(name, layer):
    assert hp.layer_of(name) == layer


def test_a_frame_is_shown_short_where_its_path_is_long():
    module = "/tmp/torchinductor_root/j5/cj5ghsti4jvtp5q2lucj6zijztbtqzipnezbp6fng4soaw4ntyc5.py(164): call"
    assert hp.short_frame(module) == "cj5ghst… (a compiled module)(164): call"
    assert hp.short_frame("/home/me/models/net.py(12): forward") == "net.py(12): forward"
    assert hp.short_frame("torch/_dynamo/eval_frame.py(1076): _fn") == "torch/_dynamo/eval_frame.py(1076): _fn"


def call(name: str, ts: float, dur: float, tid: int = 1) -> Event:
    return Event(name=name, cat=hp.PYTHON_FUNCTION, ts=ts, dur=dur, pid=7, tid=tid, args={})


def test_each_moment_in_no_op_goes_to_its_innermost_frame_with_a_layer():
    calls = [
        call("mlp.py(1): step", 0, 100),
        call("torch/_dynamo/eval_frame.py(1): _fn", 10, 50),
        call("<built-in method addmm of type object at 0x1>", 20, 10),  # Dynamo's: its caller's
        call("contextlib.py(1): __exit__", 40, 10),  # the standard library: Dynamo's too
        call("torch/nn/modules/module.py(1): _call_impl", 70, 20),
        call("torch/_dynamo/x.py(2): g", 85, 10),  # past its caller's end (90): ends there
    ]
    gaps = [(0.0, 25.0), (35.0, 45.0), (80.0, 120.0)]
    got = hp.attribute(calls, gaps)
    assert got == {
        (MODEL, "mlp.py(1): step"): 20.0,  # [0, 10) and [90, 100)
        (DYNAMO, "torch/_dynamo/eval_frame.py(1): _fn"): 25.0,  # [10, 25) and [35, 45)
        (NN, "torch/nn/modules/module.py(1): _call_impl"): 5.0,  # [80, 85)
        (DYNAMO, "torch/_dynamo/x.py(2): g"): 5.0,  # [85, 90)
        (NO_FRAME, ""): 20.0,  # [100, 120): no call
    }
    assert sum(got.values()) == sum(b - a for a, b in gaps)


def test_layers_are_the_policy_s_mean_with_their_top_frame():
    per_step = [{("L", "f"): 100.0, ("L", "g"): 300.0, ("M", "h"): 50.0},
                {("L", "f"): 300.0, ("M", "h"): 150.0}]
    got = hp.layers(per_step, lambda xs: sum(xs) / len(xs))
    # L: f (100 + 300) / 2 and g (300 + 0) / 2 µs; M: h (50 + 150) / 2 µs
    assert [(x.name, x.top) for x in got] == [("L", "f"), ("M", "h")]
    assert [(x.ms, x.top_ms) for x in got] == [pytest.approx((0.35, 0.2)), pytest.approx((0.1, 0.1))]
    assert isinstance(got[0], PythonLayer)


def test_a_layers_time_is_the_same_whatever_order_its_frames_come_in():
    # a frame of 1 ms and four of 1e-16 ms: added to 1.0 one by one each tiny one is lost, added
    # first they are not; the exact sum, rounded once, is 1 + 2**-51 (the nearest float to 1 + 4e-16)
    want = float(Fraction(1) + 4 * Fraction(1e-13 / 1e3))
    assert want == 1 + 2**-51
    for variant in range(30):  # sets of other names: other orders in this process
        frames = {f"model.py({variant}): big": 1000.0,
                  **{f"model.py({variant}): tiny{k}": 1e-13 for k in range(4)}}
        got = hp.layers([{(MODEL, f): us for f, us in frames.items()}], lambda xs: sum(xs) / len(xs))
        assert [(x.name, x.ms, x.top_ms) for x in got] == [(MODEL, want, 1.0)]


def _op(name: str, ts: float, dur: float, cat: str = "cpu_op") -> dict:
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": 7, "tid": 1}


def _py(name: str, ts: float, dur: float) -> dict:
    return {**_op(name, ts, dur, hp.PYTHON_FUNCTION), "args": {}}


@pytest.fixture
def synthetic(tmp_path) -> tuple[Path, Path]:
    """Two steps of 1000 µs with an op of 300 µs (700 in no op) in the ops' trace; in the Python
    trace, two steps in ``_profiled_step`` calls with an op of 200 µs inside Dynamo's frame,
    their ``ProfilerStep#N`` at the end as torch 2.5 writes them."""
    ops, python = tmp_path / "steps.json", tmp_path / "steps_python.json"
    ops_events = []
    for k, t0 in enumerate((0.0, 1000.0)):
        ops_events += [_op(f"ProfilerStep#{k}", t0, 1000.0, "user_annotation"), _op("aten::mm", t0 + 100, 300)]
    py_events = []
    for k, (t0, dynamo) in enumerate(((5000.0, 500.0), (7000.0, 700.0))):
        py_events += [
            _op(f"ProfilerStep#{k}", t0 + 1000, 50.0, "user_annotation"),
            _py(STEP, t0, 1000.0),
            _py("torch/_dynamo/eval_frame.py(1): _fn", t0, dynamo),
            _py("<built-in method mm of type object at 0x1>", t0 + 90, 220),
            _op("aten::mm", t0 + 100, 200),
        ]
    ops.write_text(json.dumps({"traceEvents": ops_events}))
    python.write_text(json.dumps({"traceEvents": py_events}))
    return ops, python


def test_the_time_in_no_op_splits_by_the_shares_of_the_python_steps(synthetic):
    p = outside_of_trace(*synthetic)
    assert (p.error, p.python_error, p.steps, p.python_steps) == ("", "", 2, 2)
    assert p.uncovered_ms == pytest.approx(0.7)
    # Python steps: Dynamo 100 + 200 and 100 + 400 µs, the step function the rest (500, 300);
    # 0.8 ms in no op a step, its shares applied to the 0.7 ms of the ops' steps
    assert p.python_uncovered_ms == pytest.approx(0.8) and p.python_step_ms == pytest.approx(1.0)
    got = {x.name: (x.ms, x.top, x.top_ms) for x in p.python}
    assert got == {
        DYNAMO: (pytest.approx(0.35), "torch/_dynamo/eval_frame.py(1): _fn", pytest.approx(0.35)),
        HARNESS: (pytest.approx(0.35), STEP, pytest.approx(0.35)),
    }
    assert sum(x.ms for x in p.python) == pytest.approx(p.uncovered_ms)
    assert OutsideProfile.from_dict(json.loads(json.dumps(p.to_dict()))) == p


def test_a_trace_without_python_s_calls_says_so(synthetic, tmp_path):
    ops, _ = synthetic
    p = outside_of_trace(ops, ops)
    assert p.python == [] and "no profiled step with Python's calls" in p.python_error
    assert outside_of_trace(ops).python_error == ""  # none asked for (a run recorded before)
    assert "no such trace file" in outside_of_trace(ops, tmp_path / "gone.json").python_error
    failed = outside_of({"trace": str(ops), "python_error": "RuntimeError: tracer"})
    assert failed.python_error == "RuntimeError: tracer" and failed.uncovered_ms == pytest.approx(0.7)


def test_the_report_shows_whose_python_it_is(synthetic):
    r = load_breakdown(STALLED)
    r.outside = outside_of_trace(*synthetic)
    text = render_breakdown(r)
    section = text.split("Python between ops, by whose it is (profiled steps)")[1].split("\n\n")[1]
    rows = [line for line in section.splitlines()[2:]]
    assert rows[0].startswith(DYNAMO) and "0.350" in rows[0].split() and "50.0%" in rows[0].split()
    assert rows[1].startswith(HARNESS) and f"{STEP} 0.350" in rows[1]
    assert rows[-1].split()[-2:] == ["0.700", "100.0%"]
    assert "2 more steps profiled with Python's calls recorded (1.000 ms a step, 0.800 ms" in text


# -- the recorded steps, counted again here -------------------------------------------


def _events(path: Path) -> list[dict]:
    with gzip.open(path, "rt") as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]


def _independent(path: Path, markers: bool = False) -> tuple[list[float], list[dict[str, float]]]:
    """Each step's wall and µs per layer in no op, from the JSON: the moments no op but
    Dynamo's frame covers (any thread), each given to the latest-starting Python call over it
    on the step's thread, then up its ``Python parent id``s to the first with a layer. The
    steps: the ``_profiled_step`` calls, or with ``markers`` the ``ProfilerStep#N`` ranges on
    the thread with the most calls."""
    events = _events(path)
    calls = [e for e in events if e.get("cat") == hp.PYTHON_FUNCTION]
    by_id = {e["args"]["Python id"]: e for e in calls}
    ops = [e for e in events if e.get("cat") == "cpu_op" and not e["name"].startswith("Torch-Compiled Region")]
    windows = sorted((c for c in calls if c["name"].endswith("): _profiled_step")), key=lambda c: c["ts"])
    if markers:
        main = Counter(c["tid"] for c in calls).most_common(1)[0][0]
        windows = [{**e, "tid": main} for e in events if e["name"].startswith("ProfilerStep#")]
    walls, out = [], []
    for w in windows:
        start, end = w["ts"], w["ts"] + w["dur"]
        covered = [(o["ts"], min(o["ts"] + o["dur"], end)) for o in ops if start <= o["ts"] <= end]
        mine = [c for c in calls if c["tid"] == w["tid"] and c["ts"] < end and c["ts"] + c["dur"] > start]
        cuts = sorted({start, end} | {t for a, b in covered for t in (a, b)}
                      | {t for c in mine for t in (c["ts"], c["ts"] + c["dur"]) if start < t < end})
        layers: dict[str, float] = {}
        for a, b in zip(cuts, cuts[1:], strict=False):
            mid = (a + b) / 2
            if b <= a or any(x <= mid < y for x, y in covered):
                continue
            over = [c for c in mine if c["ts"] <= mid < c["ts"] + c["dur"]]
            layer = NO_FRAME
            if over:
                c = max(over, key=lambda c: (c["ts"], -c["dur"]))
                while c is not None and hp.layer_of(c["name"]) is None:
                    c = by_id.get(c["args"].get("Python parent id"))
                layer = hp.layer_of(c["name"]) if c is not None else NO_FRAME
            layers[layer] = layers.get(layer, 0.0) + b - a
        walls.append(end - start)
        out.append(layers)
    return walls, out


@pytest.mark.parametrize("version", ["2.13.0", "2.5.1"])
def test_the_recorded_steps_split_as_an_independent_count_does(version):
    d = RECORDED / f"torch-{version}"
    p = outside_of_trace(d / "steps.json.gz", d / "steps_python.json.gz")
    assert (p.error, p.python_error, p.steps, p.python_steps) == ("", "", 3, 3)
    walls, per_step = _independent(d / "steps_python.json.gz")
    kept = steady(walls)
    want = {n: kept.mean([s.get(n, 0.0) for s in per_step]) / 1e3 for s in per_step for n in s}
    assert p.python_uncovered_ms == pytest.approx(sum(want.values()), rel=1e-9)
    scale = p.uncovered_ms / p.python_uncovered_ms
    got = {x.name: x.ms / scale for x in p.python}
    assert got == pytest.approx(want, rel=1e-6, abs=1e-9)
    # what the layers hold in a compiled training step: Dynamo's frame, AOTAutograd's wrappers,
    # the autograd engine between the backward's nodes
    assert {DYNAMO, "AOTAutograd (runtime wrappers)",
            "autograd (backward entry, its engine, Function.apply)"} <= set(got)


def test_analyze_splits_a_recorded_loop_s_host_python_as_an_independent_count_does():
    """``analyze`` of a trace recorded with with_stack (torch 2.13.0's: its ``ProfilerStep#N``
    ranges are around the steps): the typical step's time in no op by layer, as counted here."""
    path = RECORDED / "torch-2.13.0" / "steps_python.json.gz"
    r = analyze_file(path)
    layers, total = steady_host_python(r)
    walls, per_step = _independent(path, markers=True)
    kept = steady(walls)
    assert kept.kept == steady([s.wall_ms for s in r.steps]).kept  # the same steps
    want = {n: kept.mean([s.get(n, 0.0) for s in per_step]) / 1e3 for s in per_step for n in s}
    assert {x.name: x.ms for x in layers} == pytest.approx(want, rel=1e-6, abs=1e-9)
    assert total == pytest.approx(sum(want.values()), rel=1e-9)
    text = render_analyze(r)
    assert f"Host Python between ops, by whose it is (steady mean, {r.host_python_thread})" in text
    assert r.host_python_thread.startswith("thread ") and r.host_python_thread != "thread 0"


def test_analyze_without_python_s_calls_has_no_such_section():
    r = analyze_file(RECORDED / "torch-2.13.0" / "steps.json.gz")
    assert r.host_python == [] and steady_host_python(r) == ([], 0.0)
    assert "Host Python" not in render_analyze(r)


@pytest.mark.parametrize("order", ["as begun", "reversed"])
def test_analyze_s_host_python_on_a_synthetic_gpu_loop(tmp_path, order):
    """Synthetic: two steps of 1000 µs on thread 1 (the most calls); in each an op of 200 µs,
    a runtime call (a launch) of 100 µs, Dynamo's frame (not counted itself) and a kernel; the
    tracer's frame of a thread begun before it (thread 0, the whole trace) and one call on
    thread 2. In no op: 700 µs a step, Dynamo's 300 and the loop's 400."""
    events = [_py("threading.py(1002): _bootstrap", -10.0, 5000.0) | {"tid": 0},
              _py("torch/_dynamo/x.py(1): g", 100.0, 50.0) | {"tid": 2}]
    for k, t0 in enumerate((0.0, 2000.0)):
        events += [
            _op(f"ProfilerStep#{k}", t0, 1000.0, "user_annotation"),
            _py("train.py(10): loop", t0, 1000.0),
            _py("torch/_dynamo/eval_frame.py(1): _fn", t0 + 100, 500.0),
            _op("Torch-Compiled Region: 0/0", t0 + 100, 500.0),
            _op("aten::mm", t0 + 200, 200.0),
            {**_op("cudaLaunchKernel", t0 + 450, 100.0, "cuda_runtime"), "args": {"correlation": k + 1}},
            {"ph": "X", "cat": "kernel", "name": "k", "ts": t0 + 460, "dur": 50.0, "pid": 0, "tid": 7,
             "args": {"correlation": k + 1}},
        ]
    path = tmp_path / "loop.json"  # a file whose calls are not in the order they began: sorted
    path.write_text(json.dumps({"traceEvents": events[::-1] if order == "reversed" else events}))
    r = analyze_file(path)
    layers, total = steady_host_python(r)
    assert r.host_python_thread == "thread 1" and total == pytest.approx(0.7)
    # Dynamo: [100, 200) + [400, 450) + [550, 600); the loop: [0, 100) + [600, 1000)
    assert {x.name: x.ms for x in layers} == pytest.approx({DYNAMO: 0.2, MODEL: 0.5})


MODULE = "/tmp/torchinductor_root/ab/cab" + "c" * 49 + ".py(10): call"
AOT = "AOTAutograd (runtime wrappers)"


def test_the_graphs_wrappers_split_by_whose_python_they_are(tmp_path):
    """Synthetic: two steps of 1000 µs, a graph's call of 500 µs (``CompiledFunction``, the
    compiled module's own record inside it, which covers nothing) holding a C++ kernel and an
    extern ``mm`` of 100 µs each: 300 µs of wrapper a step, 500 outside the graph. In the Python
    steps, AOTAutograd's wrapper holds the compiled module's ``call``: the wrapper's moments
    [100, 150) and [580, 600) are AOTAutograd's, [150, 200), [300, 350) and [450, 580) Inductor's."""
    ops_path, py_path = tmp_path / "steps.json", tmp_path / "steps_python.json"

    def graph(t0: float) -> list[dict]:
        return [_op("CompiledFunction", t0 + 100, 500.0), _op("## Call CompiledFxGraph abc ##", t0 + 110, 480.0),
                _op("cpp_fused_k_0", t0 + 200, 100.0), _op("aten::mm", t0 + 350, 100.0)]

    ops, py = [], []
    for k, t0 in enumerate((0.0, 1000.0)):
        ops += [_op(f"ProfilerStep#{k}", t0, 1000.0, "user_annotation"), *graph(t0)]
    for k, t0 in enumerate((5000.0, 7000.0)):
        py += [_op(f"ProfilerStep#{k}", t0, 1000.0, "user_annotation"), _py(STEP, t0, 1000.0),
               _py("torch/_functorch/_aot_autograd/runtime_wrappers.py(1): runtime_wrapper", t0 + 100, 500.0),
               _py(MODULE, t0 + 150, 430.0), *graph(t0)]
    ops_path.write_text(json.dumps({"traceEvents": ops}))
    py_path.write_text(json.dumps({"traceEvents": py}))
    p = outside_of_trace(ops_path, py_path)
    assert (p.graphs_ms, p.graphs_uncovered_ms, p.uncovered_ms) == pytest.approx((0.5, 0.3, 0.5))
    assert p.python_graphs_uncovered_ms == pytest.approx(0.3)
    got = {x.name: (x.ms, x.top) for x in p.graph_python}
    assert got == {INDUCTOR: (pytest.approx(0.23), MODULE),
                   AOT: (pytest.approx(0.07), "torch/_functorch/_aot_autograd/runtime_wrappers.py(1): runtime_wrapper")}
    assert OutsideProfile.from_dict(json.loads(json.dumps(p.to_dict()))) == p
    r = load_breakdown(STALLED)
    r.outside = p
    text = render_breakdown(r)
    section = text.split("The graphs' wrappers, by whose Python (profiled steps)")[1].split("\n\n")[1]
    rows = section.splitlines()[2:]
    assert rows[0].startswith(INDUCTOR) and "cabcccc… (a compiled module)(10): call 0.230" in rows[0]
    assert rows[-1].split()[-2:] == ["0.300", "100.0%"]
