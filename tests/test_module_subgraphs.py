"""Subgraph functions of a compiled module (``torch.compiler.nested_compile_region``'s
``invoke_subgraph``, ``torch.cond``'s branches): their calls are read where ``call()`` runs
them, once per call, with their tensors known through the arguments passed in and the tuple
returned (core/modparse.run_order, core/buffers); the lowering record names their FX nodes
``<subgraph>/<node>`` (runner/subgraph_records). Real modules written by torch 2.13.0+cpu
(tests/fixtures/subgraphs/README.md)."""

from __future__ import annotations

import json
from types import SimpleNamespace

from inductor_bench.core.attribution import call_origins
from inductor_bench.core.callsites import parse_calls
from inductor_bench.core.graph_work import call_work
from inductor_bench.core.modparse import parse_module
from inductor_bench.core.subgraph_modules import rerooted
from inductor_bench.runner.subgraph_records import merge_subgraph, subgraph_lowerings

from .conftest import FIXTURES

HERE = FIXTURES / "subgraphs"
FP32 = 4


def _calls(name: str) -> tuple[str, list]:
    text = (HERE / name).read_text()
    return text, parse_calls(text, parse_module(text))


def test_a_region_called_for_two_layers_runs_its_calls_twice_in_order():
    """Three layers: the first compiled inline, the other two call one region."""
    text, calls = _calls("nested_region_forward.py")
    assert [(c.name, c.index) for c in calls] == [
        ("extern_kernels.addmm", 0), ("cpp_fused_add_gelu_0", -1),
        ("extern_kernels.addmm", 1), ("cpp_fused_add_erf_gelu_mul_1", -1),
        ("extern_kernels.addmm", 2), ("cpp_fused_add_erf_gelu_mul_1", -1),
    ]
    assert [c.written for c in calls if c.extern] == [
        ["buf0"], ["partitioned_fw_subgraph_1_0_buf0"], ["partitioned_fw_subgraph_1_0_buf0"]]
    assert [e.callee for e in parse_module(text).externs] == ["extern_kernels.addmm"] * 3


def test_a_regions_calls_are_counted_from_the_tensors_passed_in():
    """Each addmm of the (32, 64) activations by the (64, 64) weight: 2*M*N*K FLOPs, and the
    bias, input, weight and output once, float32 (the region's own inputs are given no type:
    the caller's tensors give it)."""
    text = (HERE / "nested_region_forward.py").read_text()
    work = [w for c, w in call_work(parse_module(text), text) if c.extern]
    m, n, k = 32, 64, 64
    assert [w.flops for w in work] == [2.0 * m * n * k] * 3
    assert [w.bytes for w in work] == [FP32 * (n + m * k + k * n + m * n)] * 3


def test_what_a_region_returns_is_known_to_its_next_call():
    """Backward: the second call of the region takes the first call's first result
    (``buf1 = buf0[0]``) as its gradient; its addmm and mm are counted through it."""
    text = (HERE / "nested_region_backward.py").read_text()
    work = [(c.name, w) for c, w in call_work(parse_module(text), text) if c.extern]
    assert [name for name, _ in work] == ["extern_kernels.addmm", "extern_kernels.mm"] * 2 + ["extern_kernels.mm"]
    assert all(w.bytes is not None and w.flops == 2.0 * 32 * 64 * 64 for _, w in work)
    assert work[2][1].bytes == work[0][1].bytes == FP32 * (32 * 64 * 3 + 64 * 64)


def test_both_branches_of_a_cond_are_read_after_the_predicate():
    text, calls = _calls("cond_inference.py")
    assert [c.name for c in calls] == [
        "extern_kernels.addmm", "cpp_fused_gt_sum_0",  # the predicate
        "extern_kernels.addmm", "cpp_fused_gt_relu_1",  # true_graph_0
        "cpp_fused_gt_mul_sin_2",  # false_graph_0
    ]


def test_a_call_in_one_branch_of_a_cond_says_why_its_events_are_fewer():
    """The predicate's addmm runs every iteration, the true branch's only when the predicate
    holds: two addmm calls, one event per iteration (here it did not hold)."""
    from inductor_bench.core.site_events import match_sites

    _, calls = _calls("cond_inference.py")
    addmm = [(i, c) for i, c in enumerate(calls) if c.name == "extern_kernels.addmm"]
    sites, notes = match_sites({"aten::addmm": addmm}, {"aten::addmm": [[5.0], [6.0]]}, None, 2, None)
    assert sites == [] and notes == [
        "aten::addmm: 1 event per iteration for 2 calls (some in subgraph functions, a torch.cond's "
        "branches or a loop's body, which run as the model's values decide), not split by call site"]


def test_subgraph_lowerings_are_found_once_and_their_nodes_named_after_them():
    """On stand-ins for Inductor's objects: an InvokeSubgraph node twice for one region, a
    Conditional's two branches, and a subgraph never lowered (no scheduler)."""
    def lowering(nodes=()):
        return SimpleNamespace(scheduler=SimpleNamespace(nodes=list(nodes)), module=object())

    region, yes, no = lowering(), lowering(), lowering()
    invoke = SimpleNamespace(subgraph=SimpleNamespace(name="partitioned_fw_subgraph_1_0", graph=region))
    cond = SimpleNamespace(true_subgraph=SimpleNamespace(name="true_graph_0", graph=yes),
                           false_subgraph=SimpleNamespace(name="false_graph_0", graph=no))
    unlowered = SimpleNamespace(subgraph=SimpleNamespace(name="s", graph=SimpleNamespace(scheduler=None)))
    parent = lowering([SimpleNamespace(node=n) for n in (invoke, invoke, cond, unlowered, None)])
    assert subgraph_lowerings(parent) == [
        ("partitioned_fw_subgraph_1_0", region), ("true_graph_0", yes), ("false_graph_0", no)]

    record = {"nodes": {"addmm": {"op": "aten.addmm.default"}}, "ops": [{"written": ["buf0"], "origins": ["addmm"]}]}
    inner = {"nodes": {"addmm": {"op": "aten.addmm.default", "frame": ["/m.py", 12, "forward", "x"]}},
             "ops": [{"written": ["true_graph_0_buf0"], "origins": ["addmm"], "extern": "extern_kernels.addmm",
                      "nodes": ["addmm"]}]}
    merge_subgraph(record, "true_graph_0", inner)
    assert set(record["nodes"]) == {"addmm", "true_graph_0/addmm"}
    assert record["ops"][1] == {"written": ["true_graph_0_buf0"], "origins": ["true_graph_0/addmm"],
                                "extern": "extern_kernels.addmm", "nodes": ["true_graph_0/addmm"]}
    assert inner["ops"][0]["origins"] == ["addmm"]  # the subgraph's own record is left as it was


def _modules(role: str) -> list[tuple[str, str | None, list[str]]]:
    """Each call of the recorded module with what its subgraph call returns into and its
    modules, as the lowering record (``nested_region_<role>.sources.json``) gives them after
    ``rerooted``."""
    text = (HERE / f"nested_region_{role}.py").read_text()
    record = json.loads((HERE / f"nested_region_{role}.sources.json").read_text())
    calls = parse_calls(text, parse_module(text))
    origins, _ = rerooted(call_origins(calls, record)[0], calls, record)
    return [(c.name, c.via, origins[i].modules) for i, c in enumerate(calls)]


def test_each_call_of_a_shared_region_names_the_layer_that_called_it():
    """The region was traced in ``layers.1``; its second call is ``layers.2``'s (the parent's
    ``invoke_subgraph_6``, of ``layers.2``, writes ``buf7``, what that call returns into)."""
    assert _modules("forward") == [
        ("extern_kernels.addmm", None, ["layers.0.fc"]),
        ("cpp_fused_add_gelu_0", None, ["layers.0"]),
        ("extern_kernels.addmm", "buf2", ["layers.1.fc"]),
        ("cpp_fused_add_erf_gelu_mul_1", "buf2", ["layers.1"]),
        ("extern_kernels.addmm", "buf7", ["layers.2.fc"]),
        ("cpp_fused_add_erf_gelu_mul_1", "buf7", ["layers.2"]),
    ]


def test_backward_calls_the_region_for_the_last_layer_first():
    got = [(name, via, mods) for name, via, mods in _modules("backward") if name == "extern_kernels.mm"]
    assert got == [("extern_kernels.mm", "buf0", ["layers.2.fc"]),
                   ("extern_kernels.mm", "buf4", ["layers.1.fc"]),
                   ("extern_kernels.mm", None, ["layers.0.fc"])]


def test_a_kernel_reusing_what_a_region_returned_fuses_none_of_the_regions_work():
    """Backward: ``buf8 = buf5; del buf5  # reuse`` hands the kernel after the region's calls the
    storage of the region's first result (``buf5 = buf4[0]``), which the region's call made: the
    kernel's work is layers.0's GELU backward alone, where it took the region's call (the
    parent's ``invoke_subgraph``, ``x = layer(x)``) as an operation fused into it. A region's own
    kernel reusing its input (``..._buf0 = ..._addmm  # reuse``) fuses none either."""
    text = (HERE / "nested_region_backward.py").read_text()
    calls = parse_calls(text, parse_module(text))
    assert [c.fused for c in calls if not c.extern] == [[]] * 6
    assert [mods for name, _, mods in _modules("backward") if name == "cpp_fused_gelu_gelu_backward_2"] == [
        ["layers.0"]]


def test_an_op_beside_a_while_loop_of_no_trips_is_its_call_outside_the_loop():
    """Recorded: ``h = x @ w``, then a ``while_loop`` whose condition is false at once with
    ``(h @ w).sin()`` in its body. The one ``aten::mm`` event of each iteration is the call outside
    the loop: its row names that line alone, where it named the body's too and was not split."""
    from pathlib import Path

    from inductor_bench.core.attribution import attribute
    from inductor_bench.core.breakdown import analyze_graph
    from inductor_bench.core.results import GraphResult
    from inductor_bench.core.trace import load_trace

    text = (HERE / "while_loop_mm_no_trips_inference.py").read_text()
    record = json.loads((HERE / "while_loop_mm_no_trips_inference.sources.json").read_text())
    module, trace = parse_module(text), load_trace(HERE / "while_loop_mm_no_trips_inference.trace.json.gz")
    g = analyze_graph(trace, module, GraphResult(id="0-inference", role="inference", device="cpu"))
    g = attribute(g, trace, module, text, record)
    model = Path(HERE / "while_loop_mm_no_trips_model.py").read_text().splitlines()
    outside = next(n for n, ln in enumerate(model, 1) if "h = x @ self.w" in ln)
    assert text.count("extern_kernels.mm(") == 2  # one in call, one in the loop's body
    (mm,) = [k for k in g.kernels if k.name == "aten::mm"]
    assert mm.calls == 1.0 and [ln.line for ln in mm.origin.lines] == [outside]
    assert [(s.kernel, s.index, s.calls) for s in g.sites] == [("aten::mm", 0, 1.0)]
    assert g.sites[0].ms == mm.ms
    assert g.attribution == "aten::mm: its 1 call in a while_loop ran none (no trips)"
