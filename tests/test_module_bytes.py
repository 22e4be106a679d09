"""A fused kernel's modules are ordered by the bytes written for them (core/module_bytes.py),
on a recorded timm resnet18 inference graph (tests/fixtures/attribution/README.md): its
``cpp_fused__native_batch_norm_legit_no_training_convolution_relu_12`` applies a block's first
batch norm and ReLU and copies that block's second convolution's weight into channels-last, at
two places. Without torch."""

from __future__ import annotations

import math
import re

from inductor_bench.core.attribution import attribute, call_origins, origin_of
from inductor_bench.core.breakdown import analyze_graph
from inductor_bench.core.module_bytes import heaviest_first, written_for
from inductor_bench.core.results import GraphResult
from inductor_bench.core.trace import load_trace
from inductor_bench.render.views import where

from .conftest import FIXTURES
from .recorded_graph import recorded_graph

GRAPH = FIXTURES / "attribution" / "timm-resnet18-inference-torch-2.13" / "0-inference"
FUSED = "cpp_fused__native_batch_norm_legit_no_training_convolution_relu_12"
ALLOC = re.compile(r"^\s+(buf\d+) = empty_strided_cpu\(\(([\d, ]+)\)", re.M)


def _recorded():
    return recorded_graph(GRAPH)


def _modules_of(record):
    nodes = record["nodes"]
    return lambda names: origin_of(names, nodes).modules


def test_the_weight_copy_outweighs_the_batch_norm_and_its_convolution_comes_first():
    text, record, module, calls = _recorded()
    first, second = [i for i, c in enumerate(calls) if c.name == FUSED]
    # independently: each call writes the block's activation in place (float32, batch 2, 512
    # channels, the 64x64 input over 32) and the convolution's weight, which the module allocates
    shapes = {name: tuple(int(x) for x in dims.split(",") if x.strip()) for name, dims in ALLOC.findall(text)}
    (weight,) = [b for b in calls[first].written if b in shapes]
    assert shapes[weight] == (512, 512, 3, 3) and len(calls[first].written) == 2
    act = 4 * 2 * 512 * (64 // 32) ** 2
    before, _ = call_origins(calls, record)
    assert before[first].modules == ["layer4.0.bn1", "layer4.0.act1", "layer4.0.conv2"]  # by nodes
    weights = written_for(calls, record, text, module, [first], _modules_of(record))[first]
    assert weights == {"layer4.0.bn1": act, "layer4.0.act1": act, "layer4.0.conv2": 4 * math.prod(shapes[weight])}
    after = heaviest_first(before, calls, record, text, module, _modules_of(record))
    assert after[first].modules == ["layer4.0.conv2", "layer4.0.bn1", "layer4.0.act1"]
    assert after[second].modules == ["layer4.1.conv2", "layer4.1.bn1", "layer4.1.act1"]
    assert (after[first].nodes, after[first].lines) == (before[first].nodes, before[first].lines)
    # a kernel written for one module's operations alone keeps its order
    (pool,) = [i for i, c in enumerate(calls) if "max_pool2d" in c.name]
    assert after[pool].modules == before[pool].modules == ["bn1", "act1", "maxpool"]


def test_the_source_cell_of_the_analysed_kernel_names_the_convolutions_first():
    text, record, module, _ = _recorded()
    trace = load_trace(GRAPH / "trace.json.gz")
    g = analyze_graph(trace, module, GraphResult(id="0-inference", role="inference", device="cpu"))
    g = attribute(g, trace, module, text, record)
    (k,) = [k for k in g.kernels if k.name == FUSED]
    assert k.origin.modules[:2] == ["layer4.0.conv2", "layer4.1.conv2"]
    assert where(k.origin).startswith("layer4.0.conv2, layer4.1.conv2 +4 · ")

