"""A kernel that mostly copies the model's input into the convolutions' layout is the row
'(input copied into the convolutions' layout)' (core/weight_copies.INPUT_COPIES), not the first
convolution's line and module, on a recorded tiny conv net's inference graph
(tests/fixtures/attribution/README.md): its ``cpp_fused_convolution_0``, made from conv1's own FX
node, copies the input (24.6 kB) and conv1's small weight (3.5 kB); and a training step's copy
kernel of more input than weights (tests/fixtures/models/attr_net.py). Without torch."""

from __future__ import annotations

import json
import math
import re

from inductor_bench.core.attribution import attribute, call_origins
from inductor_bench.core.breakdown import analyze_graph
from inductor_bench.core.callsites import parse_calls
from inductor_bench.core.modparse import parse_module
from inductor_bench.core.module_calls import module_calls
from inductor_bench.core.results import BreakdownResult, GraphResult
from inductor_bench.core.trace import load_trace
from inductor_bench.core.unplaced import NO_NODE, call_bytes, mostly_unplaced
from inductor_bench.core.views import by_line, by_module, step_units
from inductor_bench.core.weight_copies import INPUT_COPIES, weight_copy_origins
from inductor_bench.render.breakdown import render_breakdown

from .conftest import FIXTURES
from .recorded_graph import recorded_graph

GRAPH = FIXTURES / "attribution" / "tinyconv-inference-torch-2.13" / "0-inference"
ROW = f"({INPUT_COPIES})"
ALLOC = re.compile(r"^\s+(buf\d+) = empty_strided_cpu\(\(([\d, ]+)\)", re.M)
FIRST_CONV = re.compile(r"extern_kernels\.convolution\((buf\d+), (buf\d+),")
TABLE_ROW = re.compile(r"^\s+\d+\s+\d")  # a numbered row of a table, not the prose under it


def _result() -> BreakdownResult:
    text, record, module, _ = recorded_graph(GRAPH)
    trace = load_trace(GRAPH / "trace.json.gz")
    g = analyze_graph(trace, module, GraphResult(id="0-inference", role="inference", device="cpu"))
    g = attribute(g, trace, module, text, record)
    return BreakdownResult(model="tinyconv.py", device="cpu", mode="default", graphs=[g])


def test_the_copy_kernel_writes_mostly_the_input_and_is_named_for_it():
    text = recorded_graph(GRAPH)[0]
    size = {b: 4 * math.prod(int(x) for x in d.split(",") if x.strip()) for b, d in ALLOC.findall(text)}
    # independently: the first convolution reads buf0 (the input) and buf1 (conv1's weight), both
    # written by cpp_fused_convolution_0 alone, float32
    (first, *_) = FIRST_CONV.findall(text)
    assert first == ("buf0", "buf1") and "cpp_fused_convolution_0(arg1_1, arg0_1, buf0, buf1)" in text
    assert (size["buf0"], size["buf1"]) == (2 * 3 * 32 * 32 * 4, 32 * 3 * 3 * 3 * 4) == (24_576, 3_456)
    (copy,) = [k for k in _result().graphs[0].kernels if k.name == "cpp_fused_convolution_0"]
    assert (copy.origin.missing, copy.origin.lines, copy.origin.modules) == (INPUT_COPIES, [], [])


def test_the_views_show_the_input_copy_as_its_own_row_and_conv1_as_its_convolution_alone():
    r = _result()
    g = r.graphs[0]
    (copy,) = [k for k in g.kernels if k.name == "cpp_fused_convolution_0"]
    us = step_units(r, kernel_calls=True)
    conv1 = [u for u in us if u.kernel.name == "aten::convolution" and "conv1" in u.origin.modules]
    assert len(conv1) == 1  # the first of the two convolution calls
    for groups, key in ((by_line(us), None), (by_module(us), ("conv1",))):
        (row,) = [grp for grp in groups if grp.missing == INPUT_COPIES]
        assert [u.kernel.name for u in row.units] == ["cpp_fused_convolution_0"] and row.ms == copy.ms
        assert not [grp for grp in groups if grp.missing and grp is not row]
        assert math.isclose(sum(grp.ms for grp in groups), g.kernel_ms, rel_tol=1e-12)
        if key:  # conv1's module holds its convolution call and nothing else
            (mod,) = [grp for grp in groups if grp.key == key]
            assert math.isclose(mod.ms, conv1[0].ms, rel_tol=1e-12)
    for by, cells in (("line", f"{ROW}  no line: Inductor copies the input on every call"), ("module", ROW)):
        text = render_breakdown(r, by=by, width=400)
        (line,) = [ln for ln in text.splitlines() if ROW in ln and TABLE_ROW.match(ln)]
        assert line.split()[1] == f"{copy.ms:.4f}" and line.rstrip().endswith(cells)
        assert "x.to(memory_format=torch.channels_last)" in text.replace("\n", " ")
        assert "(weights copied into" not in text  # conv2's weight copy is fused with bn1 and ReLU


def test_the_kernel_table_names_the_input_copy_in_its_source_cell():
    text = render_breakdown(_result(), width=400)
    rows = [ln for ln in text.splitlines() if re.match(r"^\s*(\d+\s+0-inference\s+)?cpp_fused_convolution_0 ", ln)]
    assert rows and all(ln.rstrip().endswith(ROW) for ln in rows)


def test_a_training_steps_copy_kernel_of_more_input_than_weights_is_the_input_row():
    """attr_net's training forward (tests/fixtures/attribution/torch-2.13): its ``cpp_fused_0``,
    made from no FX node, copies the 6.1 kB input and three convolutions' weights (5.5 kB); it
    read 'made from no FX node'."""
    gdir = FIXTURES / "attribution" / "torch-2.13" / "0-forward"
    text = (gdir / "module.py").read_text()
    record = json.loads((gdir / "sources.json").read_text())
    module = parse_module(text)
    calls = parse_calls(text, module)
    args = module_calls(text, module)
    sizes = call_bytes(calls, args)
    before = mostly_unplaced(call_origins(calls, record)[0], calls, record, text, module, sizes)
    (i,) = [i for i, c in enumerate(calls) if c.name == "cpp_fused_0"]
    size = {b: 4 * math.prod(int(x) for x in d.split(",") if x.strip()) for b, d in ALLOC.findall(text)}
    weights = {w for _, w in FIRST_CONV.findall(text)} & set(calls[i].written)
    # independently: the input (2x3x16x16) and the 3x3 convolutions' weights (8x3x3x3, 2 of 8x8x3x3)
    assert calls[i].written == ["buf0", "buf1", "buf2", "buf3"] and weights == {"buf0", "buf2", "buf3"}
    assert (size["buf1"], sum(size[b] for b in weights)) == (6_144, 864 + 2 * 2_304) == (6_144, 5_472)
    assert before[i].missing == NO_NODE
    after = weight_copy_origins(before, calls, record, args, sizes)
    assert (after[i].missing, after[i].lines, after[i].modules) == (INPUT_COPIES, [], [])
