"""A training step's kernel that copies the convolutions' weights into channels-last, made (mostly)
from no FX node, is named for that work (core/weight_copies.WEIGHT_COPIES) and the views by
line and by module show it as a row of its own, on two recorded training graphs
(tests/fixtures/attribution/README.md): a tiny conv net's forward, whose ``cpp_fused_0`` copies
two weights and the model's input, and timm resnet18's, whose ``cpp_fused_add_copy__0`` copies
17 weights and the input and bumps 20 BatchNorms' counters. Without torch."""

from __future__ import annotations

import math
import re

from inductor_bench.core.attribution import attribute, call_origins
from inductor_bench.core.breakdown import analyze_graph
from inductor_bench.core.module_calls import module_calls
from inductor_bench.core.results import BreakdownResult, GraphResult
from inductor_bench.core.trace import load_trace
from inductor_bench.core.unplaced import MOSTLY_UNPLACED, NO_NODE, call_bytes, mostly_unplaced
from inductor_bench.core.views import by_line, by_module, step_units
from inductor_bench.core.weight_copies import INPUT_COPIES, WEIGHT_COPIES, weight_copy_origins
from inductor_bench.render.breakdown import render_breakdown

from .conftest import FIXTURES
from .recorded_graph import recorded_graph

TINY = FIXTURES / "attribution" / "tinyconv-train-torch-2.13"
RESNET = FIXTURES / "attribution" / "timm-resnet18-train-torch-2.13" / "0-forward"
ROW = f"({WEIGHT_COPIES})"
ALLOC = re.compile(r"^\s+(buf\d+) = empty_strided_cpu\(\(([\d, ]+)\)", re.M)
TABLE_ROW = re.compile(r"^\s+\d+\s+\d")  # a numbered row of a table, not the prose under it
CONV_WEIGHT = re.compile(r"extern_kernels\.convolution\(\w+, (buf\d+),")


def _float_bytes(text: str) -> dict[str, int]:
    """Each buffer the module allocates -> its bytes, float32 (all these graphs' buffers are)."""
    return {b: 4 * math.prod(int(x) for x in dims.split(",") if x.strip()) for b, dims in ALLOC.findall(text)}


def _origins(gdir):
    text, record, module, calls = recorded_graph(gdir)
    args = module_calls(text, module)
    sizes = call_bytes(calls, args)
    placed = mostly_unplaced(call_origins(calls, record)[0], calls, record, text, module, sizes)
    return text, calls, placed, weight_copy_origins(placed, calls, record, args, sizes), (record, args, sizes)


def test_the_tiny_nets_copy_kernel_writes_mostly_weights_and_is_named_for_them():
    text, calls, before, after, _ = _origins(TINY / "0-forward")
    (i,) = [i for i, c in enumerate(calls) if c.name == "cpp_fused_0"]
    size = _float_bytes(text)
    weights = set(CONV_WEIGHT.findall(text))
    # independently: it writes conv1's and conv2's weights (3.4 kB + 73.7 kB) and the input (24.6 kB)
    assert weights == {"buf0", "buf2"} and calls[i].written == ["buf0", "buf1", "buf2"]
    assert (size["buf0"] + size["buf2"], size["buf1"]) == (77_184, 24_576)
    assert before[i].missing == NO_NODE and before[i].nodes == []
    assert (after[i].missing, after[i].lines, after[i].modules, after[i].nodes) == (WEIGHT_COPIES, [], [], [])
    assert {k: o for k, o in after.items() if k != i} == {k: o for k, o in before.items() if k != i}


def test_resnet18s_copy_kernel_keeps_its_batchnorm_nodes_and_is_named_for_the_weights():
    text, calls, before, after, _ = _origins(RESNET)
    (i,) = [i for i, c in enumerate(calls) if c.name == "cpp_fused_add_copy__0"]
    size = _float_bytes(text)
    weights = set(CONV_WEIGHT.findall(text)) & set(calls[i].written)
    # independently: 17 weights (44.0 MB) beside the input's copy (98 kB) and 20 int64 counters
    assert len(weights) == 17 and "buf1" not in weights
    assert (sum(size[b] for b in weights), size["buf1"]) == (43_979_520, 98_304)
    assert before[i].missing == MOSTLY_UNPLACED and len(before[i].nodes) == 40
    assert (after[i].missing, after[i].nodes) == (WEIGHT_COPIES, before[i].nodes)
    assert {k: o for k, o in after.items() if k != i} == {k: o for k, o in before.items() if k != i}


def test_a_copy_kernel_writing_more_bytes_of_input_than_of_weights_is_named_for_the_input():
    """Synthetic sizes: the tiny net's input as large as its two weights together (the row an
    inference kernel copying the input beside a small weight is: tests/test_input_copies.py)."""
    text, calls, before, _, (record, args, sizes) = _origins(TINY / "0-forward")
    (i,) = [i for i, c in enumerate(calls) if c.name == "cpp_fused_0"]
    for input_bytes, missing in ((77_184, INPUT_COPIES), (77_183, WEIGHT_COPIES)):
        grown = {**sizes, i: {**sizes[i], "buf1": input_bytes}}
        assert weight_copy_origins(before, calls, record, args, grown)[i].missing == missing
    unknown = {**sizes, i: {**sizes[i], "buf2": None}}
    assert weight_copy_origins(before, calls, record, args, unknown)[i] == before[i]


def _step() -> BreakdownResult:
    graphs = []
    for gid in ("0-forward", "0-backward"):
        text, record, module, _ = recorded_graph(TINY / gid)
        trace = load_trace(TINY / gid / "trace.json.gz")
        g = analyze_graph(trace, module, GraphResult(id=gid, role=gid.split("-")[1], device="cpu"))
        graphs.append(attribute(g, trace, module, text, record))
    return BreakdownResult(model="tinyconv.py", device="cpu", mode="default", graphs=graphs, train=True)


def test_the_line_and_module_views_show_the_copies_as_their_own_row_and_still_add_up():
    r = _step()
    fwd = r.graphs[0]
    (copy,) = [k for k in fwd.kernels if k.name == "cpp_fused_0"]
    us = step_units(r, kernel_calls=True)
    total = sum(g.kernel_ms for g in r.graphs)
    for groups in (by_line(us), by_module(us)):
        (named,) = [g for g in groups if g.missing == WEIGHT_COPIES]
        assert [u.kernel.name for u in named.units] == ["cpp_fused_0"] and named.ms == copy.ms
        assert not [g for g in groups if g.missing and g is not named]  # nothing else lacks a line
        assert math.isclose(sum(g.ms for g in groups), total, rel_tol=1e-12)
    for by, cells in (("line", f"{ROW}  no line: Inductor copies the weights on every call"), ("module", ROW)):
        text = render_breakdown(r, by=by, width=400)
        (row,) = [ln for ln in text.splitlines() if ROW in ln and TABLE_ROW.match(ln)]
        assert row.split()[1] == f"{copy.ms:.3f}" and row.rstrip().endswith(cells)
        assert "(no module)" not in text and "(no source line)" not in text
        assert "model.to(memory_format=torch.channels_last)" in text.replace("\n", " ")


def test_the_kernel_table_names_the_copies_in_its_source_cell():
    text = render_breakdown(_step(), width=400)
    rows = [ln for ln in text.splitlines() if re.match(r"^\s*(\d+\s+0-forward\s+)?cpp_fused_0 ", ln)]
    assert len(rows) == 2 and all(ln.rstrip().endswith(ROW) for ln in rows)
    assert "made from no FX node" not in text
