"""One line of the model is one line however many frames reached it: a kernel fused from a
list comprehension's nodes and the ``forward`` around it (``torch.cat([conv(t) for ...])``,
models/mixnet.py) names that line once, in the record of a new run, in a run saved with the
line twice, and in the ``--by line`` view, whose groups are the sets of lines (synthetic
records, shaped as the compile worker writes them)."""

from __future__ import annotations

from inductor_bench.core.attribution import origin_of
from inductor_bench.core.results import GraphResult, KernelStat
from inductor_bench.core.sources import Origin, SourceLine, merge
from inductor_bench.core.views import by_line, units

CAT = "return torch.cat([conv(t) for conv, t in zip(self.convs, x.split(self.splits, 1))], 1)"
MIX = "y = self.mix(self.expand(x))"
M = "/models/mixnet.py"


def _node(line: int, func: str, code: str, op: str = "convolution") -> dict:
    return {"op": op, "frame": [M, line, func, code], "module": ["L['self'].blocks.0.mix"]}


NODES = {
    "conv_a": _node(20, "<listcomp>", CAT),
    "cat": _node(20, "forward", CAT, "cat"),
    "mix": _node(39, "forward", MIX),
}


def test_a_line_reached_through_two_frames_is_one_line():
    o = origin_of(["cat", "conv_a", "mix"], NODES)
    assert [(ln.line, ln.function) for ln in o.lines] == [(20, "<listcomp>"), (39, "forward")]
    # the same whichever frame comes first
    assert origin_of(["mix", "conv_a", "cat"], NODES).lines == o.lines


def test_a_saved_origin_with_the_line_twice_reads_it_once():
    twice = {"nodes": ["cat", "conv_a"], "modules": ["blocks.0.mix"],
             "lines": [{"file": M, "line": 20, "function": "forward", "code": CAT},
                       {"file": M, "line": 20, "function": "<listcomp>", "code": CAT}]}
    (line,) = Origin.from_dict(twice).lines
    assert (line.line, line.function) == (20, "<listcomp>")


def test_merged_origins_name_each_line_once():
    a = Origin(["cat"], [SourceLine(M, 20, "forward", CAT)], ["blocks.0.mix"])
    b = Origin(["conv_a"], [SourceLine(M, 20, "<listcomp>", CAT), SourceLine(M, 39, "forward", MIX)], ["blocks.0.mix"])
    assert [ln.line for ln in merge([a, b]).lines] == [20, 39]


def test_the_line_view_groups_kernels_by_their_set_of_lines():
    def kernel(name: str, ms: float, nodes: list[str]) -> KernelStat:
        return KernelStat(name=name, category="cpp_pointwise", calls=1.0, ms=ms, origin=origin_of(nodes, NODES))

    g = GraphResult(id="0-forward", role="forward", kernels=[
        kernel("k_cat", 0.5, ["cat", "conv_a"]),  # line 20 through two frames
        kernel("k_conv", 0.25, ["conv_a"]),  # line 20 through one
        kernel("k_both", 0.125, ["mix", "cat"]),
        kernel("k_both_again", 0.0625, ["conv_a", "mix"]),  # the same lines, met the other way
    ])
    groups = by_line(units([g]))
    assert [(grp.key, [u.kernel.name for u in grp.units]) for grp in groups] == [
        ((f"{M}:20",), ["k_cat", "k_conv"]),
        ((f"{M}:20", f"{M}:39"), ["k_both", "k_both_again"]),
    ]
    assert [grp.ms for grp in groups] == [0.75, 0.1875]
