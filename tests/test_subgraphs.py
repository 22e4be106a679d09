"""Autotuning subgraphs: recognised from the compile worker's records (a real CPU capture,
``tests/fixtures/autotune_subgraphs``) and from the module text alone, left out of the
graphs a breakdown profiles, and flagged by the recorder from the call stack."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from inductor_bench.core import subgraphs
from inductor_bench.core.modparse import read_module

from .conftest import FIXTURES, torch_minor

FIX = FIXTURES / "autotune_subgraphs"
SPLIT2 = "ib_fixture::mm_autotuned_split_k_k_splits__2_0"
SPLIT4 = "ib_fixture::mm_autotuned_split_k_k_splits__4_1"
BY_STACK = ("autotuning subgraph {}: compiled by Inductor to benchmark an autotuning choice "
            "(codegen/subgraph.py:_compile_for_benchmarking)")
BY_TEXT = ("autotuning subgraph: its inputs and buffers are named after graph {}, a name "
           "Inductor gives only to benchmark subgraphs")


def recorded() -> list[dict]:
    lines = [json.loads(ln) for ln in (FIX / "modules.jsonl").read_text().splitlines()]
    return [{**m, "path": str(FIX / m["path"])} for m in lines]


def text(m: dict) -> str:
    return Path(m["path"]).read_text()


def test_the_records_cannot_tell_them_apart_by_ids_or_aot_id():
    mods = recorded()
    assert [(m["frame_id"], m["frame_compile_id"], m["order"]) for m in mods] == [
        (0, 0, 0), (0, 0, 1), (0, 0, 2)]
    assert {read_module(m["path"]).aot_id for m in mods} == {"0_inference"}


def test_the_worker_flagged_the_two_subgraphs_from_the_stack():
    mods = recorded()
    assert [m.get("subgraph", False) for m in mods] == [True, True, False]
    assert [subgraphs.reason(m) for m in mods] == [
        BY_STACK.format(SPLIT2), BY_STACK.format(SPLIT4), None]
    assert [m["graph_name"] for m in mods] == [
        "benchmark_ib_fixture_mm_autotuned_split_k_k_splits__2_0",
        "benchmark_ib_fixture_mm_autotuned_split_k_k_splits__4_1", None]
    assert mods[2]["inductor_stack"][-3:] == [
        "graph.py:compile_to_module", "graph.py:_compile_to_module",
        "graph.py:_compile_to_module_lines"]
    assert "codegen/subgraph.py:_compile_for_benchmarking" not in mods[2]["inductor_stack"]


BARE = ("path", "frame_id", "frame_compile_id", "attempt", "order")


def test_without_the_workers_evidence_the_graph_name_or_the_module_text_tells():
    mods = recorded()
    bare = [{k: m[k] for k in BARE} for m in mods]  # what TORCH_TRACE or an older log holds
    assert [subgraphs.reason(m) for m in bare] == [None, None, None]
    assert [subgraphs.reason(m, text(m)) for m in bare] == [
        BY_TEXT.format("benchmark_ib_fixture_mm_autotuned_split_k_k_splits__2_0"),
        BY_TEXT.format("benchmark_ib_fixture_mm_autotuned_split_k_k_splits__4_1"), None]
    named = {**bare[1], "graph_name": mods[1]["graph_name"]}
    assert subgraphs.reason(named) == (
        "autotuning subgraph: compiled as graph benchmark_ib_fixture_mm_autotuned_split_k_k_"
        "splits__4_1, a name Inductor gives only to benchmark subgraphs")
    assert subgraphs.reason({**bare[2], "graph_name": None}, text(mods[2])) is None


def test_a_model_graph_with_benchmark_in_its_text_is_not_a_subgraph():
    src = "def benchmark_compiled_module(args, times=10, repeat=10):\n    buf0 = arg0_1\n"
    assert subgraphs.reason({"path": "m.py"}, src) is None


def test_collect_graphs_profiles_only_the_model_graph(tmp_path):
    from inductor_bench.runner.graph_sources import collect_graphs

    mods = []
    for m in recorded():  # the worker's records, as read back from modules.jsonl
        dst = tmp_path / "cache" / Path(m["path"]).name
        dst.parent.mkdir(exist_ok=True)
        shutil.copyfile(m["path"], dst)
        mods.append({k: m[k] for k in BARE} | {"path": str(dst)})  # flags dropped: text decides
    run_dir = tmp_path / "run"
    left_out: list[dict] = []
    sources = collect_graphs(mods, run_dir, "cpu", left_out=left_out)
    assert [s.graph.id for s in sources] == ["0-inference"]
    assert sources[0].module_path.read_text() == text(recorded()[2])
    assert [(m["order"], m["subgraph"]) for m in left_out] == [(0, True), (1, True)]
    assert left_out[0]["subgraph_reason"] == BY_TEXT.format(
        "benchmark_ib_fixture_mm_autotuned_split_k_k_splits__2_0")
    assert sorted(p.name for p in (run_dir / "graphs").iterdir()) == ["0-inference"]


def test_left_out_line():
    assert subgraphs.left_out_line(2) == (
        "2 autotuning subgraphs left out: compiled only to benchmark an autotuning choice, "
        "never run by the model (listed in modules.jsonl)")
    assert subgraphs.left_out_line(1).startswith("1 autotuning subgraph left out:")


# --- the recorder, on records emitted from frames named as Inductor's ----------------------

EMITTER = '''
class SubgraphChoiceCaller:
    name = "decompose_k_mm_4_split"
    def _compile_for_benchmarking(self, lowering, emit):
        return lowering.compile_to_module(emit)

class GraphLowering:
    def __init__(self, name):
        self.name = name
    def compile_to_module(self, emit):
        return self._compile_to_module_lines(emit)
    def _compile_to_module_lines(self, emit):
        emit()
'''


def _fake_inductor(path: str) -> dict:
    """Functions compiled as if they lived in torch/_inductor/<path>."""
    scope: dict = {}
    exec(compile(EMITTER, f"/site-packages/torch/_inductor/{path}", "exec"), scope)
    return scope


def _record(path: Path) -> logging.LogRecord:
    rec = logging.LogRecord("torch.__trace", logging.DEBUG, __file__, 1, "", None, None)
    rec.metadata = {"inductor_output_code": {"filename": str(path), "file_path": str(path)},
                    "frame_id": 3, "frame_compile_id": 1, "attempt": 0}
    return rec


def test_recorder_flags_a_module_emitted_under_compile_for_benchmarking(tmp_path):
    pytest.importorskip("torch")
    from inductor_bench.runner.capture import _ModuleRecorder

    log = tmp_path / "modules.jsonl"
    recorder = _ModuleRecorder(log)
    sub, model = tmp_path / "sub.py", tmp_path / "model.py"
    sub.write_text("# AOT ID: ['3_forward']\n")
    model.write_text("# AOT ID: ['3_forward']\n")
    caller = _fake_inductor("codegen/subgraph.py")["SubgraphChoiceCaller"]()
    lowering = _fake_inductor("graph.py")["GraphLowering"]
    caller._compile_for_benchmarking(lowering("benchmark_decompose_k_mm_4_split"),
                                     lambda: recorder.emit(_record(sub)))
    lowering(None).compile_to_module(lambda: recorder.emit(_record(model)))
    lines = [json.loads(ln) for ln in log.read_text().splitlines()]
    assert [(m["path"], m["order"], m.get("subgraph", False)) for m in lines] == [
        (str(sub), 0, True), (str(model), 1, False)]
    assert lines[0]["inductor_stack"] == [
        "codegen/subgraph.py:_compile_for_benchmarking", "graph.py:compile_to_module",
        "graph.py:_compile_to_module_lines"]
    assert (lines[0]["graph_name"], lines[0]["choice"]) == (
        "benchmark_decompose_k_mm_4_split", "decompose_k_mm_4_split")
    assert lines[0]["subgraph_reason"] == BY_STACK.format("decompose_k_mm_4_split")
    assert (lines[1]["graph_name"], "choice" in lines[1]) == (None, False)
    assert [m["path"] for m in recorder.modules] == [str(model)]
    assert [m["path"] for m in recorder.subgraphs] == [str(sub)]


def _installed_torchs_name(choice: str) -> str:
    """A choice's name as the installed torch writes it: torch 2.11 joins a parameter's value as
    it is (``k_splits_2``); from 2.12 a value that starts with a digit takes a ``_`` first
    (``k_splits__2``, ``codegen/subgraph.py``: ``_generate_variant_name``), as the fixture has."""
    if torch_minor() >= (2, 12):
        return choice
    return choice.replace("k_splits__", "k_splits_")


@pytest.mark.slow
@pytest.mark.e2e
def test_a_real_capture_flags_custom_op_autotuning_subgraphs(tmp_path):
    """The compile worker on the fixture's model (torch.compile, max-autotune, CPU)."""
    # looked up, not imported: torch 2.5 has no such module, and importing its kernel package
    # on its own ends in a circular import
    inductor = pytest.importorskip("torch._inductor")
    if not (Path(inductor.__file__).parent / "kernel" / "custom_op.py").is_file():
        pytest.skip("this torch has no custom-op autotuning (torch._inductor.kernel.custom_op)")
    from inductor_bench.core.workload import WorkloadOptions
    from inductor_bench.runner.compile_run import compile_workload
    from inductor_bench.runner.settings import RunSettings

    (tmp_path / "logs").mkdir()
    opts = WorkloadOptions(path=str(FIX / "model.py"), device="cpu", mode="max-autotune")
    out = compile_workload(opts.validate(), tmp_path, RunSettings(steps=1))
    assert out.error is None
    flags = [(m.get("subgraph", False), m.get("choice")) for m in out.modules]
    assert flags == [(True, _installed_torchs_name(SPLIT2)), (True, _installed_torchs_name(SPLIT4)),
                     (False, None)]
    # the breakdown profiles the model's graph only, and says what it left out
    from inductor_bench.render.breakdown import render_breakdown
    from inductor_bench.runner.pipeline import breakdown_from_outcome

    result, err = breakdown_from_outcome(opts, tmp_path, out, RunSettings(iterations=5, windows=1), save=False)
    assert err is None, err
    assert len(result.graphs) == 1
    assert [m["path"] for m in result.subgraphs_left_out] == [m["path"] for m in out.modules[:2]]
    assert all(m["reason"] for m in result.subgraphs_left_out)
    assert "2 autotuning subgraphs left out" in render_breakdown(result)
