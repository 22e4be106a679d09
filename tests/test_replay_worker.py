"""The replay's run side without a GPU: torch's state from the modules log into the profiling
worker's request (``runner/graphs.py``), the compile worker's hook on a real compile
(``runner/cudagraph_state.py``), the worker's choice of launch (``runner/profile.py``) against the
recording stand-in of ``tests/test_partition_replay.py``, and the report's line per graph."""

from __future__ import annotations

import types

import pytest

from inductor_bench.core.replay_plan import plan
from inductor_bench.runner.call_inputs import Restorer
from inductor_bench.runner.harness_inputs import HarnessCall

from .test_partition_replay import MODULE, STATE, Recorder, load

# -- the run's side: torch's state from the modules log, the plan into the worker's request -----

def test_the_profile_request_carries_the_plan_made_from_torchs_recorded_state(tmp_path):
    import json

    from inductor_bench.core.rundir import MODULES_LOG
    from inductor_bench.runner.cudagraph_state import SHA_KEY, STATE_KEY, text_sha
    from inductor_bench.runner.graph_sources import collect_graphs
    from inductor_bench.runner.graphs import profile_request
    from inductor_bench.runner.settings import RunSettings

    from .conftest import FIXTURES

    folder = FIXTURES / "codegen_2.11.0"
    row = next(r for r in json.loads((folder / "manifest.json").read_text())["modules"]
               if r["config"] == "split_infer_cg")
    text = (folder / row["file"]).read_text()
    compiled = tmp_path / "compiled"
    compiled.mkdir()
    (compiled / "split.py").write_text(text)
    (compiled / "split_again.py").write_text(text + "\n# the same graph, left out\n")
    left_out = {**row["cudagraph_state"], "cudagraph_fail_reasons": ["non-Tensor inputs"]}
    with open(tmp_path / MODULES_LOG, "w") as f:
        for path, state in ((compiled / "split.py", row["cudagraph_state"]),
                            (compiled / "split_again.py", left_out)):
            f.write(json.dumps({"path": str(path), "frame_id": 0, "order": 0}) + "\n")
            f.write(json.dumps({STATE_KEY: state, SHA_KEY: text_sha(path.read_text())}) + "\n")
    modules = [{"path": str(compiled / "split.py"), "frame_id": 0, "frame_compile_id": 0},
               {"path": str(compiled / "split_again.py"), "frame_id": 1, "frame_compile_id": 0}]
    graphed, eager = collect_graphs(modules, tmp_path, "cuda")
    assert graphed.cudagraph_state == row["cudagraph_state"] and eager.cudagraph_state == left_out

    request = profile_request(graphed, RunSettings(), mode="reduce-overhead")
    expected = plan(text, True, row["cudagraph_state"])
    assert request["cuda_graph"] is True and request["replay_plan"] == expected.request()
    assert request["replay_plan"]["partitioned"] and sorted(request["replay_plan"]["copies"]) == ["0", "1"]
    assert graphed.graph.how_it_ran == expected.how_it_ran()

    request = profile_request(eager, RunSettings(), mode="reduce-overhead")
    assert request["cuda_graph"] is False and request["replay_plan"]["graphed"] is False
    assert eager.graph.cuda_graphs_note == (
        "torch.compile left it out of CUDA graphs: non-Tensor inputs (torch logged nothing)")
    assert eager.graph.how_it_ran == ("eager, kernel by kernel: non-Tensor inputs "
                                      "(not logged by torch; from torch)")
    assert profile_request(graphed, RunSettings(), mode="default")["replay_plan"] is None


def _has_output_code() -> bool:
    """Whether this torch has ``torch._inductor.output_code`` (2.6 on; 2.5 has none)."""
    pytest.importorskip("torch")
    import importlib.util

    return importlib.util.find_spec("torch._inductor.output_code") is not None


def test_a_torch_without_compiled_graphs_post_compile_is_not_hooked(tmp_path):
    """Torch 2.5: no ``CompiledFxGraph.post_compile`` to wrap; the hook says so and writes nothing."""
    if _has_output_code():
        pytest.skip("this torch has torch._inductor.output_code")
    from inductor_bench.runner import cudagraph_state

    assert cudagraph_state.attach(tmp_path / "modules.jsonl") is False
    assert not (tmp_path / "modules.jsonl").exists()


@pytest.mark.e2e
def test_the_compile_workers_hook_records_torchs_state_of_a_real_compile(tmp_path, monkeypatch):
    """torch 2.13 on the CPU: the wrapped ``post_compile`` sees the compiled graph and its
    kwargs; the state is keyed by the module text Inductor wrote."""
    import json

    if not _has_output_code():
        pytest.skip("this torch has no torch._inductor.output_code (2.5)")
    import torch

    from inductor_bench.runner import cudagraph_state

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "cache"))
    from torch._inductor.output_code import CompiledFxGraph

    real = CompiledFxGraph.post_compile
    log = tmp_path / "modules.jsonl"
    try:
        assert cudagraph_state.attach(log) and cudagraph_state.attach(log)  # twice: wrapped once
        texts: list[str] = []
        from torch._inductor.graph import GraphLowering

        monkeypatch.setattr(GraphLowering, "save_output_code", staticmethod(texts.append), raising=False)
        torch._dynamo.reset()
        f = torch.compile(lambda x: (x.sin() + 1).sum(0), mode="reduce-overhead")
        f(torch.randn(8, 4))
    finally:
        CompiledFxGraph.post_compile = real
        torch._dynamo.reset()
    lines = [json.loads(ln) for ln in log.read_text().splitlines()]
    assert len(lines) == 1 and len(texts) == 1
    states = cudagraph_state.states_by_sha(lines)
    state = states[cudagraph_state.text_sha(texts[0])]
    assert state["device_types"] == ["cpu"] and state["cudagraphs_requested"] is False
    assert state["static_input_idxs"] == []
    # a graph on the CPU alone: torch's own lowering reason (it logs it only for CUDA graphs)
    assert state["disabled_cudagraphs_reason"].startswith("skipping cudagraphs due to")
    assert plan(texts[0], True, state).reason_from == "torch"


def test_the_report_says_per_graph_how_the_mode_ran_it():
    import json

    from inductor_bench.core.results import BreakdownResult, GraphResult
    from inductor_bench.render.breakdown import render_breakdown

    p = plan(MODULE, True, STATE)
    left_out = plan(MODULE.replace("partitions=[partition_0, partition_1,]", "partitions=[]"), True)
    r = BreakdownResult(model="m", device="cuda", mode="reduce-overhead")
    r.graphs = [
        GraphResult(id="0-inference", role="inference", device="cuda", wall_ms=1.0, iterations=1,
                    cuda_graphs=True, replayed=True, how_it_ran=p.how_it_ran()),
        GraphResult(id="1-inference", role="inference", device="cuda", wall_ms=1.0, iterations=1,
                    cuda_graphs=False, how_it_ran=left_out.how_it_ran(),
                    cuda_graphs_note="torch.compile left it out of CUDA graphs: no graph partitions "
                                     "(torch logged nothing)"),
    ]
    text = render_breakdown(r)
    assert ("0-inference as the mode runs it: replayed: 2 CUDA-graph partition(s), 1 eager step(s); "
            "1 input(s) copied per replay") in text
    assert ("1-inference as the mode runs it: eager, kernel by kernel: no graph partitions "
            "(not logged by torch; from module)") in text
    back = BreakdownResult.from_dict(json.loads(r.to_json()))
    assert [g.how_it_ran for g in back.graphs] == [p.how_it_ran(), left_out.how_it_ran()]


# -- the profiling worker's choice of launch (runner/profile.py), with the stand-in device ------

def worker_replay(monkeypatch, rec: Recorder, mod, plan_request: dict):
    from inductor_bench.runner import profile

    monkeypatch.setattr(profile.dev, "graph_namespace", lambda device: rec)
    monkeypatch.setattr(profile.dev, "synchronize", lambda device: None)
    args = [rec.tensor("x"), rec.tensor("w")]
    run_once = HarnessCall(lambda: mod.call(list(args)), Restorer(), args)  # as profile.harness makes it
    return profile._replay({"replay_plan": plan_request}, mod, run_once, "cuda"), run_once


def test_the_worker_replays_a_partitioned_module_through_its_own_call(monkeypatch):
    rec = Recorder()
    mod = load(rec)
    (launch, replayed, error), run_once = worker_replay(monkeypatch, rec, mod, plan(MODULE, True, STATE).request())
    assert (launch, replayed, error) == (run_once, True, None)
    assert rec.log.count("capture begins") == 2  # both partitions captured by the first call
    rec.log.clear()
    launch()
    assert rec.log == ["copy w -> static w", "replay", "nonzero on default",
                       "copy eager2 -> static eager1", "copy w -> static w", "replay"]


def test_the_worker_falls_back_to_kernel_by_kernel_when_a_partition_cannot_be_captured(monkeypatch):
    rec = Recorder()
    mod = load(rec)
    real = mod.runner.partitions[1]

    def refuse(args):
        if rec.stream_now == "capture":
            raise RuntimeError("CUDA error: operation not permitted when stream is capturing")
        return real(args)

    mod.runner.partitions[1] = refuse
    (launch, replayed, error), run_once = worker_replay(monkeypatch, rec, mod, plan(MODULE, True, STATE).request())
    assert (launch, replayed) == (run_once, False)
    assert error == "RuntimeError: CUDA error: operation not permitted when stream is capturing"
    assert mod.runner.partitions == [mod.partition_0, refuse]  # the module's own partitions again
    rec.log.clear()
    launch()
    assert rec.log == ["mm on default", "triton_poi_fused_gt_0 on default", "nonzero on default",
                       "mm on default"]


def test_the_worker_captures_a_module_without_partitions_whole_and_copies_what_the_plan_says(monkeypatch):
    from inductor_bench.runner import profile

    rec = Recorder()
    monkeypatch.setattr(profile.dev, "graph_namespace", lambda device: rec)
    made = [rec.tensor("weight"), rec.tensor("x")]

    def call(args):
        rec.log.append(f"call on {rec.stream_now} with {[a.name for a in args]}")
        args.clear()
        return ["out"]

    mod = types.SimpleNamespace(call=call, get_args=lambda: list(made))
    run_once = HarnessCall(lambda: None, Restorer(), list(made))  # the harness's inputs, as harness() has them
    launch, replayed, error = profile._replay({"replay_plan": {"graphed": True, "partitioned": False,
                                                              "copies": {}, "copied_inputs": [1]}},
                                              mod, run_once, "cuda")
    assert (replayed, error) == (True, None)
    rec.log.clear()
    assert launch() == ["out"]
    assert rec.log == ["copy x -> static x", "replay"]  # the weight is static: never copied


def test_torch_2_6_and_2_7s_post_compile_arguments_give_the_same_state():
    """Synthetic: torch 2.6 and 2.7 hand ``post_compile`` (example_inputs, cudagraphs,
    constants), the flag itself, and keep ``static_input_idxs`` in the graph's ``fx_kwargs``;
    2.8 and later hand it ``graph_kwargs``. Both read as the same state."""
    from types import SimpleNamespace

    from inductor_bench.runner import cudagraph_state

    compiled = SimpleNamespace(fx_kwargs={"static_input_idxs": [2, 0]}, device_types={"cuda"})
    old = cudagraph_state.handed(compiled, {"self": compiled, "example_inputs": [], "cudagraphs": True,
                                            "constants": object()})
    new = cudagraph_state.handed(compiled, {"self": compiled, "example_inputs": [], "constants": object(),
                                            "graph_kwargs": {"cudagraphs": True, "static_input_idxs": [0, 2]}})
    for given in (old, new):
        state = cudagraph_state.state_of(compiled, given)
        assert state["cudagraphs_requested"] is True and state["static_input_idxs"] == [0, 2]
        assert state["device_types"] == ["cuda"]
