"""Lowering records kept beside Inductor's cache and carried over to a compile that hit it
(core/source_store.py): the store's files, and the remapping of lines and module paths through
the dynamo node names, on hand-built records and on the recorded attr_net lowering."""

from __future__ import annotations

import json
import os

import pytest

from inductor_bench.core import source_store
from inductor_bench.core.attribution import attribute, origin_of
from inductor_bench.core.breakdown import analyze_graph
from inductor_bench.core.modparse import read_module
from inductor_bench.core.results import GraphResult
from inductor_bench.core.source_store import load_record
from inductor_bench.core.trace import load_trace
from inductor_bench.core.views import by_line, units

from .conftest import FIXTURES

A = "/old/net.py"
B = "/new/copy_of_net.py"


def frame(file: str, line: int, code: str) -> list:
    return [file, line, "forward", code]


def dyn(op: str, fr: list | None, module: str | None = None) -> dict:
    rec: dict = {"op": op}
    if fr:
        rec["frame"] = fr
    if module:
        rec["module"] = [module, "Conv2d"]
    return rec


CONV = "call_function:conv2d"
RELU = "call_function:relu"
# the generating compile: two convolutions on line 10 in two modules, a relu on line 11
THEN = {
    "y": dyn(CONV, frame(A, 10, "y = self.conv(x)"), "L['self'].b0.conv"),
    "y_1": dyn(CONV, frame(A, 10, "y = self.conv(x)"), "L['self'].b1.conv"),
    "relu": dyn(RELU, frame(A, 11, "return torch.relu(y)")),
}
STORED = {
    "nodes": {
        "convolution": {"op": "aten.convolution.default", "frame": frame(A, 10, "y = self.conv(x)"),
                        "module": ["L['self'].b0.conv", "Conv2d"]},
        "convolution_1": {"op": "aten.convolution.default", "frame": frame(A, 10, "y = self.conv(x)"),
                          "module": ["L['self'].b1.conv", "Conv2d"]},
        "relu": {"op": "aten.relu.default", "frame": frame(A, 11, "return torch.relu(y)")},
        "copy_": {"op": "aten.copy_.default"},
    },
    "ops": [{"written": ["buf0"], "origins": ["convolution"]}],
    "dynamo": THEN,
}


def shifted(then: dict, file: str, by: int) -> dict:
    """``then`` as a copy of the file at ``file`` with ``by`` lines added at the top sees it."""
    out = {}
    for name, rec in then.items():
        rec = json.loads(json.dumps(rec))
        if "frame" in rec:
            rec["frame"] = [file, rec["frame"][1] + by, *rec["frame"][2:]]
        out[name] = rec
    return out


def test_the_same_compile_carries_over_unchanged():
    got = source_store.carry_over(STORED, THEN)
    assert got["nodes"] == STORED["nodes"] and got["ops"] == STORED["ops"]
    assert got["carried"] == {"nodes": 4, "lost": 0}
    assert "dynamo" not in got


def test_lines_move_to_the_current_file_and_lines():
    got = source_store.carry_over(STORED, shifted(THEN, B, 7))["nodes"]
    assert got["convolution"]["frame"] == frame(B, 17, "y = self.conv(x)")
    assert got["convolution_1"]["frame"] == frame(B, 17, "y = self.conv(x)")
    assert got["relu"]["frame"] == frame(B, 18, "return torch.relu(y)")
    assert got["convolution"]["module"] == ["L['self'].b0.conv", "Conv2d"]
    assert got["copy_"] == {"op": "aten.copy_.default"}  # no line: nothing to carry


def test_module_paths_follow_the_current_graph():
    now = json.loads(json.dumps(THEN))
    now["y"]["module"] = ["L['self'].layers.0.conv", "Conv2d"]
    now["y_1"]["module"] = ["L['self'].layers.1.conv", "Conv2d"]
    got = source_store.carry_over(STORED, now)["nodes"]
    assert got["convolution"]["module"] == ["L['self'].layers.0.conv", "Conv2d"]
    assert got["convolution_1"]["module"] == ["L['self'].layers.1.conv", "Conv2d"]


def test_a_line_now_split_in_two_is_lost_with_the_reason():
    now = json.loads(json.dumps(THEN))
    now["y_1"]["frame"] = frame(A, 12, "y = self.conv(x)  # second")
    got = source_store.carry_over(STORED, now)
    nodes = got["nodes"]
    assert "frame" not in nodes["convolution"] and "frame" not in nodes["convolution_1"]
    assert nodes["convolution"][source_store.LOST] == (
        "the cached module's line net.py:10 is not known in this compile: "
        "its dynamo nodes (y, y_1) are at 2 lines in this compile")
    assert nodes["relu"]["frame"] == frame(A, 11, "return torch.relu(y)")
    assert got["carried"] == {"nodes": 4, "lost": 2}
    # the origin says why, and claims no module (the kept ones) or line it does not know
    o = origin_of(["convolution"], nodes)
    assert o.lines == [] and o.missing == nodes["convolution"][source_store.LOST]
    assert o.modules == ["b0.conv"]


@pytest.mark.parametrize(
    "change,why",
    [
        (lambda now: now.pop("y_1"), "its dynamo node y_1 is not in this compile's graph"),
        (lambda now: now["y"].update(op="call_function:linear"),
         "its dynamo node y is call_function:linear now, call_function:conv2d when cached"),
        (lambda now: now["y"].pop("frame"), "its dynamo nodes (y, y_1) are at 2 lines in this compile"),
    ],
)
def test_names_that_are_gone_or_other_ops_are_never_guessed(change, why):
    now = shifted(THEN, B, 3)
    change(now)
    nodes = source_store.carry_over(STORED, now)["nodes"]
    assert nodes["convolution"][source_store.LOST].endswith(why)
    assert nodes["relu"]["frame"] == frame(B, 14, "return torch.relu(y)")


def test_one_op_spelled_another_way_still_carries_its_line():
    """A cache another model file filled with ``x.sin() * 2`` (``call_method:sin``) serves
    ``torch.sin(x) * 2`` (``call_function:_VariableFunctionsClass.sin``): one post-grad graph,
    one op, so the line is this file's (it was lost: "sin is call_function:... now")."""
    then = {"sin": {"op": "call_method:sin", "frame": frame(A, 6, "return x.sin() * 2")},
            "mul": {"op": "call_function:mul", "frame": frame(A, 6, "return x.sin() * 2")}}
    now = {"sin": {"op": "call_function:_VariableFunctionsClass.sin", "frame": frame(B, 3, "return torch.sin(x) * 2")},
           "mul": {"op": "call_function:mul", "frame": frame(B, 3, "return torch.sin(x) * 2")}}
    stored = {"nodes": {"sin": {"op": "aten.sin.default", "frame": then["sin"]["frame"]}}, "ops": [], "dynamo": then}
    assert source_store.carry_over(stored, now)["nodes"]["sin"]["frame"] == now["sin"]["frame"]
    assert source_store.op_stem("call_function:_VariableFunctionsClass.sin") == source_store.op_stem("call_method:sin")
    assert source_store.op_stem("call_function:linear") != source_store.op_stem("call_function:conv2d")


def test_an_unknown_module_is_dropped_not_made_top_level():
    now = json.loads(json.dumps(THEN))
    now["y"]["module"] = ["L['self'].x", "Conv2d"]
    now["y_1"]["module"] = ["L['self'].x", "Conv2d"]
    stored = json.loads(json.dumps(STORED))
    stored["nodes"]["convolution"]["module"] = ["L['self'].gone", "Conv2d"]  # no dynamo node had it
    nodes = source_store.carry_over(stored, now)["nodes"]
    assert "module" not in nodes["convolution"] and source_store.MODULE_LOST in nodes["convolution"]
    assert nodes["convolution_1"]["module"] == ["L['self'].x", "Conv2d"]
    o = origin_of(["convolution"], nodes)
    assert [ln.line for ln in o.lines] == [10] and o.modules == []  # not "" (the model itself)
    # a node that never had a module is still the model's own code
    assert origin_of(["relu"], nodes).modules == [""]


def renamed(then: dict, names: list[str]) -> dict:
    """``then`` with its nodes named ``names`` in order: the model's variables named otherwise."""
    return dict(zip(names, json.loads(json.dumps(list(then.values()))), strict=True))


def test_renamed_nodes_of_the_same_ops_in_the_same_order_carry_by_position():
    """Another file with the same graph, its variables named otherwise (``h``, ``h_1``, ``out``
    where the cached compile had ``y``, ``y_1``, ``relu``): the nodes pair by position."""
    now = renamed(shifted(THEN, B, 2), ["h", "h_1", "out"])
    now["h"]["module"] = ["L['self'].first.conv", "Conv2d"]
    got = source_store.carry_over(STORED, now)
    nodes = got["nodes"]
    assert nodes["convolution"]["frame"] == frame(B, 12, "y = self.conv(x)")
    assert nodes["convolution"]["module"] == ["L['self'].first.conv", "Conv2d"]
    assert nodes["relu"]["frame"] == frame(B, 13, "return torch.relu(y)")
    assert got["carried"] == {"nodes": 4, "lost": 0, "by": "position"}


@pytest.mark.parametrize("names_ops", [
    [("h", CONV), ("h_1", CONV)],  # a node fewer
    [("h", CONV), ("h_1", RELU), ("out", CONV)],  # the same ops in another order
])
def test_renamed_nodes_of_other_ops_or_order_are_not_paired(names_ops):
    now = {n: dyn(op, frame(B, 5, "z = f(x)")) for n, op in names_ops}
    got = source_store.carry_over(STORED, now)
    assert got["carried"] == {"nodes": 4, "lost": 3}
    assert got["nodes"]["relu"][source_store.LOST].endswith(
        "its dynamo node relu is not in this compile's graph")


def test_a_node_whose_module_was_lost_says_so_rather_than_no_stack_trace():
    """A cached module of torch's own modules (no line to carry) whose module path is not in
    this compile: the row says why, not that its nodes carry no stack trace."""
    stored = {"nodes": {"addmm": {"op": "aten.addmm.default", "module": ["L['fn'].0", "Linear"]}},
              "ops": [], "dynamo": {"input_1": dyn("call_module:0", None, "L['fn'].0")}}
    now = {"linear": dyn("call_function:linear", frame(B, 9, "return self.a(x).relu()"), "L['self'].a")}
    nodes = source_store.carry_over(stored, now)["nodes"]
    o = origin_of(["addmm"], nodes)
    assert o.lines == [] and o.modules == []
    assert o.missing == ("the cached module's module path L['fn'].0 is not known in this compile: "
                         "its dynamo node input_1 is not in this compile's graph")


# -- the store's files -------------------------------------------------------------------------


def test_save_and_load_round_trip(tmp_path):
    key = source_store.text_key("def call(args):\n    pass\n")
    assert len(key) == 64
    assert source_store.save(tmp_path, key, STORED)
    assert os.listdir(tmp_path / source_store.STORE_DIR) == [f"{key}.json"]  # no temporary left
    assert source_store.load(tmp_path, key) == {"version": source_store.STORE_VERSION, **STORED}
    assert source_store.load(tmp_path, "0" * 64) is None


def test_a_record_of_another_version_or_torn_is_not_read(tmp_path):
    key = "ab" * 32
    path = source_store.store_path(tmp_path, key)
    path.parent.mkdir()
    path.write_text(json.dumps({"version": source_store.STORE_VERSION + 1, **STORED}))
    assert source_store.load(tmp_path, key) is None
    path.write_text(json.dumps({"version": source_store.STORE_VERSION, **STORED})[:-20])
    assert source_store.load(tmp_path, key) is None


def test_an_unwritable_store_is_no_error(tmp_path):
    (tmp_path / source_store.STORE_DIR).write_text("a file where the directory should be")
    assert source_store.save(tmp_path, "cd" * 32, STORED) is False


# -- the recorded attr_net lowering, carried to a copy of the model 5 lines further down --------

RECORDED = FIXTURES / "attribution" / "torch-2.13"
MODEL = FIXTURES / "models" / "attr_net.py"
REL = "tests/fixtures/models/attr_net.py"  # as the recorded frames name it
COPY = "/elsewhere/attr_net_copy.py"


def _line(text: str) -> int:
    return next(i for i, ln in enumerate(MODEL.read_text().splitlines(), 1) if text in ln)


def attr_net_dynamo(file: str, shift: int) -> dict:
    """attr_net's dynamo graph (node names as dynamo 2.13 gives them) with its lines at
    ``shift`` lines below the model file's, in ``file``."""
    def at(code: str) -> list:
        return [file, _line(code) + shift, "forward", code]

    out = {"x": dyn("call_function:conv2d", at("x = self.stem(x)"), "L['self'].stem"),
           "x_1": dyn("call_method:mean", at("x = x.mean((2, 3))")),
           "linear": dyn("call_function:linear", at("return self.head(x)"), "L['self'].head")}
    for b, (y, add, bn, relu, y2, inp) in enumerate(
            [("y", "add_", "batch_norm", "y_1", "y_2", "input_1"),
             ("y_3", "add__1", "batch_norm_1", "y_4", "y_5", "input_2")]):
        p = f"L['self'].blocks.{b}"
        out[y] = dyn("call_function:conv2d", at("y = self.conv1(x)"), f"{p}.conv1")
        out[add] = dyn("call_method:add_", at("y = torch.relu(self.bn(y))"), f"{p}.bn")
        out[bn] = dyn("call_function:batch_norm", at("y = torch.relu(self.bn(y))"), f"{p}.bn")
        out[relu] = dyn("call_function:relu", at("y = torch.relu(self.bn(y))"), p)
        out[y2] = dyn("call_function:conv2d", at("y = self.conv2(y)"), f"{p}.conv2")
        out[inp] = dyn("call_function:add", at("return x + y"), p)
    return out


@pytest.mark.parametrize("gid", ["0-forward", "0-backward"])
def test_a_recorded_lowering_carried_to_a_shifted_copy(gid):
    gdir = RECORDED / gid
    stored = {**load_record(gdir / "sources.json"), "dynamo": attr_net_dynamo(REL, 0)}
    record = source_store.carry_over(stored, attr_net_dynamo(COPY, 5))
    assert record["carried"]["lost"] == 0
    module = read_module(gdir / "module.py")
    trace = load_trace(gdir / "trace.json.gz")
    g = analyze_graph(trace, module, GraphResult(id=gid, role=gid.split("-")[1], device="cpu"))
    attribute(g, trace, module, (gdir / "module.py").read_text(), record)
    assert g.attribution is None
    files = {ln.file for grp in by_line(units([g])) for ln in grp.lines}
    assert files == {COPY}
    conv2 = _line("y = self.conv2(y)") + 5
    at = [s for s in g.sites if [ln.line for ln in s.origin.lines] == [conv2]]
    assert sorted(m for s in at for m in s.origin.modules) == ["blocks.0.conv2", "blocks.1.conv2"]
    assert {ln.code for s in at for ln in s.origin.lines} == {"y = self.conv2(y)"}


# -- a checkpointed region: its lines live in the subgraph the higher-order op runs -------------

CHECKPOINTED = '''
import torch
from torch.utils.checkpoint import checkpoint


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.fc(x))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = Layer()

    def forward(self, x):
        return checkpoint(self.layer, x, use_reentrant=False) * 2
'''


def test_a_checkpointed_regions_lines_are_kept_with_dynamos_nodes(tmp_path):
    """Dynamo puts a checkpointed region into a subgraph (``wrap_body_0``) that the
    ``tag_activation_checkpoint`` op runs: a record without its nodes could carry none of the
    region's lines to a compile that hit the cache (every kernel of a checkpointed model was
    "(no module)" on the second run). Dynamo's real graph, captured without Inductor."""
    torch = pytest.importorskip("torch")
    from inductor_bench.runner.dynamo_graphs import dynamo_nodes

    path = tmp_path / "ckpt_net.py"
    path.write_text(CHECKPOINTED)
    ns: dict = {"__name__": "ckpt_net", "__file__": str(path)}
    exec(compile(CHECKPOINTED, str(path), "exec"), ns)
    graphs = []

    def keep(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    torch.compile(ns["Net"](), backend=keep)(torch.randn(2, 8, requires_grad=True))
    nodes = dynamo_nodes(graphs[0])
    inner = {n: r for n, r in nodes.items() if "/" in n}
    line = CHECKPOINTED.splitlines().index("        return torch.relu(self.fc(x))") + 1
    assert inner and all(n.startswith("wrap_body_0/") for n in inner)
    assert {r["frame"][1] for r in inner.values() if "frame" in r} == {line}
    assert any(r.get("module", [""])[0].endswith("layer.fc") for r in inner.values())
    # carried through those names, the region's line reaches a compile whose file moved
    moved = {n: ({**r, "frame": [str(path), r["frame"][1] + 3, *r["frame"][2:]]} if "frame" in r else r)
             for n, r in nodes.items()}
    region = next(r for r in inner.values() if "frame" in r)  # its line, and the lines calling it
    assert [f[3] for f in region[source_store.CALLERS]] == ["return checkpoint(self.layer, x, use_reentrant=False) * 2"]
    relu = {"op": "aten.relu.default", **{k: region[k] for k in ("frame", source_store.CALLERS)}}
    stored = {"nodes": {"relu": relu}, "ops": [], "dynamo": nodes}
    carried = source_store.carry_over(stored, moved)
    assert carried["nodes"]["relu"]["frame"][1] == line + 3 and carried["carried"]["lost"] == 0
    assert carried["nodes"]["relu"][source_store.CALLERS] == region[source_store.CALLERS]
