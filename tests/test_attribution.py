"""Source attribution on recorded runs of ``tests/fixtures/models/attr_net.py`` (training, CPU)
with torch 2.13 and torch 2.5 (``tests/fixtures/attribution/``): kernels and extern calls to
FX nodes, model source lines and module paths, forward and backward; extern ops split by call
site; the views by line and by module; the v2 record round trip."""

from __future__ import annotations

import gzip
import json

import pytest

from inductor_bench.core.attribution import NO_RECORD, attribute
from inductor_bench.core.breakdown import analyze_graph
from inductor_bench.core.callsites import buffer_of, parse_calls, split_args
from inductor_bench.core.modparse import read_module
from inductor_bench.core.results import BreakdownResult, GraphResult
from inductor_bench.core.source_store import load_record
from inductor_bench.core.sources import module_path
from inductor_bench.core.trace import load_trace
from inductor_bench.core.views import by_line, by_module, units
from inductor_bench.core.weight_copies import INPUT_COPIES

from .conftest import FIXTURES
from .steady_rule import kept_profiled

RECORDED = FIXTURES / "attribution"
VERSIONS = ["torch-2.13", "torch-2.5"]
MODEL = FIXTURES / "models" / "attr_net.py"


def line_of(text: str) -> int:
    """The line number of the model file's line holding ``text`` (found independently)."""
    hits = [i for i, ln in enumerate(MODEL.read_text().splitlines(), 1) if text in ln]
    assert len(hits) == 1, text
    return hits[0]


CONV1, CONV2, STEM, HEAD = (line_of(t) for t in ("self.conv1(x)", "self.conv2(y)", "self.stem(x)", "self.head(x)"))


def analysed(version: str, gid: str, *, record: bool = True) -> GraphResult:
    gdir = RECORDED / version / gid
    module = read_module(gdir / "module.py")
    trace = load_trace(gdir / "trace.json.gz")
    g = analyze_graph(trace, module, GraphResult(id=gid, role=gid.split("-")[1], device="cpu"))
    rec = load_record(gdir / "sources.json") if record else None
    return attribute(g, trace, module, (gdir / "module.py").read_text(), rec)


def raw_events(version: str, gid: str, name: str) -> list[list[float]]:
    """Durations (µs) of top-level ``name`` events per iteration marker, read straight from
    the trace file (independent of the analysis)."""
    with gzip.open(RECORDED / version / gid / "trace.json.gz") as f:
        doc = json.loads(f.read())
    evs = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    marks = [e for e in evs if e["name"] == "inductor_bench::iteration" and e.get("cat") == "user_annotation"]
    marks.sort(key=lambda e: e["ts"])
    out = []
    for m in marks:
        inside = sorted((e for e in evs if e.get("cat") == "cpu_op" and e["tid"] == m["tid"]
                         and m["ts"] <= e["ts"] < m["ts"] + m["dur"]), key=lambda e: e["ts"])
        out.append([e["dur"] for e in inside if e["name"] == name])
    return out


def steady_iterations(version: str, gid: str, g: GraphResult) -> list[int]:
    """The iterations the statistics policy keeps, by its rule written out in the tests
    (``steady_rule.py``) on the marker durations read straight from the trace."""
    with gzip.open(RECORDED / version / gid / "trace.json.gz") as f:
        doc = json.loads(f.read())
    walls = [e["dur"] for e in sorted((e for e in doc["traceEvents"] if e.get("ph") == "X"
             and e["name"] == "inductor_bench::iteration" and e.get("cat") == "user_annotation"),
             key=lambda e: e["ts"])]
    idle = [w - b for w, b in zip(g.wall_samples_ms, g.busy_samples_ms, strict=True)]
    return kept_profiled([w / 1000 for w in walls], [k.samples_ms for k in g.kernels] + [idle])


@pytest.fixture(scope="module", params=VERSIONS)
def graphs(request) -> dict[str, GraphResult]:
    return {gid: analysed(request.param, gid) for gid in ("0-forward", "0-backward")}


def sites_at(g: GraphResult, line: int) -> list:
    return [s for s in g.sites if s.origin and [ln.line for ln in s.origin.lines] == [line]]


def test_a_conv_line_maps_to_its_convolutions_forward_and_backward(graphs):
    fwd, bwd = graphs["0-forward"], graphs["0-backward"]
    # two Blocks: `y = self.conv2(y)` is two 1x1 convolutions, and two convolution backwards
    f = sites_at(fwd, CONV2)
    assert [s.kernel for s in f] == ["aten::convolution"] * 2
    assert sorted(m for s in f for m in s.origin.modules) == ["blocks.0.conv2", "blocks.1.conv2"]
    assert all(s.shapes[1] == "8x8x1x1" for s in f)  # the 1x1 weight
    b = sites_at(bwd, CONV2)
    assert [s.kernel for s in b] == ["aten::convolution_backward"] * 2
    assert sorted(m for s in b for m in s.origin.modules) == ["blocks.0.conv2", "blocks.1.conv2"]
    assert all(s.origin.lines[0].code == "y = self.conv2(y)" for s in f + b)
    # the stem: one convolution forward, one backward; the head: addmm forward, two mm backward
    assert [s.origin.modules for s in sites_at(fwd, STEM)] == [["stem"]]
    assert [s.origin.modules for s in sites_at(bwd, STEM)] == [["stem"]]
    assert [s.kernel for s in sites_at(fwd, HEAD)] == ["aten::addmm"]
    assert [s.kernel for s in sites_at(bwd, HEAD)] == ["aten::mm", "aten::mm"]


def test_every_extern_call_names_its_module_and_line(graphs):
    for g in graphs.values():
        externs = [k for k in g.kernels if k.name.startswith("aten::")]
        assert externs and all(k.name in {s.kernel for s in g.sites} for k in externs)
        for s in g.sites:
            assert s.origin.lines and s.origin.modules and all(s.origin.modules), s
        # torch 2.5's records predate strides, read back from the module: two convolution
        # backwards take buf4[0], an item of the previous one's result, whose strides it never states
        assert g.attribution is None or (g.id == "0-backward" and g.attribution.startswith(
            "input strides unknown for 2 of 7 extern calls"))


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("gid,op,calls", [("0-forward", "aten::convolution", 5), ("0-backward", "aten::convolution_backward", 5)])
def test_call_sites_split_the_op_row_exactly(version, gid, op, calls):
    g = analysed(version, gid)
    raw = raw_events(version, gid, op)
    assert {len(r) for r in raw} == {calls}
    mine = sorted((s for s in g.sites if s.kernel == op), key=lambda s: s.index)
    assert len(mine) == calls
    # the j-th event of every iteration is the j-th call site
    for j, s in enumerate(mine):
        assert s.samples_ms == pytest.approx([r[j] / 1000 for r in raw], rel=1e-12)
    row = next(k for k in g.kernels if k.name == op)
    assert sum(s.ms for s in mine) == pytest.approx(row.ms, rel=1e-12)
    kept = steady_iterations(version, gid, g)  # the row is the mean over the steady iterations
    assert row.ms == pytest.approx(sum(sum(raw[i]) for i in kept) / 1000 / len(kept), rel=1e-12)


def test_generated_kernels_map_to_their_lines(graphs):
    fwd, bwd = graphs["0-forward"], graphs["0-backward"]
    relu = line_of("torch.relu(self.bn(y))")
    bn_fwd = [k for k in fwd.kernels if k.name.startswith("cpp_") and k.origin.lines
              and relu in [ln.line for ln in k.origin.lines]]
    assert bn_fwd and all("batch_norm" in k.name or "add" in k.name for k in bn_fwd)
    # batch norm backward is a backward kernel at the forward line it differentiates
    bn_bwd = [k for k in bwd.kernels if "native_batch_norm_backward" in k.name]
    assert bn_bwd and all(relu in [ln.line for ln in k.origin.lines] for k in bn_bwd)
    # the layout copy of graph inputs has no line, and says why: the model's input (6.1 kB) beside
    # three weights (5.5 kB; tests/test_input_copies.py)
    copies = [k for k in fwd.kernels if k.origin and not k.origin.nodes]
    assert copies and all(k.origin.missing == INPUT_COPIES for k in copies)


def test_views_add_up_to_kernel_time(graphs):
    gs = list(graphs.values())
    total = sum(g.kernel_ms for g in gs)
    us = units(gs)
    assert sum(u.ms for u in us) == pytest.approx(total, rel=1e-12)
    for groups in (by_line(us), by_module(us), by_module(us, 1)):
        assert sum(grp.ms for grp in groups) == pytest.approx(total, rel=1e-12)
        assert sum(len(grp.units) for grp in groups) == len(us)
    # a line group never splits a kernel: each unit is in exactly one group
    line = {grp.key: grp for grp in by_line(us)}
    key = next(k for k in line if k and k[0].endswith(f"attr_net.py:{CONV2}") and len(k) == 1)
    conv2 = line[key]
    assert {u.kernel.name for u in conv2.units} >= {"aten::convolution", "aten::convolution_backward"}
    assert conv2.backward_ms > 0 and conv2.forward_ms > 0
    depth1 = {grp.key for grp in by_module(us, 1)}
    assert ("blocks",) in depth1 and ("stem",) in depth1 and ("head",) in depth1


REUSED = {  # torch 2.13 wrote one kernel for the same code in both Blocks, called twice
    "0-forward": "cpp_fused__native_batch_norm_legit_functional_copy__relu_1",
    "0-backward": "cpp_fused_convolution_backward_native_batch_norm_backward_threshold_backward_1",
}


@pytest.mark.parametrize("gid", ["0-forward", "0-backward"])
def test_a_kernel_called_in_each_block_is_split_by_call(gid):
    """The j-th event of the kernel in every iteration is its j-th call in call(): each call
    gets its own Block's module and its own time; the calls add up to the kernel's row; the
    ranking of kernels keeps the kernel as one row, the module view puts each call in its Block."""
    g = analysed("torch-2.13", gid)
    name = REUSED[gid]
    raw = raw_events("torch-2.13", gid, f"graph_0_{name}")
    assert {len(r) for r in raw} == {2}
    calls = [s for s in g.sites if s.kernel == name]
    assert [(s.occurrence, s.index, s.extern) for s in calls] == [(0, -1, False), (1, -1, False)]
    for j, s in enumerate(calls):
        assert s.samples_ms == pytest.approx([r[j] / 1000 for r in raw], rel=1e-12)
    blocks = [sorted({".".join(m.split(".")[:2]) for m in s.origin.modules}) for s in calls]
    # the backward runs the Blocks in reverse; its second call also reads the zero of
    # ``where(x <= 0, 0, grad)`` that blocks.1's ReLU made (``full_default``, one node shared by
    # both calls), which places neither call: each is its own Block's
    assert blocks == ([["blocks.0"], ["blocks.1"]] if gid == "0-forward" else [["blocks.1"], ["blocks.0"]])
    if gid == "0-backward":
        assert "full_default" in calls[1].origin.nodes
    row = next(k for k in g.kernels if k.name == name)
    assert sum(s.ms for s in calls) == pytest.approx(row.ms, rel=1e-12)
    assert sorted({m for s in calls for m in s.origin.modules}) == sorted(row.origin.modules)
    assert [u.kernel.name for u in units([g])].count(name) == 1
    split = units([g], kernel_calls=True)
    assert [u.site_mark for u in split if u.kernel.name == name] == [" @0", " @1"]
    groups = {grp.key: grp for grp in by_module(split, 2)}
    for key in blocks:
        assert [u.site.occurrence for u in groups[tuple(key)].units if u.kernel.name == name] == [blocks.index(key)]
    assert sum(u.ms for u in split) == pytest.approx(g.kernel_ms, rel=1e-12)


def test_a_kernel_with_other_event_counts_keeps_one_row(monkeypatch):
    """Split exactly or not at all: where iterations hold another number of the kernel's
    events than call() has calls of it, the kernel keeps one row and the graph says why."""
    import inductor_bench.core.attribution as attribution

    real = attribution.cpu_kernel_events

    def one_fewer(trace, markers):  # the kernel's second event gone from the first iteration
        per_iter = real(trace, markers)
        first = [ie for ie in per_iter[0]]
        mine = [j for j, (_, ev) in enumerate(first) if ev.name.endswith(REUSED["0-forward"])]
        del first[mine[1]]
        return [first, *per_iter[1:]]

    monkeypatch.setattr(attribution, "cpu_kernel_events", one_fewer)
    g = analysed("torch-2.13", "0-forward")
    assert not [s for s in g.sites if not s.extern]
    assert f"{REUSED['0-forward']}: 1/2 events per iteration for 2 calls, not split by call site" in g.attribution


def test_without_a_record_the_graph_says_why():
    g = analysed("torch-2.13", "0-forward", record=False)
    assert g.attribution == NO_RECORD and not g.sites
    assert all(k.origin is None for k in g.kernels)
    assert {u.origin for u in units([g])} == {None}
    (grp,) = by_line(units([g]))
    assert grp.missing == NO_RECORD


def test_calls_and_their_written_buffers():
    gdir = RECORDED / "torch-2.13" / "0-forward"
    text = (gdir / "module.py").read_text()
    calls = parse_calls(text, read_module(gdir / "module.py"))
    externs = [c for c in calls if c.extern]
    assert [c.index for c in externs] == list(range(len(externs))) == list(range(6))
    # every call writes scheduler buffers, or graph inputs it mutates (batch norm's running stats)
    assert all(c.written and all(w.startswith(("buf", "primals_")) for w in c.written) for c in calls)
    assert split_args("a, f(b, c), out=buf3)") == ["a", "f(b, c)", "out=buf3"]
    assert buffer_of("reinterpret_tensor(buf7, (2, 8), (8, 1), 0)") == "buf7"
    assert buffer_of("c_void_p(buf2.data_ptr())") == "buf2"
    assert buffer_of("1024") is None


@pytest.mark.parametrize(
    "raw,path",
    [
        ("L['self'].features.denseblock3.denselayer12.conv2", "features.denseblock3.denselayer12.conv2"),
        ("L['self']._modules['features']._modules['0']", "features.0"),
        ("getattr(L['self'].layers, '0').attn", "layers.0.attn"),
        ("L['self'].layers[0].mlp", "layers.0.mlp"),
        ("L['self']", ""),
        # a method compiled through a decorator's wrapper(*args, **kwargs): args[0] is the module
        # (transformers' LlamaForCausalLM.forward under @deprecate_kwarg, recorded with torch 2.14.1)
        ("L['args'][0].model.layers.0.self_attn", "model.layers.0.self_attn"),
        ("L['args'][0]", ""),
        ("L['mods'][0].fc", "0.fc"),  # a list of modules passed as an argument keeps its index
        # a module reached through its __dict__, as Dynamo names it through a decorated forward
        # (diffusers 0.42's UNet2DConditionModel under @apply_lora_scale, recorded with torch 2.13.0)
        ("L['self'].__dict__['_modules']['up_blocks'].1.attentions.1.__dict__['_modules']"
         "['transformer_blocks'].0.attn1", "up_blocks.1.attentions.1.transformer_blocks.0.attn1"),
        ("L['self'].__dict__['_modules']['conv_in']", "conv_in"),
        # a module a script holds in a global and calls in a compiled function: the global's name
        # (as torch 2.13.0 and 2.15.0 name it, and 2.5.1)
        ("G['model'].3", "model.3"),
        ("G['model']._modules['0']", "model.0"),
        ("G['model']", "model"),
        ("getattr(G['net'].layers, '0').fc", "net.layers.0.fc"),
        # a name holding both quotes, as its repr quotes it (synthetic: Dynamo's getattr form)
        ("getattr(L['self'].blocks, 'fc<1>&\"q\\'|s*_u_').inner", 'blocks.fc<1>&"q\'|s*_u_.inner'),
        ("getattr(L['self'], \"it's\")", "it's"),
    ],
)
def test_module_path(raw, path):
    assert module_path(raw) == path


def test_v2_record_round_trips():
    gs = [analysed("torch-2.13", gid) for gid in ("0-forward", "0-backward")]
    r = BreakdownResult(model="attr_net", graphs=gs, train=True)
    back = BreakdownResult.from_dict(json.loads(r.to_json()))
    assert back.schema_version == 4
    for a, b in zip(r.graphs, back.graphs, strict=True):
        assert a.sites == b.sites
        assert [k.origin for k in a.kernels] == [k.origin for k in b.kernels]
    assert back.to_json() == r.to_json()


# -- a device timeline (the synthetic CUDA module and trace, with a hand-written record) ----------

SYNTHETIC = FIXTURES / "synthetic_cuda_transformer"


def _frame(line: int, code: str) -> list:
    return ["/m/model.py", line, "forward", code]


CUDA_RECORD = {
    "nodes": {
        "ln": {"op": "aten.native_layer_norm.default", "frame": _frame(10, "h = self.ln(x)"), "module": ["L['self'].ln", "LayerNorm"]},
        "mm": {"op": "aten.mm.default", "frame": _frame(11, "h = self.fc1(h)"), "module": ["L['self'].fc1", "Linear"]},
        "gelu": {"op": "aten.gelu.default", "frame": _frame(12, "h = gelu(h)")},
        "gelu_1": {"op": "aten.gelu.default", "frame": _frame(15, "y = gelu(y)")},
        "sdpa": {"op": "aten._scaled_dot_product_flash_attention.default", "frame": _frame(13, "a = sdpa(q, k, v)")},
    },
    "ops": [
        {"written": ["buf1", "buf2"], "origins": ["ln"]},
        {"written": ["buf3"], "origins": ["mm"], "extern": "extern_kernels.mm", "nodes": ["mm"], "shapes": ["8x128"],
         "strides": [""]},
        {"written": ["buf5"], "origins": ["gelu"]},
        {"written": ["buf6"], "origins": ["sdpa"], "extern": "torch.ops.aten._scaled_dot_product_flash_attention.default",
         "nodes": ["sdpa"], "strides": []},
        {"written": ["buf11"], "origins": ["gelu_1"]},
    ],
}


def test_device_timeline_kernels_get_their_launching_calls_lines():
    module = read_module(SYNTHETIC / "module.py")
    trace = load_trace(SYNTHETIC / "trace.json")
    g = analyze_graph(trace, module, GraphResult(id="0-forward", role="forward", device="cuda"))
    attribute(g, trace, module, (SYNTHETIC / "module.py").read_text(), CUDA_RECORD)
    k = {x.name: x for x in g.kernels}
    assert g.attribution == "extern kernels are not split by call site on a device timeline"
    # one kernel called at two places: its row has both lines; each call, by the order of the
    # kernel's device events in each iteration, has its own line and time
    assert [ln.line for ln in k["triton_poi_fused_gelu_2"].origin.lines] == [12, 15]
    calls = [s for s in g.sites if s.kernel == "triton_poi_fused_gelu_2"]
    assert [(s.occurrence, [ln.line for ln in s.origin.lines]) for s in calls] == [(0, [12]), (1, [15])]
    assert [s.kernel for s in g.sites] == ["triton_poi_fused_gelu_2"] * 2
    assert sum(s.ms for s in calls) == pytest.approx(k["triton_poi_fused_gelu_2"].ms, rel=1e-12)
    assert k["triton_per_fused_native_layer_norm_0"].origin.modules == ["ln"]
    gemm = next(x for x in g.kernels if x.launched_by == "aten::mm")
    assert [ln.line for ln in gemm.origin.lines] == [11] and gemm.origin.modules == ["fc1"]
    # the conv call has no operation in the record: it says so
    conv = next(x for x in g.kernels if x.category == "extern_conv")
    assert conv.origin.missing and not conv.origin.lines


# The lowering record of an nn.Sequential(Linear, GELU, Linear) as breakdown recorded it on CPU
# with torch 2.13.0 (2026-11-27): Dynamo kept no stack trace for any node (it keeps only frames
# outside torch, and all of this code is torch's own), but every node's module.
SEQUENTIAL_NODES = {
    "addmm": {"op": "aten.addmm.default", "module": ["L['fn'].0", "Linear"]},
    "mul": {"op": "aten.mul.Tensor", "module": ["L['fn'].1", "GELU"]},
    "erf": {"op": "aten.erf.default", "module": ["L['fn'].1", "GELU"]},
    "addmm_1": {"op": "aten.addmm.default", "module": ["L['fn'].2", "Linear"]},
}


def test_torch_own_modules_give_the_module_and_say_why_there_is_no_line():
    from inductor_bench.core.attribution import module_types, origin_of
    from inductor_bench.render.views import where

    gelu = origin_of(["mul", "erf"], SEQUENTIAL_NODES)
    assert gelu.lines == [] and gelu.modules == ["1"]
    assert gelu.missing == ("no line: Dynamo records none inside torch's own modules "
                            "(module 1: aten.erf.default, aten.mul.Tensor)")
    assert where(gelu) == "1 · no line"
    both = origin_of(["addmm", "addmm_1"], SEQUENTIAL_NODES)
    assert where(both) == "0, 2 · no line"
    # the kernel tables pass the graph's module classes: with no line, the class is the hint
    types = module_types(SEQUENTIAL_NODES)
    assert types == {"0": "Linear", "1": "GELU", "2": "Linear"}
    assert where(both, types=types) == "0, 2 (Linear) · no line"  # one class, named once
    assert where(origin_of(["addmm", "mul"], SEQUENTIAL_NODES), types=types) == "0 (Linear), 1 (GELU) · no line"
    from inductor_bench.core.sources import Origin, SourceLine
    lined = Origin(nodes=["addmm"], lines=[SourceLine("/m/net.py", 3)], modules=["0"])
    assert where(lined, types=types) == "0 · net.py:3"  # a line says enough: no class
    # a node with neither a line nor a module: the old reason
    bare = origin_of(["x"], {"x": {"op": "aten.copy_.default"}})
    assert where(bare) == "no source: its FX nodes carry no stack trace (aten.copy_.default)"


def test_a_kernel_of_many_lines_names_the_first_six_in_its_cell_and_counts_the_rest():
    from inductor_bench.core.sources import Origin, SourceLine
    from inductor_bench.render.views import where

    lines = [SourceLine("/t/adam.py", n) for n in (526, 414, 419, 456, 475)] + [
        SourceLine("/t/opt.py", n) for n in (9, 3, 5, 3)]  # 8 distinct lines in all
    fused = Origin(nodes=["a"], lines=lines, modules=[""])
    assert where(fused) == "(top level) · adam.py:414,419,456,475,526 + opt.py:3 +2 lines"
    assert where(Origin(nodes=["a"], lines=lines[:6], modules=[])) == "adam.py:414,419,456,475,526 + opt.py:9"


def test_a_node_made_by_an_inductor_pass_keeps_its_line_not_a_made_up_module():
    """CPU freezing fuses a convolution and its ReLU into a node whose target is a function of
    Inductor's pattern matcher: the node keeps the line but no nn.Module; it is not the model's
    top-level code. (As breakdown recorded ``y = torch.relu(self.conv(x))``, torch 2.13.0.)"""
    import functools
    import operator

    import torch

    from inductor_bench.core import source_store
    from inductor_bench.core.attribution import origin_of
    from inductor_bench.core.results import KernelStat
    from inductor_bench.core.views import Unit, by_module
    from inductor_bench.render.views import where
    from inductor_bench.runner.sources import _made_by_a_pass

    assert _made_by_a_pass(functools.partial(lambda x: x))
    assert not _made_by_a_pass(torch.ops.mkldnn._convolution_pointwise.default)
    assert not _made_by_a_pass(torch.ops.aten.relu.default)
    assert not _made_by_a_pass(operator.getitem)
    why = "made by an Inductor pass (a pattern replacement), which keeps no module path"
    frame = ["/m/cnn.py", 13, "forward", "y = torch.relu(self.conv(x))"]
    nodes = {"fn": {"op": "functools.partial(...)", "frame": frame, source_store.MODULE_LOST: why},
             "mean": {"op": "aten.mean.dim", "frame": ["/m/cnn.py", 14, "forward", "y.mean()"]}}
    fused = origin_of(["fn"], nodes)
    assert ([ln.line for ln in fused.lines], fused.modules, fused.missing) == ([13], [], why)
    assert where(fused) == "cnn.py:13"
    # a node with a line and no module otherwise is the model's own top-level code
    assert origin_of(["mean"], nodes).modules == [""]
    g = GraphResult(id="0-inference", role="inference")
    k = KernelStat(name="mkldnn::_convolution_pointwise", category="extern_conv", calls=1, ms=1.0)
    (grp,) = by_module([Unit(g, k, 1.0, 1, fused)])
    assert grp.missing == why


def test_a_fused_node_is_recorded_at_the_node_that_computes():
    """CPU freezing's lowering pattern replaces a convolution and the SiLU after it by one node
    that keeps the SiLU's meta; the ``Match`` it holds lists the matched nodes (torch 2.13.0, a
    frozen ``models/mixnet.py``: ``fn_8`` <- ``_convolution_pointwise_default_12`` (stem.0),
    ``neg``, ``exp``, ``add_2``, ``div`` (stem.2)). The record gives the fused node the
    convolution's module and line; a match of pointwise ops alone, or any other node, keeps its
    own. Synthetic FX graph, real ``Match``."""
    import functools
    from types import SimpleNamespace

    import torch
    from torch._inductor.pattern_matcher import Match

    from inductor_bench.runner.sources import snapshot

    def trace(line: int) -> str:
        return f'  File "/m/net.py", line {line}, in forward\n    y = self.act(self.conv(x))\n'

    g = torch.fx.Graph()
    x = g.placeholder("x")
    conv = g.call_function(torch.ops.mkldnn._convolution_pointwise.default, (x,))
    neg = g.call_function(torch.ops.aten.neg.default, (conv,))
    conv.meta.update(stack_trace=trace(7), nn_module_stack={"c": ("L['self'].conv", torch.nn.Conv2d)})
    neg.meta.update(stack_trace=trace(8), nn_module_stack={"a": ("L['self'].act", torch.nn.SiLU)})
    def fn(match, *args):  # as Inductor's LoweringPatternEntry wraps its handler
        return None

    for name, matched in (("fn", [conv, neg]), ("fn_1", [neg])):
        match = Match(None, None)
        match.nodes = matched
        node = g.call_function(functools.wraps(fn)(functools.partial(fn, match)), (x,))
        node.name = name
        node.meta.update(neg.meta)
    g.output(None)
    nodes = snapshot(SimpleNamespace(module=torch.fx.GraphModule({}, g), scheduler=SimpleNamespace(nodes=[])))["nodes"]
    assert (nodes["fn"]["module"], nodes["fn"]["frame"][1]) == (["L['self'].conv", "Conv2d"], 7)
    assert (nodes["fn_1"]["module"], nodes["fn_1"]["frame"][1]) == (["L['self'].act", "SiLU"], 8)
    assert nodes[neg.name]["module"] == ["L['self'].act", "SiLU"]


def test_the_module_view_names_each_modules_class():
    """A path of an nn.Sequential says little ("0", "2"): the view adds the module's class, from
    the lowering record's nodes (SEQUENTIAL_NODES above, as recorded)."""
    from inductor_bench.core.attribution import module_types, origin_of
    from inductor_bench.core.results import KernelStat
    from inductor_bench.render.breakdown import render_breakdown

    types = module_types(SEQUENTIAL_NODES)
    assert types == {"0": "Linear", "1": "GELU", "2": "Linear"}
    g = GraphResult(id="0-inference", role="inference", iterations=1, wall_ms=2.0, wall_samples_ms=[2.0],
                    module_types=types)
    for name, ms, nodes in (("aten::addmm", 1.5, ["addmm", "addmm_1"]), ("cpp_fused_gelu_0", 0.5, ["mul", "erf"])):
        g.kernels.append(KernelStat(name=name, category="extern_gemm", calls=1, ms=ms,
                                    origin=origin_of(nodes, SEQUENTIAL_NODES)))
    text = render_breakdown(BreakdownResult(model="m.py", graphs=[g]), by="module")
    assert "0 (Linear)" in text and "+ 2 (Linear)" in text and "1 (GELU)" in text


def test_a_view_cut_to_its_top_groups_counts_what_it_leaves_out_in_words():
    """Three modules in two groups (the GEMMs of 0 and 2, the GELU of 1): cut to one group, the
    view's foot reads '… 1 more group' (it read '… 1 more groups'), its 0.500 ms, 25.0%."""
    from inductor_bench.core.attribution import origin_of
    from inductor_bench.core.results import KernelStat
    from inductor_bench.render.breakdown import render_breakdown

    g = GraphResult(id="0-inference", role="inference", iterations=1, wall_ms=2.0, wall_samples_ms=[2.0])
    for name, ms, nodes in (("aten::addmm", 1.5, ["addmm", "addmm_1"]), ("cpp_fused_gelu_0", 0.5, ["mul", "erf"])):
        g.kernels.append(KernelStat(name=name, category="extern_gemm", calls=1, ms=ms,
                                    origin=origin_of(nodes, SEQUENTIAL_NODES)))
    text = render_breakdown(BreakdownResult(model="m.py", graphs=[g]), by="module", top=1)
    (foot,) = [line.split() for line in text.splitlines() if "more group" in line]
    assert foot == ["0.500", "25.0%", "…", "1", "more", "group"]


def test_module_paths_sort_by_their_numbers():
    from inductor_bench.core.sources import path_order

    paths = ["blocks.10", "blocks.2", "blocks.1.attn", "", "blocks.1", "head", "blocks.1.0"]
    assert sorted(paths, key=path_order) == ["", "blocks.1", "blocks.1.0", "blocks.1.attn", "blocks.2", "blocks.10",
                                             "head"]


def test_a_node_without_a_module_on_a_line_of_several_modules_is_not_top_level():
    """A graph pass's node (the recomputed addmm of a checkpointed layer) keeps its line but
    not its module: where other nodes ran that line in several modules it is not claimed for
    the top level; a top-level line (no module anywhere, or one) keeps the top level."""
    from inductor_bench.core.attribution import origin_of
    from inductor_bench.runner.sources import _not_top_level

    layer = ["/m/ckpt.py", 13, "forward", "return x + self.fc2(gelu(self.fc1(x)))"]
    top = ["/m/ckpt.py", 24, "forward", "x = self.stem(x) + 1"]
    nodes = {
        "addmm": {"op": "aten.addmm.default", "frame": layer, "module": ["L['self'].layers[0].fc1", "Linear"]},
        "addmm_1": {"op": "aten.addmm.default", "frame": layer, "module": ["L['self'].layers[1].fc1", "Linear"]},
        "addmm_default": {"op": "aten.addmm.default", "frame": layer},
        "conv": {"op": "aten.convolution.default", "frame": top, "module": ["L['self'].stem", "Conv2d"]},
        "add": {"op": "aten.add.Tensor", "frame": top},
    }
    _not_top_level(nodes, {})
    o = origin_of(["addmm_default"], nodes)
    assert o.modules == [] and o.missing == (
        "no module path recorded (a node a graph pass made); its line runs in 2 modules, e.g. layers.0.fc1")
    assert origin_of(["add"], nodes).modules == [""]


def test_a_line_where_dynamos_graph_runs_top_level_code_keeps_the_top_level():
    """``x = self.norm(nn.functional.gelu(self.fc1(x)))`` in ``forward`` (a frozen
    ``models/mlp.py``, torch 2.13.0): the GELU's nodes have no module on a line that ran in two
    (fc1, norm), but Dynamo's own graph has the ``gelu`` there in no module: it is the model's
    top-level code. A node in no module inside a checkpointed region's subgraph
    (``wrap_body_0/...``) is not top-level code of that line. Synthetic nodes."""
    from inductor_bench.core.attribution import origin_of
    from inductor_bench.runner.sources import _not_top_level, top_level_lines

    line = ["/m/mlp.py", 20, "forward", "x = self.norm(nn.functional.gelu(self.fc1(x)))"]
    ckpt = ["/m/ckpt.py", 14, "forward", "return x + self.fc2(torch.relu(self.fc1(x)))"]

    def post_grad():
        return {
            "linear": {"op": "mkl._mkl_linear", "frame": line, "module": ["L['self'].fc1", "Linear"]},
            "erf": {"op": "aten.erf.default", "frame": line},
            "var_mean": {"op": "aten.var_mean.correction", "frame": line, "module": ["L['self'].norm", "LayerNorm"]},
            "addmm": {"op": "aten.addmm.default", "frame": ckpt, "module": ["L['self'].blocks.0.fc1", "Linear"]},
            "addmm_1": {"op": "aten.addmm.default", "frame": ckpt, "module": ["L['self'].blocks.1.fc1", "Linear"]},
            "addmm_default": {"op": "aten.addmm.default", "frame": ckpt},
            "mm": {"op": "aten.mm.default", "frame": fn, "module": ["L['self'].head", "Linear"]},
            "relu": {"op": "aten.relu.default", "frame": fn},
        }

    fn = ["/m/ckpt.py", 30, "f", "return torch.relu(self.head(t))"]  # checkpoint(f, x) of a function
    dynamo = {"l__self___fc1": {"op": "call_function:linear", "frame": line, "module": ["L['self'].fc1", "Linear"]},
              "gelu": {"op": "call_function:gelu", "frame": line},
              "wrap_body_0/add": {"op": "call_function:add", "frame": ckpt},
              "wrap_body_1/linear": {"op": "call_function:linear", "frame": fn},
              "wrap_body_1/relu": {"op": "call_function:relu", "frame": fn}}
    assert top_level_lines(dynamo) == {("/m/mlp.py", 20): True}
    nodes = post_grad()
    _not_top_level(nodes, top_level_lines(dynamo))
    assert origin_of(["erf"], nodes).modules == [""]
    assert origin_of(["relu"], nodes).modules == [""]  # a line only a subgraph shows: one module is not enough
    assert origin_of(["addmm_default"], nodes).missing.startswith("no module path recorded")
    nodes = post_grad()  # no Dynamo graph known: the line of two modules decides alone
    _not_top_level(nodes, {})
    assert origin_of(["erf"], nodes).missing.startswith("no module path recorded")


def test_a_pass_made_extern_call_takes_the_one_module_its_operands_ran_in():
    """Recorded (torch 2.13.0, CPU, 2026-11-28): two checkpointed blocks ``x + fc2(relu(fc1(x)))``
    trained; the backward's ``addmm(tangents_1, buf5, primals_6)`` (block 1's fc1 input
    gradient plus the residual's) is a node a pass made, ``addmm_default``, with no module.
    Its operation was lowered from the weight's permutes of block 1's fc1 too: that is its
    module. Operands of two modules leave it unknown, with its reason."""
    from inductor_bench.core.attribution import module_from_operands, origin_of
    from inductor_bench.runner.sources import _not_top_level

    line = ["/tmp/walk3/ckpt.py", 14, "forward", "return x + self.fc2(torch.relu(self.fc1(x)))"]
    nodes = {
        "permute_2": {"op": "aten.permute.default", "frame": line, "module": ["L['self'].blocks.1.fc1", "Linear"]},
        "permute_8": {"op": "aten.permute.default", "frame": line, "module": ["L['self'].blocks.1.fc1", "Linear"]},
        "permute_1": {"op": "aten.permute.default", "frame": line, "module": ["L['self'].blocks.0.fc2", "Linear"]},
        "addmm_default": {"op": "aten.addmm.default", "frame": line},
    }
    _not_top_level(nodes, {})
    own = origin_of(["addmm_default"], nodes)
    assert own.modules == [] and own.missing.startswith("no module path recorded")
    o = module_from_operands(own, ["permute_2", "permute_8", "addmm_default"], nodes)
    assert o.modules == ["blocks.1.fc1"] and o.missing is None and o.lines == own.lines
    assert module_from_operands(own, ["permute_2", "permute_1", "addmm_default"], nodes) == own
    assert module_from_operands(own, ["addmm_default"], nodes) == own


def test_a_tied_embeddings_weight_gradient_gemm_is_the_lm_heads():
    """Recorded (HF transformers 5.24.0 GPT-2, 2 layers, its ``lm_head`` weight tied to
    ``wte``'s; torch 2.13.0, CPU, 2026-11-29, ``breakdown --train``): the backward's
    ``addmm(embedding_grad, x.T, dlogits)`` is a node a pass made, ``addmm_default``, holding
    the ``add`` of the two gradients' line (``self.wte(input_ids)``) and no module. It was
    reported as top-level code of the embedding's line (its 0.98 ms: one of the step's largest GEMM
    calls). Dynamo's graph runs no top-level code on that line, so the node is a pass's, and
    its GEMM's operands (lm_head's) give it ``gpt.lm_head`` and both lines, its own line (the
    embedding gradient it adds) ``gpt.transformer.wte``. Without Dynamo's
    graph a line of one module keeps the top level (``y = torch.relu(self.conv(x))``)."""
    from inductor_bench.core.attribution import module_from_operands, origin_of
    from inductor_bench.runner.sources import _not_top_level, top_level_lines

    hf = "/site-packages/transformers/models/gpt2/modeling_gpt2.py"
    wte = [hf, 569, "forward", "inputs_embeds = self.wte(input_ids)"]
    head = [hf, 698, "forward", "logits = self.lm_head(hidden_states)"]

    def post_grad():
        return {
            "view_42": {"op": "aten.reshape.default", "frame": head, "module": ["L['self'].gpt.lm_head", "Linear"]},
            "permute_11": {"op": "aten.permute.default", "frame": head,
                           "module": ["L['self'].gpt.lm_head", "Linear"]},
            "ge_1": {"op": "aten.ge.Scalar", "frame": wte, "module": ["L['self'].gpt.transformer.wte", "Embedding"]},
            "addmm_default": {"op": "aten.addmm.default", "frame": wte, "backward": True},
        }

    dynamo = {"embedding": {"op": "call_function:embedding", "frame": wte,
                            "module": ["L['self'].gpt.transformer.wte", "Embedding"]},
              "linear": {"op": "call_function:linear", "frame": head, "module": ["L['self'].gpt.lm_head", "Linear"]}}
    assert top_level_lines(dynamo) == {(hf, 569): False, (hf, 698): False}
    nodes = post_grad()
    _not_top_level(nodes, top_level_lines(dynamo))
    own = origin_of(["addmm_default"], nodes)
    assert own.modules == [] and own.missing == (
        "no module path recorded (a node a graph pass made); its line runs in one module, gpt.transformer.wte")
    o = module_from_operands(own, ["view_42", "permute_11", "addmm_default"], nodes)
    assert o.modules == ["gpt.lm_head", "gpt.transformer.wte"] and o.missing is None  # as its lines
    assert [ln.line for ln in o.lines] == [569, 698]
    nodes = {**post_grad(), "relu": {"op": "aten.relu.default", "frame": wte, "backward": True}}
    _not_top_level(nodes, {})  # without Dynamo's graph: the pass's name still says so
    assert origin_of(["addmm_default"], nodes).missing.startswith("no module path recorded")
    assert origin_of(["relu"], nodes).modules == [""]  # a traced node of a line of one module


def test_a_node_named_as_a_pass_names_its_inserts_is_a_pass_on_a_line_of_top_level_code():
    """Recorded (torch 2.13.0, CPU, 2026-11-29, ``breakdown --train``): ``for _ in range(3): h =
    torch.relu(self.proj(h))``. The backward sums proj's weight gradients with two ``addmm``s
    an Inductor pass made (``addmm_default``, ``addmm_default_1``: no module). The line runs
    top-level code too (the ``relu``), so only their names tell: both were counted as top-level
    code; their operands (proj's ``mm``s) now give them ``proj``."""
    from inductor_bench.core.attribution import module_from_operands, origin_of
    from inductor_bench.core.source_store import named_by_a_pass
    from inductor_bench.runner.sources import _not_top_level, top_level_lines

    line = ["/tmp/x/mixed.py", 14, "forward", "h = torch.relu(self.proj(h))"]
    proj = {"op": "aten.mm.default", "frame": line, "module": ["L['self'].proj", "Linear"], "backward": True}
    nodes = {"mm": dict(proj), "mm_1": dict(proj), "mm_2": dict(proj),
             "addmm_default": {"op": "aten.addmm.default", "frame": line, "backward": True},
             "addmm_default_1": {"op": "aten.addmm.default", "frame": line, "backward": True},
             "le": {"op": "aten.le.Scalar", "frame": line, "backward": True}}  # relu's backward
    dynamo = {"l__self___proj": {"op": "call_function:linear", "frame": line, "module": ["L['self'].proj", "Linear"]},
              "relu": {"op": "call_function:relu", "frame": line}}
    assert top_level_lines(dynamo) == {("/tmp/x/mixed.py", 14): True}
    _not_top_level(nodes, top_level_lines(dynamo))
    assert origin_of(["le"], nodes).modules == [""]  # the relu's: top-level code
    for name in ("addmm_default", "addmm_default_1"):
        own = origin_of([name], nodes)
        assert own.missing == "no module path recorded (a node a graph pass made); its line runs in one module, proj"
        assert module_from_operands(own, ["mm", "mm_1", name], nodes).modules == ["proj"]
    assert [n for n in ("addmm_default", "addmm_default_12", "add_tensor", "addmm", "addmm_1", "mm_default_x")
            if named_by_a_pass(n, "aten.addmm.default" if "addmm" in n else "aten.add.Tensor")] == [
        "addmm_default", "addmm_default_12", "add_tensor"]


def test_a_kernels_call_moves_its_share_of_the_kernels_bytes():
    """A reused kernel is one code at one size: each call moves and computes the kernel's
    per-call bytes and FLOPs (its row's counts over its calls), at the call's own time."""
    from inductor_bench.core.results import KernelStat
    from inductor_bench.core.roofline import site_stat
    from inductor_bench.core.sources import CallSite

    k = KernelStat(name="cpp_fused_gelu_3", category="cpp_pointwise", calls=12.0, ms=0.28,
                   bytes=12 * 52224.0, flops=None)
    call = CallSite(kernel=k.name, index=-1, callee=k.name, calls=1.0, ms=0.0241, occurrence=4)
    one = site_stat(GraphResult(id="0-inference", role="inference"), k, call)
    assert (one.ms, one.calls, one.bytes, one.flops) == (0.0241, 1.0, 52224.0, None)


def test_a_calls_latency_verdict_reads_the_calls_own_iterations():
    """GPT-2's GELU kernel, called in both layers (Hugging Face transformers 5.25.0, torch
    2.13.0 CPU, 2 layers, batch 2 x 32 tokens): each call moves 262 kB, 6.27 us at 41.78 GB/s,
    under the host's 10 us floor, and its fastest iteration took 19.4 us, under 2 x (10 + 6.27)
    = 32.5 us: latency-bound, as the kernel's row is (39.4 us over its 2 calls). Read against the
    row's iterations (both calls together, 39.4 us for one call) a call was called
    memory-bound, and the views by line and module counted its 30% in their % of peak."""
    from inductor_bench.core.ceilings import LATENCY, Ceilings, kernel_roof
    from inductor_bench.core.results import KernelStat
    from inductor_bench.core.roofline import site_stat
    from inductor_bench.core.sources import CallSite

    c = Ceilings(device_name="cpu", gbps=41.779, tflops={"fp32": 0.46})
    k = KernelStat(name="cpp_fused_add_mul_pow_tanh_view_6", category="cpp_pointwise", calls=2.0,
                   ms=0.041431, bytes=524288.0, flops=None, samples_ms=[0.041431, 0.039418, 0.043])
    g = GraphResult(id="0-forward", role="forward")
    assert kernel_roof(k, c, "cpu").bound == LATENCY
    for i, fastest in enumerate((0.019449, 0.019378)):
        call = CallSite(kernel=k.name, index=-1, callee=k.name, calls=1.0, ms=0.0207,
                        samples_ms=[0.0207, fastest, 0.022], occurrence=i)
        one = site_stat(g, k, call)
        assert one.samples_ms == [0.0207, fastest, 0.022]
        assert kernel_roof(one, c, "cpu").bound == LATENCY
    # an extern call: its own iterations too (a 8x32x32 bmm, 9.1 us, of 4 calls 33 us together)
    bmm = KernelStat(name="aten::bmm", category="extern_gemm", calls=4.0, ms=0.0322,
                     bytes=4 * 98304.0, flops=4 * 524288.0, compute="fp32", samples_ms=[0.0322, 0.0330])
    g.site_counts = [(98304.0, 524288.0)]
    call = CallSite(kernel="aten::bmm", index=0, callee="extern_kernels.bmm", calls=1.0, ms=0.0091,
                    samples_ms=[0.0091, 0.0088])
    assert kernel_roof(site_stat(g, bmm, call), c, "cpu").bound == LATENCY


def test_a_kernels_modules_are_named_most_nodes_first():
    """A BERT layer's attention softmax also recomputes the mask an earlier layer made (Hugging
    Face transformers 5.24.0, torch 2.13.0 CPU, 2026-11-29; synthetic nodes in its shape): its
    source cell names layer 1 first, the module most of its nodes ran in, not the first in path
    order. Merged origins name first the modules most of them name."""
    from inductor_bench.core.attribution import origin_of
    from inductor_bench.core.sources import Origin, merge

    line = ["/hf/sdpa_attention.py", 182, "sdpa_attention_forward", "attn_output = sdpa("]
    mask = ["/hf/masking_utils.py", 54, "and_masks", "result = result & mask"]
    l0, l1 = "L['self'].bert.encoder.layer.0.attention.self", "L['self'].bert.encoder.layer.1.attention.self"
    nodes = {f"softmax_{i}": {"op": "aten.exp.default", "frame": line, "module": [l1, "BertSelfAttention"]}
             for i in range(5)}
    nodes |= {f"where_{i}": {"op": "aten.where.self", "frame": line, "module": [l0, "BertSelfAttention"]}
              for i in range(2)}
    nodes["bitwise_and"] = {"op": "aten.bitwise_and.Tensor", "frame": mask, "module": ["L['self'].bert", "BertModel"]}
    o = origin_of(list(nodes), nodes)
    assert o.modules == ["bert.encoder.layer.1.attention.self", "bert.encoder.layer.0.attention.self", "bert"]
    assert merge([o]).modules == o.modules
    other = Origin(["x"], [], ["bert", "bert.encoder.layer.0.attention.self"])
    assert merge([o, other]).modules == ["bert", "bert.encoder.layer.0.attention.self",  # in both; first in one
                                         "bert.encoder.layer.1.attention.self"]


# Where the SEQUENTIAL_NODES modules were built, as runner/module_sites.py records them
# (synthetic: a model file /m/seq.py building Linear and GELU on line 6, the last Linear on 7).
SEQUENTIAL_SITES = {
    "0": ["/m/seq.py", 6, "make_workload", "nn.Linear(256, 512), nn.GELU(),"],
    "1": ["/m/seq.py", 6, "make_workload", "nn.Linear(256, 512), nn.GELU(),"],
    "2": ["/m/seq.py", 7, "make_workload", "nn.Linear(512, 256),"],
}


def test_a_module_with_no_line_names_the_line_that_built_it():
    from inductor_bench.core.attribution import module_types, origin_of
    from inductor_bench.core.sources import Origin, SourceLine
    from inductor_bench.core.views import built_lines
    from inductor_bench.render.views import where

    types = module_types(SEQUENTIAL_NODES)
    both = origin_of(["addmm", "addmm_1"], SEQUENTIAL_NODES)
    assert [(ln.line, ln.code) for ln in built_lines(both, SEQUENTIAL_SITES)] == [
        (6, "nn.Linear(256, 512), nn.GELU(),"), (7, "nn.Linear(512, 256),")]
    assert where(both, types=types, sites=SEQUENTIAL_SITES) == "0, 2 (Linear) · built at seq.py:6,7"
    fused = origin_of(["addmm", "mul"], SEQUENTIAL_NODES)  # two modules built on one line: once
    assert where(fused, types=types, sites=SEQUENTIAL_SITES) == "0 (Linear), 1 (GELU) · built at seq.py:6"
    # a module whose site is not known keeps "no line"; a kernel with a line of its own keeps it
    assert where(both, types=types, sites={}) == "0, 2 (Linear) · no line"
    lined = Origin(nodes=["addmm"], lines=[SourceLine("/m/net.py", 3)], modules=["0"])
    assert where(lined, sites=SEQUENTIAL_SITES) == "0 · net.py:3" and built_lines(lined, SEQUENTIAL_SITES) == []


def _sequential_graph(sites: dict) -> GraphResult:
    from inductor_bench.core.attribution import module_types, origin_of
    from inductor_bench.core.results import KernelStat

    g = GraphResult(id="0-inference", role="inference", iterations=1, wall_ms=2.0, wall_samples_ms=[2.0],
                    module_types=module_types(SEQUENTIAL_NODES), module_sites=sites)
    for name, ms, nodes in (("aten::addmm", 1.5, ["addmm_1"]), ("cpp_fused_gelu_0", 0.25, ["mul", "erf"]),
                            ("cpp_fused_addmm_0", 0.125, ["addmm"])):
        g.kernels.append(KernelStat(name=name, category="extern_gemm", calls=1, ms=ms,
                                    origin=origin_of(nodes, SEQUENTIAL_NODES)))
    return g


def test_the_line_view_counts_torch_modules_at_the_lines_that_built_them():
    """--by line: kernels of torch's own modules group under the line that built each module,
    marked "(built there)"; without sites (a run saved before them) they stay "(no source line)"."""
    from inductor_bench.core.views import by_line, units
    from inductor_bench.render.breakdown import render_breakdown

    g = _sequential_graph(SEQUENTIAL_SITES)
    groups = by_line(units([g]))
    # line 7 built the Linear of 1.5 ms; line 6 the GELU (0.25 ms) and the first Linear (0.125 ms)
    assert [(grp.key, grp.ms, grp.built) for grp in groups] == [
        (("built", "/m/seq.py:7"), 1.5, True), (("built", "/m/seq.py:6"), 0.375, True)]
    text = render_breakdown(BreakdownResult(model="m.py", graphs=[g]), by="line")
    assert "seq.py:7 (built there)  nn.Linear(512, 256)," in text
    assert "seq.py:6 (built there)  nn.Linear(256, 512), nn.GELU()," in text
    assert "(built there): the kernels of torch's own modules" in text
    old = render_breakdown(BreakdownResult(model="m.py", graphs=[_sequential_graph({})]), by="line")
    assert "built" not in old and "(no source line)" in old
    # the module view adds where each was built to its class; JSON keeps the sites and reads them back
    text = render_breakdown(BreakdownResult(model="m.py", graphs=[g]), by="module")
    assert "2 (Linear, built at seq.py:7)" in text and "1 (GELU, built at seq.py:6)" in text
    again = BreakdownResult.from_dict(BreakdownResult(model="m.py", graphs=[g]).to_dict())
    assert again.graphs[0].module_sites == SEQUENTIAL_SITES
    assert "module_sites" not in _sequential_graph({}).to_dict()


def test_the_module_view_keeps_apart_two_models_modules_of_one_path():
    """Two nn.Sequential compiled one after the other (an encoder and a decoder) both have a
    module "0" and a "1": the module view keeps each apart by the line that built it, with its
    own class (before, one row "1 (Tanh)" held the encoder's ReLU too). Synthetic graphs."""
    from inductor_bench.core.results import KernelStat
    from inductor_bench.core.sources import Origin
    from inductor_bench.core.views import by_module, units
    from inductor_bench.render.breakdown import render_breakdown

    graphs = []
    for gid, line, act, ms in (("0-inference", 3, "ReLU", 1.0), ("0.1-inference", 4, "Tanh", 0.5)):
        sites = {p: ["/m/two.py", line, "<module>", "x = torch.compile(...)"] for p in ("0", "1")}
        g = GraphResult(id=gid, role="inference", iterations=1, wall_ms=2.0, wall_samples_ms=[2.0],
                        module_types={"0": "Linear", "1": act}, module_sites=sites)
        g.kernels = [KernelStat(name="aten::addmm", category="extern_gemm", calls=1, ms=ms, origin=Origin(modules=["0"])),
                     KernelStat(name=f"cpp_{act}", category="cpp_pointwise", calls=1, ms=ms / 4,
                                origin=Origin(modules=["1"]))]
        graphs.append(g)
    assert [(grp.key, grp.ms) for grp in by_module(units(graphs))] == [
        (("0 @ /m/two.py:3",), 1.0), (("0 @ /m/two.py:4",), 0.5), (("1 @ /m/two.py:3",), 0.25),
        (("1 @ /m/two.py:4",), 0.125)]
    text = render_breakdown(BreakdownResult(model="two.py", graphs=graphs), by="module")
    for row in ("0 (Linear, built at two.py:3)", "0 (Linear, built at two.py:4)", "1 (ReLU, built at two.py:3)",
                "1 (Tanh, built at two.py:4)"):
        assert row in text
    # a run saved before sites: one row per path, as before
    for g in graphs:
        g.module_sites = {}
    assert [grp.key for grp in by_module(units(graphs))] == [("0",), ("1",)]


# Excerpt of the record of a tiny GPT-2's training forward (transformers' GPT2LMHeadModel, 2
# layers, dropout 0.1), recorded with torch 2.13 CPU on 2026-12-07: Inductor's replace_random
# pass draws the seeds of every dropout in one node of no line, each dropout looks its seed up.
GPT2 = "/site-packages/transformers/models/gpt2/modeling_gpt2.py"
DROPOUT_SEEDS_NODES = {
    "inductor_seeds_default": {"op": "prims.inductor_seeds.default"},
    "inductor_lookup_seed_default": {
        "op": "prims.inductor_lookup_seed.default",
        "frame": [GPT2, 603, "forward", "hidden_states = self.drop(hidden_states)"],
        "module": ["L['self'].gpt.transformer.drop", "Dropout"]},
    "inductor_random_default_1": {
        "op": "prims.inductor_random.default",
        "frame": [GPT2, 603, "forward", "hidden_states = self.drop(hidden_states)"],
        "module": ["L['self'].gpt.transformer.drop", "Dropout"]},
    "inductor_lookup_seed_default_1": {
        "op": "prims.inductor_lookup_seed.default",
        "frame": [GPT2, 244, "forward", "hidden_states = self.dropout(hidden_states)"],
        "module": ["L['self'].gpt.transformer.h.0.mlp.dropout", "Dropout"]},
    "addmm": {
        "op": "aten.addmm.default",
        "frame": [GPT2, 698, "forward", "logits = self.lm_head(hidden_states)"],
        "module": ["L['self'].gpt.lm_head", "Linear"]},
}


def test_the_dropout_seeds_kernel_is_at_the_lines_and_modules_of_its_dropouts():
    from inductor_bench.core.attribution import origin_of

    seeds = origin_of(["inductor_seeds_default"], DROPOUT_SEEDS_NODES)
    assert [(ln.file, ln.line) for ln in seeds.lines] == [(GPT2, 244), (GPT2, 603)]
    assert sorted(seeds.modules) == ["gpt.transformer.drop", "gpt.transformer.h.0.mlp.dropout"]
    assert seeds.missing is None
    # without seed lookups in the record the seeds node keeps the reason it has no line
    alone = origin_of(["inductor_seeds_default"], {"inductor_seeds_default": {"op": "prims.inductor_seeds.default"}})
    assert alone.lines == [] and alone.missing == "its FX nodes carry no stack trace (prims.inductor_seeds.default)"
    # other nodes are left as they are
    assert [ln.line for ln in origin_of(["addmm"], DROPOUT_SEEDS_NODES).lines] == [698]
