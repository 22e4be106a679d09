"""Kernel time copying weights for extern convolutions (core/weight_copies.py) and the report's
note suggesting --freezing, on a recorded timm resnet18 inference graph
(tests/fixtures/attribution/README.md): its C++ kernels that apply a block's batch norm and ReLU
also copy the next convolution's weight into channels-last. Without torch."""

from __future__ import annotations

import json
import math
import re

import pytest

from inductor_bench.core.attribution import attribute
from inductor_bench.core.breakdown import analyze_graph
from inductor_bench.core.module_calls import module_calls
from inductor_bench.core.results import BreakdownResult, GraphResult
from inductor_bench.core.trace import load_trace
from inductor_bench.core.views import by_line, by_module, step_units, top_step_units
from inductor_bench.core.weight_copies import WEIGHT_COPIES, copied_weights
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.render.weight_copy import weight_copy_note

from .conftest import FIXTURES
from .recorded_graph import recorded_graph

GRAPH = FIXTURES / "attribution" / "timm-resnet18-inference-torch-2.13" / "0-inference"
ALLOC = re.compile(r"^\s+(buf\d+) = empty_strided_cpu\(\(([\d, ]+)\)", re.M)
CONV_WEIGHT = re.compile(r"extern_kernels\.convolution\(\w+, (buf\d+),")


def _analysed():
    text, record, module, _ = recorded_graph(GRAPH)
    trace = load_trace(GRAPH / "trace.json.gz")
    g = analyze_graph(trace, module, GraphResult(id="0-inference", role="inference", device="cpu"))
    return attribute(g, trace, module, text, record)


def test_the_copied_weights_are_the_convolutions_weight_buffers_and_not_the_input():
    text, record, module, _ = recorded_graph(GRAPH)
    copied = copied_weights(record, module_calls(text, module))
    # independently: every buffer the module passes to a convolution as its weight (the three
    # 1x1 downsample convolutions read their graph input as it is); the input's copy (buf0) is not one
    weights = set(CONV_WEIGHT.findall(text))
    assert copied == weights and len(copied) == 17 and "buf0" not in copied


def test_the_copy_share_is_the_kernels_time_by_the_bytes_they_write_for_the_weights():
    g = _analysed()
    expected = sum(_copy_shares(g).values())
    assert math.isclose(g.weight_copy_ms, expected, rel_tol=1e-9)
    assert 0.3 < g.weight_copy_ms / g.kernel_ms < 0.35  # 32.0% of this recorded graph's kernel time


def _copy_shares(g: GraphResult) -> dict[str, float]:
    """Independently: each kernel's ms times the share of the bytes it writes (its buffers as the
    module allocates or asserts them, float32) that are convolutions' weights; those with none left out."""
    text, _, _, calls = recorded_graph(GRAPH)
    weights = set(CONV_WEIGHT.findall(text))
    sizes = {b: 4 * math.prod(int(x) for x in dims.split(",") if x.strip()) for b, dims in ALLOC.findall(text)}
    sizes.update({a: 4 * math.prod(int(x) for x in d.split(",") if x.strip())
                  for a, d in re.findall(r"assert_size_stride\((\w+), \(([\d, ]+)\)", text)})
    for new, old in re.findall(r"^\s+(buf\d+) = (buf\d+); del \2  # reuse", text, re.M):
        sizes[new] = sizes[old]  # a buffer given another's memory
    shares = {}
    for k in g.kernels:
        written = [b for c in calls if c.name == k.name and not c.extern for b in dict.fromkeys(c.written)]
        copied = sum(sizes[b] for b in written if b in weights)
        if copied:
            shares[k.name] = k.ms * copied / sum(sizes[b] for b in written)
    return shares


def test_each_fused_copy_kernel_s_row_gives_its_own_copy_share():
    """The BatchNorm-and-ReLU kernels that also copy the next convolution's weight: each row of
    the kernel table marks the share of that kernel's time copying, and a note says what it is."""
    g = _analysed()
    shares = _copy_shares(g)
    assert {k.name: k.copy_ms for k in g.kernels if k.copy_ms} == pytest.approx(shares, rel=1e-9)
    ms = {k.name: k.ms for k in g.kernels}
    text = render_breakdown(_result(g), width=400)
    top = text.split("Top 15 of")[1].split("Graph 0-inference")[0]
    shown = [u.kernel.name for u in top_step_units(_result(g))[:15]]  # the table's rows
    marks = re.findall(r"\[(\d+\.\d)% copies weights\]", top)
    named = {k.name for k in g.kernels if k.origin and k.origin.missing == WEIGHT_COPIES}  # a row of its own
    expected = [f"{100 * shares[n] / ms[n]:.1f}" for n in shown if n in shares and n not in named]
    assert sorted(marks) == sorted(expected) and len(marks) == 4
    assert "cpp_fused_convolution_11" in named and f"({WEIGHT_COPIES})\n" in top  # unmarked
    assert ("[n% copies weights]: of the kernel's time, the share copying weights into the layout the "
            "convolutions and GEMMs read (by the bytes it writes), fused with its other work, on every call") in " ".join(
        top.split())  # the note as wrapped to the terminal, joined
    saved = BreakdownResult.from_dict(json.loads(_result(g).to_json())).graphs[0].kernels
    assert {k.name: k.copy_ms for k in saved if k.copy_ms} == {k.name: k.copy_ms for k in g.kernels if k.copy_ms}


def _result(g: GraphResult, **kw) -> BreakdownResult:
    return BreakdownResult(model="resnet18", device="cpu", mode="default", graphs=[g], **kw)


def test_an_inference_report_names_the_share_and_suggests_freezing():
    g = _analysed()
    note = weight_copy_note(_result(g))
    assert note.startswith(f"{100 * g.weight_copy_ms / g.kernel_ms:.1f}% of kernel time ({g.weight_copy_ms:.3f} ms)")
    assert "--freezing" in note and note in render_breakdown(_result(g), width=400).replace("\n", " ")


def test_a_training_report_names_the_share_and_suggests_channels_last():
    """Training copies the weights every step too, most of them fused into the BatchNorms' kernels
    (core/unplaced.py), and freezing is not offered: the optimizer changes the weights every step."""
    g = _analysed()
    note = weight_copy_note(_result(g, train=True))
    assert note.startswith(f"{100 * g.weight_copy_ms / g.kernel_ms:.1f}% of kernel time ({g.weight_copy_ms:.3f} ms)")
    assert note.endswith(": a model in channels_last (model.to(memory_format=torch.channels_last)) has none to copy")
    assert "--freezing" not in note


def test_no_note_with_freezing_or_for_a_small_share():
    g = _analysed()
    assert weight_copy_note(_result(g, freezing=True)) == ""
    g.weight_copy_ms = 0.04 * g.kernel_ms
    assert weight_copy_note(_result(g)) == ""


KERNEL_CALL = re.compile(r"^\s+(cpp_fused\w+)\(([^()]*)\)$", re.M)
OPERANDS = re.compile(r"extern_kernels\.convolution\((buf\d+), (buf\d+),")


def test_an_inference_kernel_that_only_copies_the_convolutions_operands_is_the_copies_row():
    """Its copies are made from the convolution's own FX node, so it named that convolution's line
    and module (layer3.0.conv1 for cpp_fused_convolution_7); a training step's copy kernel is the
    row of its own, and so is this one now. A kernel that also applies a batch norm keeps its modules."""
    text = recorded_graph(GRAPH)[0]
    g = _analysed()
    # independently: the kernels that read only graph inputs (argN_1) and write only new buffers
    # (allocated, not reused) passed to a convolution (as its input or weight): copies of them
    operands = {b for pair in OPERANDS.findall(text) for b in pair} & {b for b, _ in ALLOC.findall(text)}
    only = {name for name, passed in KERNEL_CALL.findall(text)
            if {a.strip() for a in passed.split(",")} <= operands | set(re.findall(r"arg\d+_1", passed))}
    assert only == {"cpp_fused__native_batch_norm_legit_no_training_convolution_relu_0",
                    "cpp_fused_convolution_7", "cpp_fused_convolution_11"}
    for k in g.kernels:
        assert (k.origin.missing == WEIGHT_COPIES) == (k.name in only), k.name
    (mixed,) = [k for k in g.kernels if k.name == "cpp_fused__native_batch_norm_legit_no_training_convolution_relu_12"]
    assert mixed.origin.modules[:2] == ["layer4.0.conv2", "layer4.1.conv2"]
    r = _result(g)
    us = step_units(r, kernel_calls=True)
    for groups in (by_line(us), by_module(us)):
        (row,) = [grp for grp in groups if grp.missing == WEIGHT_COPIES]
        assert math.isclose(row.ms, sum(k.ms for k in g.kernels if k.name in only), rel_tol=1e-12)
        assert math.isclose(sum(grp.ms for grp in groups), g.kernel_ms, rel_tol=1e-12)
        assert not [u for grp in groups if grp is not row for u in grp.units if u.kernel.name in only]


def test_no_kernel_holds_a_batch_norms_scale_for_the_note_to_count():
    """Without freezing a batch norm's scale, 1 / sqrt(var + eps) times its weight, is computed per
    element inside the kernel that applies it: no kernel writes a buffer of one value per channel,
    and those computing a sqrt write only activations (batch 2, four dimensions) and weight copies."""
    text, _, _, calls = recorded_graph(GRAPH)
    dims = {b: [int(x) for x in d.split(",") if x.strip()] for b, d in ALLOC.findall(text)}
    copies = set(CONV_WEIGHT.findall(text))
    written = {b for c in calls if not c.extern for b in c.written}
    assert not [b for b in written if len(dims.get(b, [0, 0])) == 1]
    applying = [c for c in calls if not c.extern and ".sqrt()" in text.split(f"{c.name} = ")[1].split("\'\'\')")[0]]
    # 17 calls apply the 20 batch norms (a block's second with its downsample's, three times)
    assert len(applying) == 17
    assert all(len(dims[b]) == 4 and dims[b][0] == 2 for c in applying for b in c.written
               if b in dims and b not in copies)
