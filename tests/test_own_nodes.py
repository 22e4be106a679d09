"""Origins that piled up through unrealized inputs are taken back (``core/own_nodes.py``): on
hand-built lowering records (synthetic) and on a recorded frozen MLP, where every call is
checked against the module and line the model file gives it."""

from __future__ import annotations

import json

from inductor_bench.core.attribution import call_origins
from inductor_bench.core.callsites import parse_calls
from inductor_bench.core.modparse import parse_module
from inductor_bench.core.own_nodes import own_extern_nodes, own_origins

from .conftest import FIXTURES

MKL = "torch.ops.mkl._mkl_linear.default"
FROZEN = FIXTURES / "attribution" / "frozen-mlp-torch-2.13" / "0-inference"


def op(origins: list[str], extern: bool = False, nodes: list[str] | None = None) -> dict:
    rec: dict = {"written": [], "origins": origins}
    if extern:
        rec["extern"] = "extern_kernels.mm"
        rec["nodes"] = nodes if nodes is not None else origins
    return rec


def test_a_kernel_holding_a_whole_earlier_kernel_and_more_loses_it():
    """Synthetic: kernel 0 computes a and b; the extern's output view piles them into the extern
    and kernel 2."""
    ops = [op(["a", "b"]), op(["a", "b", "mm"], extern=True, nodes=["mm"]), op(["a", "b", "mm", "c"])]
    assert own_origins(ops) == [["a", "b"], ["mm"], ["mm", "c"]]


def test_a_recomputed_producer_and_equal_origins_stay():
    """Synthetic: an unrealized producer ``p`` inlined into two reductions is in both (the
    later does not hold all of the earlier); a split reduction's two kernels share their nodes."""
    ops = [op(["p", "sum"]), op(["p", "amax"]), op(["x", "var"]), op(["x", "var"])]
    assert own_origins(ops) == [["p", "sum"], ["p", "amax"], ["x", "var"], ["x", "var"]]


def test_an_earlier_extern_is_not_taken_from_the_kernel_that_fuses_its_epilogue():
    """Synthetic: a linear's bias add is lowered from the linear's own node into the next
    kernel: the node stays there although the extern's origins are all in the kernel."""
    ops = [op(["linear"], extern=True), op(["linear", "gelu"])]
    assert own_origins(ops) == [["linear"], ["linear", "gelu"]]


def test_an_extern_call_runs_the_nodes_no_earlier_extern_ran():
    """Synthetic: three linears whose own-op nodes piled up; one node lowered to two calls
    keeps it in both."""
    ops = [op(["l0"], True), op(["l0", "g", "l1"], True, ["l0", "l1"]), op(["k"]),
           op(["l0", "l1", "l2"], True, ["l0", "l1", "l2"]), op(["c"], True, ["c"]), op(["c"], True, ["c"])]
    assert own_extern_nodes(ops) == [["l0"], ["l1"], [], ["l2"], ["c"], ["c"]]


def test_an_extern_whose_node_is_none_of_its_origins_runs_its_origins():
    """Synthetic: a later in-place op made itself the node of the first call's operation."""
    ops = [{"origins": ["stem_conv"], "extern": "conv", "nodes": ["fused_add"]},
           {"origins": ["fused_add", "mul"], "extern": "conv_", "nodes": ["fused_add"]}]
    assert own_extern_nodes(ops) == [["stem_conv"], ["fused_add"]]


def test_a_frozen_mlps_calls_get_their_own_layers():
    """Recorded (torch 2.13.0+cpu, 2-core AMD EPYC VM, 2026-11-29): ``inductor-bench breakdown
    models/mlp.py --freezing --device cpu``. Freezing lowers each linear to ``mkl._mkl_linear``
    whose output piles the origins up: Inductor's own comments give the third linear the nodes
    of all three. Each call now gets the layer that the model file's line runs."""
    text = (FROZEN / "module.py").read_text()
    record = json.loads((FROZEN / "sources.json").read_text())
    calls = parse_calls(text, parse_module(text))
    origins, _ = call_origins(calls, record)
    got = [(c.name, origins[i].modules, sorted({ln.line for ln in origins[i].lines})) for i, c in enumerate(calls)]
    src = (FIXTURES.parent.parent / "models" / "mlp.py").read_text().splitlines()
    line = {t: next(i for i, s in enumerate(src, 1) if t in s) for t in ("self.fc1(x)", "self.fc2(x)", "self.fc3(x)")}
    fc1, fc2, fc3 = line["self.fc1(x)"], line["self.fc2(x)"], line["self.fc3(x)"]
    assert got == [
        (MKL, ["fc1"], [fc1]),
        ("cpp_fused_addmm_gelu_native_layer_norm_0", ["norm", "", "fc1"], [fc1]),  # LayerNorm, GELU in forward(), bias
        (MKL, ["fc2"], [fc2]),
        ("cpp_fused_addmm_gelu_native_layer_norm_1", ["", "fc2"], [fc2]),  # bias; GELU in forward()
        (MKL, ["fc3"], [fc3]),
        ("cpp_fused_addmm_gelu_native_layer_norm_2", ["fc3"], [fc3]),  # bias
    ]


MIXNET = FIXTURES / "attribution" / "frozen-mixnet-torch-2.13" / "0-inference"


def test_a_frozen_cnns_in_place_convolutions_and_its_stem_get_their_own_lines():
    """Recorded (torch 2.13.0+cpu, AMD EPYC VM, 2026-11-29): ``breakdown models/mixnet.py
    --freezing``. Each block ends in an in-place ``_convolution_pointwise_.binary`` that writes
    no buffer of its own: the k-th such call is the record's k-th operation running it, at the
    block's residual line, in its projection convolution's module (the pattern's node, not the
    ``y * self.se(y)`` inlined into its input). Its lowering took over the stem convolution's
    recorded node: the stem keeps its own origins, the stem's line, the convolution's module
    (not the SiLU's it is fused with)."""
    text = (MIXNET / "module.py").read_text()
    record = json.loads((MIXNET / "sources.json").read_text())
    calls = parse_calls(text, parse_module(text))
    origins, _ = call_origins(calls, record)
    src = (FIXTURES.parent.parent / "models" / "mixnet.py").read_text().splitlines()
    stem, residual = (next(i for i, s in enumerate(src, 1) if t in s)
                      for t in ("x = self.blocks(self.stem(x))", "return x + self.project("))
    got = [(origins[i].modules, [ln.line for ln in origins[i].lines]) for i, c in enumerate(calls)
           if c.extern and c.name.startswith("torch.ops.mkldnn._convolution_pointwise")]
    assert got[0] == (["stem.0"], [stem])  # the stem's conv, fused with its SiLU: the conv's module
    in_place = [origins[i] for i, c in enumerate(calls) if c.extern and "pointwise_." in c.name]
    assert [(o.modules, [ln.line for ln in o.lines], o.missing) for o in in_place] == [
        (["blocks.0.project.0"], [residual], None), (["blocks.1.project.0"], [residual], None)]
