"""What a GPU run needs, tested without launching a kernel: the pipelined step and its
attribution by launch correlation (hand-built events, and the real CUDA-graph trace in
tests/fixtures/hta/), launching ops of CUDA-graph replays, the CUDA-graph capture logic
against a recording stand-in, torch.compile's cudagraph skips read from its own log call,
the model's precision settings carried into the profiling worker, and the time outside the
graphs."""

from __future__ import annotations

import gzip
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench.core.breakdown import MARKER, analyze_graph, launch_stacks_by_name
from inductor_bench.core.errors import TraceError
from inductor_bench.core.pipelined import (
    PIPELINED_ITERATION,
    PIPELINED_RUN,
    analyze_pipelined,
    attribute_by_launch,
)
from inductor_bench.core.results import BreakdownResult, GraphResult, StepTurns, TorchSettings
from inductor_bench.core.step import split_step
from inductor_bench.core.trace import Event, Trace, load_trace
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.runner import cudagraph_log, replay, torch_settings
from inductor_bench.runner.compile_run import _read_modules_log
from inductor_bench.runner.graphs import _cuda_graph_plan
from inductor_bench.runner.window_plan import rewarm_calls

from .conftest import FIXTURES

approx = pytest.approx
CUDA_GRAPH_TRACE = FIXTURES / "hta" / "negative_queue_length_values_check_rank0.json.gz"


def ev(name: str, cat: str, ts: float, dur: float, pid=1, tid=1, **args) -> Event:
    return Event(name, cat, float(ts), float(dur), pid, tid, args)


def ann(name: str, ts: float, dur: float) -> Event:
    return ev(name, "user_annotation", ts, dur)


# -- the pipelined step, hand-built --------------------------------------------------------


def pipelined_trace() -> Trace:
    """Three iterations launched back to back (markers 0-10, 10-20, 20-30; the run 0-100
    with its final sync). Each launches two kernels; the queue grows, so iteration 0's second
    kernel starts during iteration 1's launches and iteration 2's run after every marker.
    One memcpy's launch lies outside every iteration marker."""
    events = [ann(PIPELINED_RUN, 0, 100)]
    events += [ann(PIPELINED_ITERATION, 10 * i, 10) for i in range(3)]
    corr = 0
    starts = [(12, 20), (33, 45), (58, 70)]  # device start of each iteration's two kernels
    for i, pair in enumerate(starts):
        for j, start in enumerate(pair):
            corr += 1
            events.append(ev("cuLaunchKernel", "cuda_driver", 10 * i + 1 + 4 * j, 2, correlation=corr))
            events.append(ev(f"k{j}", "kernel", start, 10, pid=0, tid=7, correlation=corr))
    events.append(ev("cudaMemcpyAsync", "cuda_runtime", 40, 1, correlation=99))
    events.append(ev("Memcpy DtoH", "gpu_memcpy", 90, 5, pid=0, tid=7, correlation=99))
    return Trace(events=events)


def test_pipelined_attribution_busy_and_wall():
    p = analyze_pipelined(pipelined_trace())
    assert p.iterations == 3
    assert p.events_per_iteration == [2, 2, 2]
    assert p.unattributed == 1  # the memcpy launched between iterations
    # kernels: [12,22) [20,30) [33,43) [45,55) [58,68) [70,80): union 10+8+10+10+10+10 = 58
    assert p.busy_ms == approx(58 / 3 / 1000)
    assert p.wall_ms == approx(100 / 3 / 1000)
    assert p.launch_ms == approx(10 / 1000)
    assert p.busy_pct == approx(58.0)
    assert p.launch_bound  # idle 42% > 20%


def test_a_kernel_belongs_to_the_iteration_that_launched_it_not_the_one_it_runs_in():
    t = pipelined_trace()
    markers = sorted((e for e in t.events if e.name == PIPELINED_ITERATION), key=lambda e: e.ts)
    att = attribute_by_launch(t, markers)
    # iteration 0's second kernel starts at 20, inside iteration 2's marker span [20, 30)
    assert [e.ts for e in att.per_iteration[0]] == [12, 20]


def test_not_a_pipelined_trace():
    with pytest.raises(TraceError, match="not a pipelined session"):
        analyze_pipelined(Trace(events=[ann(MARKER, 0, 10)]))


def raw_events(path: Path) -> list[dict]:
    with gzip.open(path, "rt") as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]


def test_attribution_on_a_real_cuda_graph_trace():
    """The A100 torch.compile trace with CUDA-graph replays: each device event goes to the
    ProfilerStep whose span holds its launch. Checked against a plain reading of the JSON:
    a dict of launch times and a linear scan over the steps."""
    trace = load_trace(CUDA_GRAPH_TRACE)
    steps = sorted((e for e in trace.events if e.name.startswith("ProfilerStep#")), key=lambda e: e.ts)
    att = attribute_by_launch(trace, steps)

    raw = raw_events(CUDA_GRAPH_TRACE)
    launch = {e["args"]["correlation"]: e["ts"] for e in raw
              if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in raw if e["name"].startswith("ProfilerStep#"))
    expected = [0] * len(spans)
    lost = 0
    graph_replayed = 0
    graph_launches = {e["args"]["correlation"] for e in raw if e["name"] == "cudaGraphLaunch"}
    for e in raw:
        if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        ts = launch.get(e.get("args", {}).get("correlation"))
        hit = [i for i, (a, b) in enumerate(spans) if ts is not None and a <= ts <= b]
        if hit:
            expected[hit[0]] += 1
        else:
            lost += 1
        graph_replayed += e["args"].get("correlation") in graph_launches
    assert [len(x) for x in att.per_iteration] == expected
    assert att.unattributed == lost
    assert sum(expected) > 1000 and graph_replayed > 100  # replays are really in there


# -- replayed kernels: launching ops from a run launched kernel by kernel -----------------------


def test_replayed_kernels_take_their_launching_op_from_the_eager_launch():
    eager = Trace(events=[
        ev("aten::mm", "cpu_op", 0, 10),
        ev("cudaLaunchKernel", "cuda_runtime", 2, 2, correlation=1),
        ev("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n", "kernel", 20, 5, pid=0, tid=7, correlation=1),
    ])
    hints = launch_stacks_by_name(eager)
    assert hints == {"sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n": ("aten::mm",)}
    replayed = Trace(events=[
        ann(MARKER, 0, 100),
        ev("cudaGraphLaunch", "cuda_runtime", 1, 3, correlation=5),
        ev("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n", "kernel", 10, 5, pid=0, tid=7, correlation=5),
        ev("triton_poi_fused_gelu_0", "kernel", 16, 2, pid=0, tid=7, correlation=5),
    ])
    g = GraphResult(id="0-forward", role="forward", device="cuda")
    with_hints = analyze_graph(replayed, None, g, stack_hints=hints)
    gemm = next(k for k in with_hints.kernels if k.name.startswith("sm90"))
    assert (gemm.category, gemm.launched_by) == ("extern_gemm", "aten::mm")
    without = analyze_graph(replayed, None, GraphResult(id="0-forward", role="forward", device="cuda"))
    assert next(k for k in without.kernels if k.name.startswith("sm90")).launched_by is None


# -- CUDA-graph capture logic, against a recording stand-in ------------------------------------


class FakeNS:
    """Records what the capture does, in order, as torch.cuda would see it."""

    def __init__(self, fail_capture: bool = False):
        self.log: list[str] = []
        self.stream_now = "default"
        self.fail_capture = fail_capture
        ns = self

        class Stream:
            def __init__(self):
                ns.log.append("new side stream")

            def wait_stream(self, other):
                ns.log.append("side waits")

        class Current:
            def wait_stream(self, other):
                ns.log.append("default waits")

        class StreamCtx:
            def __init__(self, s):
                pass

            def __enter__(self):
                ns.stream_now = "side"

            def __exit__(self, *a):
                ns.stream_now = "default"

        class CUDAGraph:
            def replay(self):
                ns.log.append("replay")

        class GraphCtx:
            def __init__(self, g):
                pass

            def __enter__(self):
                ns.stream_now = "capture"

            def __exit__(self, *a):
                ns.stream_now = "default"

        self.Stream, self.CUDAGraph, self.stream, self.graph = Stream, CUDAGraph, StreamCtx, GraphCtx
        self._current = Current()

    def current_stream(self):
        return self._current

    def synchronize(self):
        self.log.append("sync")


def test_capture_warms_up_on_a_side_stream_then_captures_one_call():
    a, b = object(), object()
    seen: list[tuple[str, list]] = []

    def module_call(ns):
        def call(args):
            seen.append((ns.stream_now, list(args)))
            args.clear()  # as Inductor's call() does
            if ns.stream_now == "capture" and ns.fail_capture:
                raise RuntimeError("operation not permitted when stream is capturing\nmore")
            return ["out"]

        return call

    ns = FakeNS()
    g, err = replay.capture(ns, module_call(ns), [a, b])
    assert err is None
    assert [s for s, _ in seen] == ["side"] * replay.SIDE_STREAM_WARMUP + ["capture"]
    assert all(args == [a, b] for _, args in seen)  # the same input tensors every time
    assert g.static_args == [a, b] and g.outputs == ["out"]
    g.replay()
    g.replay()
    assert ns.log == ["new side stream", "side waits", "default waits", "sync", "sync", "replay", "replay"]

    ns2 = FakeNS(fail_capture=True)
    g2, err2 = replay.capture(ns2, module_call(ns2), [a])
    assert g2 is None and err2 == "RuntimeError: operation not permitted when stream is capturing"


# -- cudagraph skips, through torch's own log call ---------------------------------------------


def test_cudagraph_skips_are_tied_to_the_module_compiled_before_them(tmp_path):
    from torch._inductor.cudagraph_utils import log_cudagraph_skip_and_bump_counter

    log = tmp_path / "modules.jsonl"
    modules: list[dict] = []
    rec = cudagraph_log.attach(log, modules)
    try:
        for order, path in enumerate(["/x/fwd.py", "/x/bwd.py"]):
            entry = {"path": path, "frame_id": 0, "order": order}
            modules.append(entry)
            log.open("a").write(json.dumps(entry) + "\n")
            if order == 1:  # torch's own function, as cudagraph_post_compile calls it
                log_cudagraph_skip_and_bump_counter("skipping cudagraphs due to mutated inputs (1 instances)")
    finally:
        for name in cudagraph_log.LOGGERS:
            logging.getLogger(name).removeHandler(rec)
    mods = _read_modules_log(log)
    assert [m.get("cudagraph_skip") for m in mods] == [None, "mutated inputs (1 instances)"]

    fwd = GraphResult(id="0-forward", role="forward", device="cuda")
    bwd = GraphResult(id="0-backward", role="backward", device="cuda")
    _cuda_graph_plan(fwd, "reduce-overhead", None)
    _cuda_graph_plan(bwd, "reduce-overhead", mods[1]["cudagraph_skip"])
    assert (fwd.cuda_graphs, fwd.cuda_graphs_note) == (True, None)
    assert bwd.cuda_graphs is False and "mutated inputs" in bwd.cuda_graphs_note
    host = GraphResult(id="0-forward", role="forward", device="cpu")
    _cuda_graph_plan(host, "reduce-overhead", None)
    default = GraphResult(id="0-forward", role="forward", device="cuda")
    _cuda_graph_plan(default, "default", None)
    assert host.cuda_graphs is None and default.cuda_graphs is None


# -- the model's settings, carried into the profiling worker -----------------------------------

MODULE = '''
import torch, json, os
def get_args():
    return [torch.randn(8, 8)]
def call(args):
    (x,) = args
    args.clear()
    with open(os.environ["SEEN"], "a") as f:
        f.write(json.dumps([torch.get_float32_matmul_precision(), torch.get_num_threads()]) + "\\n")
    return (x @ x,)
'''


def test_the_profiling_worker_applies_the_models_settings(tmp_path):
    mod = tmp_path / "module.py"
    mod.write_text(MODULE)
    seen = tmp_path / "seen.jsonl"
    req, resp = tmp_path / "req.json", tmp_path / "resp.json"
    req.write_text(json.dumps({
        "module": str(mod), "device": "cpu", "iterations": 3, "windows": 1,
        "trace": str(tmp_path / "trace.json.gz"),
        "torch_settings": {"float32_matmul_precision": "medium", "num_threads": 1, "no.such.setting": 1},
    }))
    env = {**__import__("os").environ, "SEEN": str(seen)}
    r = subprocess.run([sys.executable, "-m", "inductor_bench.runner.profile", str(req), str(resp)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    calls = [json.loads(line) for line in seen.read_text().splitlines()]
    assert len(calls) >= 3 and all(c == ["medium", 1] for c in calls)
    out = json.loads(resp.read_text())
    body = out.get("result", out)
    assert body["settings_not_applied"] == ["no.such.setting"]
    assert body["replayed"] is False


def test_settings_snapshot_and_apply_round_trip():
    code = (
        "import torch, json\n"
        "from inductor_bench.runner import torch_settings as t\n"
        "before = t.snapshot()\n"
        "torch.set_float32_matmul_precision('high'); torch.backends.cudnn.benchmark = True\n"
        "after = t.snapshot()\n"
        "torch.set_float32_matmul_precision('highest'); torch.backends.cudnn.benchmark = False\n"
        "failed = t.apply(after)\n"
        "print(json.dumps([before, after, t.snapshot(), failed]))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    before, after, restored, failed = json.loads(r.stdout.strip().splitlines()[-1])
    assert before["float32_matmul_precision"] == "highest" and after["float32_matmul_precision"] == "high"
    assert after["backends.cudnn.benchmark"] is True
    assert restored == after and failed == []
    assert {k for k in before if before[k] != after[k]} >= {"float32_matmul_precision", "backends.cudnn.benchmark"}
    assert set(after) <= {s.key for s in torch_settings.SETTINGS}


# -- the time outside the graphs, and how it all reads -----------------------------------------


def result_with(step: list[float], walls: list[float]) -> BreakdownResult:
    r = BreakdownResult(model="m", device="cuda", mode="reduce-overhead", step_samples_ms=step)
    for i, w in enumerate(walls):
        r.graphs.append(GraphResult(id=f"0-g{i}", role="forward", device="cuda", wall_ms=w, iterations=1))
    return r


def test_outside_graphs_is_the_step_less_the_graphs():
    r = result_with([3.0, 5.0, 4.0], [1.0, 2.5])
    s = split_step(r)
    assert (s.step_ms, s.graphs_ms, s.outside_ms) == (4.0, 3.5, 0.5)
    assert s.outside_pct == approx(12.5)
    r.graphs[1].status = "failed"
    assert split_step(r) is None


def test_outside_graphs_from_turns_is_the_mean_over_steady_rounds_of_step_less_graphs():
    """Three rounds, one block per side each. Per round: the step block's mean less the sum of
    the graphs' blocks' means (blocks of fewer than five calls keep every call); the split is
    the mean of those over the rounds (three rounds: too few to leave one out), whatever the
    cross-process figures (the profiled walls below would give 4.0 - 3.5)."""
    r = result_with([3.0, 5.0, 4.0], [1.0, 2.5])
    r.step_turns = StepTurns(
        graphs=["0-g1", "0-g0"],  # in the compile worker's order: the ids say which is which
        blocks=[
            [[10.0, 12.0, 11.0], [20.0, 20.0], [13.0]],  # the step: 11, 20, 13
            [[2.0], [5.0, 7.0], [3.0]],  # 0-g1: 2, 6, 3
            [[1.0, 1.0], [4.0], [2.0, 4.0]],  # 0-g0: 1, 4, 3
        ],
    )
    s = split_step(r)
    step = (11.0 + 20.0 + 13.0) / 3
    outside = ((11.0 - 2.0 - 1.0) + (20.0 - 6.0 - 4.0) + (13.0 - 3.0 - 3.0)) / 3  # 8, 10, 7
    assert (s.rounds, s.step_ms, s.outside_ms) == (3, approx(step), approx(outside))
    assert s.graphs_ms == approx(step - outside) and not s.pipelined
    text = render_breakdown(r)
    # the turns' step is 3.7x the 4 ms step timed before them, and no step was profiled: the
    # line leads with what max gain takes (none) and names the turns' own figure as set aside
    assert ("outside the graphs: not measured (no step was profiled), none counted in max gain. WARNING: "
            f"the step took {step / 4.0:.1f}x as long in its turns with the graphs as the 4.000 ms") in text
    assert f"the turns' {outside:.3f} ms outside the graphs (of a {step:.3f} ms step, 3 rounds) is set aside" in text
    back = BreakdownResult.from_dict(json.loads(r.to_json()))
    assert back.step_turns == r.step_turns and split_step(back) == s
    # a round missing a side does not count; turns over other graphs, or none, fall back
    r.step_turns.blocks[1][2] = []
    assert split_step(r).rounds == 2
    r.step_turns.graphs = ["0-g0", "0-x"]
    assert split_step(r).rounds == 0 and split_step(r).outside_ms == 0.5
    r.step_turns = StepTurns(error="RuntimeError: the module could not be loaded")
    assert split_step(r).rounds == 0


def test_turns_reach_the_result_by_graph_id():
    from inductor_bench.runner.pipeline import step_turns

    raw = {"paths": ["/c/a.py", "/c/sub.py", "/c/b.py"], "blocks": [[[9.0]], [[1.0]], [[0.5]], [[2.0]]]}
    t = step_turns(raw, {"/c/b.py": "0-backward", "/c/a.py": "0-forward"})  # sub.py: a subgraph
    assert t == StepTurns(graphs=["0-forward", "0-backward"], blocks=[[[9.0]], [[1.0]], [[2.0]]])
    assert step_turns({"error": "x"}, {}).error == "x" and step_turns(None, {}) is None
    assert step_turns({"paths": ["/a"], "blocks": [[[1.0]]]}, {"/a": "g"}).error


def test_the_settings_line_says_who_set_each_value():
    """Synthetic settings: what the factory set and torch then changed (before 2.9 Dynamo's
    compile turns "medium" into "high"), what changed only while the model ran, what the
    factory set and kept, and an older result that read no factory snapshot."""
    r = result_with([2.0], [0.5, 1.0])
    values = {"float32_matmul_precision": "high", "backends.cudnn.benchmark": True, "num_threads": 1}
    r.torch_settings = TorchSettings(values, changed=[*values],
                                     model_set={"float32_matmul_precision": "medium", "num_threads": 1})
    text = render_breakdown(r)
    assert ("float32_matmul_precision high (the model set medium, changed while it ran) · "
            "backends.cudnn.benchmark True (changed while the model ran) · num_threads 1 (set by the model)"
            ) in text
    back = BreakdownResult.from_dict(json.loads(r.to_json()))
    assert back.torch_settings == r.torch_settings
    older = TorchSettings(values, changed=["backends.cudnn.benchmark"])
    assert [older.origin(k) for k in values] == ["", "set by the model", ""]
    assert "model_set" not in older.to_dict()


def test_the_report_says_how_it_ran_and_the_json_round_trips():
    r = result_with([2.0], [0.5, 1.0])
    r.torch_settings = TorchSettings({"float32_matmul_precision": "high", "backends.cudnn.benchmark": True},
                                     changed=["backends.cudnn.benchmark"])
    r.graphs[0].cuda_graphs, r.graphs[0].replayed = True, True
    r.graphs[1].cuda_graphs, r.graphs[1].cuda_graphs_note = False, "torch.compile left it out of CUDA graphs: cpu device"
    p = analyze_pipelined(pipelined_trace())
    r.graphs[0].pipelined = p
    text = render_breakdown(r)
    assert "float32_matmul_precision high · backends.cudnn.benchmark True (set by the model)" in text
    assert "CUDA graphs: 0-g0 profiled as mode reduce-overhead runs them" in text
    assert "0-g1: torch.compile left it out of CUDA graphs: cpu device" in text
    assert "launch-bound" in text and "58.0%" in text
    # the pipelined time stands for graph 0: 2.0 - (100/3 us + 1.0 ms)
    assert f"{2.0 - (100 / 3 / 1000 + 1.0):.3f} ms per step" in text
    back = BreakdownResult.from_dict(json.loads(r.to_json()))
    assert back.to_dict() == r.to_dict()
    assert back.graphs[0].pipelined == p and back.torch_settings == r.torch_settings
    plain = json.loads(BreakdownResult(model="m", graphs=[GraphResult(id="a", role="forward")]).to_json())
    assert "pipelined" not in plain["graphs"][0] and "torch_settings" not in plain["extras"]


def test_compare_shows_pipelined_busy_replays_and_time_outside_per_mode():
    from inductor_bench.core.compare import CompareResult, ModeResult
    from inductor_bench.render.compare import render_compare

    p = analyze_pipelined(pipelined_trace())  # 58% busy
    default = result_with([4.0], [1.0, 2.0])
    default.graphs[0].pipelined = p
    ro = result_with([2.0], [0.5, 1.0])
    ro.mode = "reduce-overhead"
    for g in ro.graphs:
        g.cuda_graphs = True
    ro.graphs[0].replayed = True
    ro.graphs[1].cuda_graphs_note = "profiled kernel by kernel: capture failed: RuntimeError: x"
    cr = CompareResult(model="m", device="cuda", modes=[
        ModeResult("default", step_samples_ms=[4.0] * 5, compile_s=1.0, breakdown=default),
        ModeResult("reduce-overhead", step_samples_ms=[2.0] * 5, compile_s=2.0, breakdown=ro),
    ])
    rows = {line.split("  ")[0]: line for line in render_compare(cr).splitlines()}
    assert rows["busy % (pipelined)"].split()[-2:] == ["58.0%", "-"]
    assert rows["CUDA graphs (replayed)"].split()[-2:] == ["-", "1/2"]
    # default: 4.0 - (100/3 us + 2.0); reduce-overhead: 2.0 - (0.5 + 1.0)
    assert rows["outside graphs, ms"].split()[-2:] == [f"{4.0 - (0.1 / 3 + 2.0):.3f}", "0.500"]


# -- torch 2.5's harness: no get_args() ---------------------------------------------------------

MODULE_2_5 = '''
import torch, os
def call(args):
    x, w = args
    args.clear()
    with open(os.environ["SEEN"], "a") as f:
        f.write("call\\n")
    return (x @ w,)

def benchmark_compiled_module(times=10, repeat=10):
    from torch._dynamo.testing import rand_strided
    from torch._inductor.utils import print_performance
    arg0_1 = rand_strided((4, 8), (8, 1), device='cpu', dtype=torch.float32)
    arg1_1 = rand_strided((8, 4), (4, 1), device='cpu', dtype=torch.float32)
    fn = lambda: call([arg0_1, arg1_1])
    return print_performance(fn, times=times, repeat=repeat)
'''


def test_a_module_written_by_torch_2_5_is_profiled_through_its_own_harness(tmp_path):
    """torch 2.5 modules have no get_args(): the worker takes the closure their
    benchmark_compiled_module() hands to print_performance (the harness shape copied from a
    module torch 2.5.1 wrote, tests/fixtures/attribution/torch-2.5/0-forward/module.py)."""
    real = (FIXTURES / "attribution" / "torch-2.5" / "0-forward" / "module.py").read_text()
    assert "def get_args" not in real and "fn = lambda: call([" in real
    mod = tmp_path / "module.py"
    mod.write_text(MODULE_2_5)
    seen = tmp_path / "seen.txt"
    req, resp = tmp_path / "req.json", tmp_path / "resp.json"
    req.write_text(json.dumps({"module": str(mod), "device": "cpu", "iterations": 4, "windows": 2,
                               "trace": str(tmp_path / "trace.json.gz")}))
    env = {**__import__("os").environ, "SEEN": str(seen)}
    r = subprocess.run([sys.executable, "-m", "inductor_bench.runner.profile", str(req), str(resp)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    body = json.loads(resp.read_text())
    assert body["ok"], body
    # 3 warm-up calls, 3 timed warm-up calls, then 2 windows of 4 iterations, each after its
    # untimed calls
    warm = rewarm_calls(body["result"]["warmup_per_call_ms"] / 1e3)  # REWARM_CALLS for a call this short
    assert seen.read_text().count("call") == 3 + 3 + 2 * (warm + 4)
    from inductor_bench.core.trace import load_for_analysis

    markers = [e for e in load_for_analysis(tmp_path / "trace.json.gz").events if e.name == MARKER]
    assert len(markers) == 4
