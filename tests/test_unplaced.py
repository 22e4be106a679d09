"""A generated kernel made mostly from no FX node is placed where its bytes are
(core/unplaced.py), on a recorded timm resnet18 training step (tests/fixtures/attribution/README.md):
its first C++ kernel copies 17 convolution weights and the input into channels-last and bumps the 20
BatchNorms' ``num_batches_tracked``. Without torch."""

from __future__ import annotations

import math
import re

from inductor_bench.core.attribution import call_origins
from inductor_bench.core.modparse import parse_module
from inductor_bench.core.module_calls import module_calls
from inductor_bench.core.sources import Origin
from inductor_bench.core.unplaced import MOSTLY_UNPLACED, call_bytes, mostly_unplaced, placement_bytes
from inductor_bench.core.weight_copies import weight_copy_origins

from .conftest import FIXTURES
from .recorded_graph import recorded_graph

RESNET = FIXTURES / "attribution" / "timm-resnet18-train-torch-2.13" / "0-forward"
COPY = "cpp_fused_add_copy__0"
ALLOC = re.compile(r"^\s+(buf\d+) = empty_strided_cpu\(\(([\d, ]+)\)", re.M)


def _recorded():
    return recorded_graph(RESNET)


def test_the_weight_copies_outweigh_the_batchnorm_counters_and_take_the_kernel_from_their_modules():
    text, record, module, calls = _recorded()
    (i,) = [i for i, c in enumerate(calls) if c.name == COPY]
    # independently: the 17 weights and the input it copies, float32, as the module allocates them; the 20
    # counters it adds one to, int64 scalars
    shapes = {name: [int(x) for x in dims.split(",") if x.strip()] for name, dims in ALLOC.findall(text)}
    copies = [f"buf{k}" for k in range(18)]
    assert all(b in calls[i].written for b in copies)
    weights = sum(4 * math.prod(shapes[b]) for b in copies)
    assert placement_bytes(calls, record, text, module) == {i: (weights, 20 * 8)}
    before, _ = call_origins(calls, record)
    assert len(before[i].modules) == 20 and all(m.endswith(("bn1", "bn2", "downsample.1"))
                                                for m in before[i].modules)
    after = mostly_unplaced(before, calls, record, text, module)
    assert (after[i].lines, after[i].modules, after[i].missing) == ([], [], MOSTLY_UNPLACED)
    assert after[i].nodes == before[i].nodes  # what it was made from is kept
    assert {k: o for k, o in after.items() if k != i} == {k: o for k, o in before.items() if k != i}


def test_a_kernel_whose_nodes_write_most_of_its_bytes_keeps_their_modules():
    """Synthetic: the same kernel, as if the counters were as large as the weights together and
    one float more: its BatchNorm nodes write more bytes than the copies, and keep it."""
    text, record, module, calls = _recorded()
    (i,) = [i for i, c in enumerate(calls) if c.name == COPY]
    weights, counters = placement_bytes(calls, record, text, module)[i]
    grown = text.replace("assert_size_stride(primals_3, (), (), 'input')",
                         f"assert_size_stride(primals_3, ({weights // 8 + 1}, ), (1, ), 'input')")
    assert placement_bytes(calls, record, grown, parse_module(grown))[i] == (weights, 8 * (weights // 8 + 1) + 19 * 8)
    before, _ = call_origins(calls, record)
    assert mostly_unplaced(before, calls, record, grown, parse_module(grown))[i] == before[i]


def test_a_kernel_of_unknown_sizes_keeps_its_origin():
    """Synthetic: no allocation line for the copies' buffers, so their bytes are unknown."""
    text, record, module, calls = _recorded()
    (i,) = [i for i, c in enumerate(calls) if c.name == COPY]
    blind = ALLOC.sub(lambda m: f"        {m.group(1)} = unknown((", text)
    assert i not in placement_bytes(calls, record, blind, parse_module(blind))
    before = {i: Origin(["add"], [], ["bn1"])}
    assert mostly_unplaced(before, calls, record, blind, parse_module(blind)) == before


def test_a_kernel_whose_nodes_write_a_tensor_beside_the_copies_keeps_their_modules():
    """Synthetic: the same kernel, as if one BatchNorm's counter were a tensor of 512 values (its
    running mean's size; 4 kB as the counter's int64, beside 44 MB of copies): its nodes then do a
    BatchNorm's work rather than bump counters, and it keeps their lines and modules, however many
    bytes the copies beside them write (timm's resnet18 with 1000 classes fuses layer4's weight
    copies with a BatchNorm and a ReLU so), named for no copy either."""
    text, record, module, calls = _recorded()
    (i,) = [i for i, c in enumerate(calls) if c.name == COPY]
    grown = text.replace("assert_size_stride(primals_3, (), (), 'input')",
                         "assert_size_stride(primals_3, (512, ), (1, ), 'input')")
    assert grown != text
    shapes = {name: [int(x) for x in dims.split(",") if x.strip()] for name, dims in ALLOC.findall(text)}
    copies = sum(4 * math.prod(shapes[f"buf{k}"]) for k in range(18))
    assert placement_bytes(calls, record, grown, parse_module(grown)) == {i: (copies, 512 * 8 + 19 * 8)}
    before, _ = call_origins(calls, record)
    after = mostly_unplaced(before, calls, record, grown, parse_module(grown))
    assert after == before and len(after[i].modules) == 20 and after[i].missing is None
    args = module_calls(grown, parse_module(grown))
    assert weight_copy_origins(after, calls, record, args, call_bytes(calls, args)) == before
