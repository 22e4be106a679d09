"""A line of a library's layer class told apart by the model's lines that called it
(core/source_chains.py): the view by line on a hand-built record shaped like a Hugging Face
GPT-2's, whose every GEMM runs ``Conv1D.forward``'s one ``addmm`` line; a record made before
callers were kept gives one row as before; the callers survive JSON and a cache hit."""

from __future__ import annotations

import json

import pytest

from inductor_bench.core import source_store
from inductor_bench.core.attribution import origin_of
from inductor_bench.core.errors import ResultError
from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
from inductor_bench.core.shape import check
from inductor_bench.core.source_chains import labels
from inductor_bench.core.source_store import CALLERS
from inductor_bench.core.sources import CallSite, SourceLine
from inductor_bench.core.views import by_line, units
from inductor_bench.render.breakdown import render_breakdown

LIB = "/site/lib/conv1d.py"  # the library's layer class
GPT = "/site/lib/gpt.py"  # the library's model code calling it
ADDMM = [LIB, 119, "forward", "x = torch.addmm(self.bias, x, self.weight)"]
VIEW = [LIB, 120, "forward", "x = x.view(size_out)"]
GELU = ["/site/lib/act.py", 66, "forward", "return 0.5 * x * (1.0 + torch.tanh(x))"]


def at(line: int, code: str) -> list:
    return [GPT, line, "forward", code]


C_ATTN, C_PROJ, C_FC = at(187, "q = self.c_attn(h)"), at(225, "a = self.c_proj(a)"), at(241, "h = self.c_fc(h)")
ACT = at(242, "h = self.act(h)")
ATTN, CROSS, MLP = at(276, "a = self.attn(h)"), at(280, "c = self.cross(h)"), at(308, "m = self.mlp(h)")
BLOCK = at(500, "h = block(h)")


def node(frame: list, callers: list, module: str) -> dict:
    return {"op": "aten.addmm.default", "frame": frame, CALLERS: callers, "module": [module, "Conv1D"]}


NODES = {
    "addmm": node(ADDMM, [C_ATTN, ATTN, BLOCK], "L['self'].h.0.attn.c_attn"),
    "addmm_1": node(ADDMM, [C_PROJ, ATTN, BLOCK], "L['self'].h.0.attn.c_proj"),
    "addmm_2": node(ADDMM, [C_FC, MLP, BLOCK], "L['self'].h.0.mlp.c_fc"),
    "addmm_3": node(ADDMM, [C_ATTN, ATTN, BLOCK], "L['self'].h.1.attn.c_attn"),
    # the same projection line of the attention class, run as a cross attention: one more level
    "addmm_4": node(ADDMM, [C_ATTN, CROSS, BLOCK], "L['self'].h.1.cross.c_attn"),
    "view": {**node(VIEW, [C_FC, MLP, BLOCK], "L['self'].h.0.mlp.c_fc"), "op": "aten.view.default"},
    "mul": {**node(GELU, [ACT, MLP, BLOCK], "L['self'].h.0.mlp.act"), "op": "aten.mul.Tensor"},
}
SITES = [("addmm", 1.0), ("addmm_1", 0.5), ("addmm_2", 2.0), ("addmm_3", 0.25), ("addmm_4", 0.0625)]


def graph(nodes: dict) -> GraphResult:
    g = GraphResult(id="0-inference", role="inference", iterations=1, wall_ms=4.0, wall_samples_ms=[4.0])
    g.kernels = [KernelStat(name="aten::addmm", category="extern_gemm", calls=5, ms=3.8125),
                 KernelStat(name="cpp_fused_gelu_view_0", category="pointwise", calls=1, ms=0.125,
                            origin=origin_of(["view", "mul"], nodes))]
    g.sites = [CallSite(kernel="aten::addmm", index=i, callee="extern_kernels.addmm", calls=1, ms=ms,
                        origin=origin_of([n], nodes)) for i, (n, ms) in enumerate(SITES)]
    return g


def rows(g: GraphResult) -> list[tuple]:
    return [(grp.key, grp.ms, len(grp.units)) for grp in by_line(units([g], kernel_calls=True))]


def key(*frames: list) -> str:
    return " via ".join(f"{f[0]}:{f[1]}" for f in frames)


def test_one_layer_line_is_one_row_per_calling_line():
    """Conv1D's addmm line is reached from three projection lines: a row each; the c_attn line
    is reached from two lines in turn (self-attention, cross-attention): a row each; the GELU
    line and the view (one caller each) keep their own rows, with no caller."""
    assert rows(graph(NODES)) == [
        ((key(ADDMM, C_FC),), 2.0, 1),
        ((key(ADDMM, C_ATTN, ATTN),), 1.25, 2),
        ((key(ADDMM, C_PROJ),), 0.5, 1),
        ((f"{GELU[0]}:66", f"{LIB}:120"), 0.125, 1),
        ((key(ADDMM, C_ATTN, CROSS),), 0.0625, 1),
    ]


def test_a_record_made_before_callers_were_kept_gives_one_row():
    old = {n: {k: v for k, v in r.items() if k != CALLERS} for n, r in NODES.items()}
    assert rows(graph(old)) == [((f"{LIB}:119",), 3.8125, 5), ((f"{GELU[0]}:66", f"{LIB}:120"), 0.125, 1)]
    assert "via" not in json.dumps(graph(old).to_dict())  # and its JSON is as before


def test_labels_cut_each_chain_where_it_is_told_apart():
    def line(*frames: list) -> SourceLine:
        first, *via = (SourceLine(f[0], f[1], f[2], f[3]) for f in frames)
        return SourceLine(first.file, first.line, first.function, first.code, tuple(via))

    shared = [line(ADDMM, C_ATTN, ATTN, BLOCK), line(ADDMM, C_FC, MLP, BLOCK)]
    alone = line(GELU, ACT, MLP, BLOCK)
    got = labels([*shared, alone, alone])
    assert [got[ln].chain for ln in shared] == [((LIB, 119), (GPT, 187)), ((LIB, 119), (GPT, 241))]
    assert got[alone].chain == ((GELU[0], 66),)


def test_the_text_names_the_calling_line_and_its_code():
    text = render_breakdown(BreakdownResult(model="m.py", graphs=[graph(NODES)]), by="line")
    assert "  conv1d.py:119 via gpt.py:241                 h = self.c_fc(h)\n" in text
    # told apart at the second caller: that line's text
    assert "  conv1d.py:119 via gpt.py:187 via gpt.py:280  c = self.cross(h)\n" in text
    assert "A via B: line A" in text
    old = {n: {k: v for k, v in r.items() if k != CALLERS} for n, r in NODES.items()}
    assert "via" not in render_breakdown(BreakdownResult(model="m.py", graphs=[graph(old)]), by="line")


def test_callers_are_kept_in_json_and_read_back():
    r = BreakdownResult(model="m.py", graphs=[graph(NODES)])
    again = BreakdownResult.from_dict(json.loads(json.dumps(r.to_dict())))
    assert rows(again.graphs[0]) == rows(graph(NODES))
    line = again.graphs[0].sites[2].origin.lines[0]
    assert (line.line, [(v.line, v.code) for v in line.via]) == (
        119, [(241, "h = self.c_fc(h)"), (308, "m = self.mlp(h)"), (500, "h = block(h)")])
    assert "via" not in r.to_dict()["graphs"][0]["sites"][2]["origin"]["lines"][0]["via"][0]


# -- a cache hit carries each line with its callers ---------------------------------------------


def dyn(frame: list, callers: list) -> dict:
    return {"op": "call_function:addmm", "frame": frame, CALLERS: callers}


THEN = {"addmm": dyn(ADDMM, [C_ATTN, ATTN]), "addmm_1": dyn(ADDMM, [C_FC, MLP])}
STORED = {"nodes": {"addmm": {"op": "aten.addmm.default", "frame": ADDMM, CALLERS: [C_ATTN, ATTN]},
                    "addmm_1": {"op": "aten.addmm.default", "frame": ADDMM, CALLERS: [C_FC, MLP]}},
          "ops": [], "dynamo": THEN}


def test_a_cache_hit_carries_each_line_with_its_own_callers():
    """The two addmm nodes share their line and differ by caller: each takes the callers of its
    own dynamo nodes in this compile, whose model file moved 3 lines down."""
    moved = {n: {**r, CALLERS: [[GPT, f[1] + 3, *f[2:]] for f in r[CALLERS]]} for n, r in THEN.items()}
    got = source_store.carry_over(STORED, moved)
    assert got["carried"] == {"nodes": 2, "lost": 0}
    assert [f[1] for f in got["nodes"]["addmm"][CALLERS]] == [190, 279]
    assert [f[1] for f in got["nodes"]["addmm_1"][CALLERS]] == [244, 311]
    assert got["nodes"]["addmm"]["frame"] == ADDMM
    assert source_store.carry_over(STORED, THEN)["nodes"] == STORED["nodes"]  # unchanged


def test_callers_now_split_in_two_lose_the_line_with_the_reason():
    now = {**THEN, "addmm": dyn(ADDMM, [C_PROJ, ATTN])}
    stored = {**STORED, "dynamo": {**THEN, "addmm_1": dyn(ADDMM, [C_ATTN, ATTN])}}
    got = source_store.carry_over(stored, now)
    assert got["carried"]["lost"] == 2
    assert got["nodes"]["addmm"][source_store.LOST] == (
        "the cached module's line conv1d.py:119 via gpt.py:187 via gpt.py:276 is not known in this "
        "compile: its dynamo nodes (addmm, addmm_1) are at 2 lines in this compile")


def test_a_damaged_via_is_named_where_it_is():
    data = json.loads(json.dumps(BreakdownResult(model="m.py", graphs=[graph(NODES)]).to_dict()))
    check(BreakdownResult, data)  # as saved: fine
    line = data["graphs"][0]["sites"][0]["origin"]["lines"][0]
    for bad, why in ((7, "via: 7 is not a list"), ([7], "via[0]: 7 is not an object"),
                     ([{"file": "a.py"}], "via[0]: 'line' is missing")):
        line["via"] = bad
        with pytest.raises(ResultError) as e:
            check(BreakdownResult, data)
        assert str(e.value) == f"graphs[0].sites[0].origin.lines[0].{why}"


def test_a_narrow_terminal_keeps_the_calling_line_of_a_library_line():
    """Cut to fit 80 or 100 columns, a line called from others loses its folders, then its
    start, never its calling line: ``… via modeling_gpt2.py:241`` beside that line's text (a
    middle cut read ``pytorch_utils.py…ling_gpt2.py:241``, the ``:119 via`` lost)."""
    site = "/usr/lib/python3.11/site-packages/transformers/"
    moved = {LIB: site + "pytorch_utils.py", GPT: site + "models/gpt2/modeling_gpt2.py"}

    def move(f: list) -> list:
        return [moved.get(f[0], f[0]), *f[1:]]

    nodes = {n: {**r, "frame": move(r["frame"]), CALLERS: [move(c) for c in r[CALLERS]]}
             for n, r in NODES.items()}
    result = BreakdownResult(model="m.py", graphs=[graph(nodes)])
    whole = render_breakdown(result, by="line")
    assert ("transformers/pytorch_utils.py:119 via transformers/models/gpt2/modeling_gpt2.py:187 "
            "via transformers/models/gpt2/modeling_gpt2.py:280") in whole
    for width in (80, 100):
        text = render_breakdown(result, by="line", width=width)
        rows = text.split("Time by source line")[1].splitlines()
        cells = {ln.split("  ")[-1].strip(): ln for ln in rows if "… via " in ln}
        assert sorted(cells) == ["a = self.attn(h)", "a = self.c_proj(a)", "c = self.cross(h)", "h = self.c_fc(h)"]
        assert "… via modeling_gpt2.py:241  h = self.c_fc(h)" in cells["h = self.c_fc(h)"]
        assert "… via modeling_gpt2.py:280  c = self.cross(h)" in cells["c = self.cross(h)"]
        assert max(len(ln) for ln in text.splitlines()) <= width
