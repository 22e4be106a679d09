"""A training kernel that fuses a weight's copy into channels-last with a BatchNorm's statistics
and a ReLU keeps their lines and modules (core/unplaced.py), as its inference counterpart does, on
timm's resnet18 with 1000 classes recorded in training (tests/fixtures/attribution/README.md): 11
of its 17 weight copies are fused so, only the first kernel's 6 copies (beside the BatchNorms'
counters) are the row '(weights copied into the convolutions' layout)'. Without torch."""

from __future__ import annotations

import math
import re

from inductor_bench.core.attribution import call_origins
from inductor_bench.core.module_calls import module_calls
from inductor_bench.core.unplaced import call_bytes, mostly_unplaced, placement_bytes, written_kinds
from inductor_bench.core.weight_copies import WEIGHT_COPIES, weight_copy_origins

from .conftest import FIXTURES
from .recorded_graph import recorded_graph

GRAPH = FIXTURES / "attribution" / "timm-resnet18-1000-train-torch-2.13" / "0-forward"
ALLOC = re.compile(r"^\s+(buf\d+) = empty_strided_cpu\(\(([\d, ]+)\)", re.M)
REUSE = re.compile(r"^\s+(buf\d+) = (buf\d+); del \2  # reuse$", re.M)
LAYER4_BN1 = "cpp_fused__native_batch_norm_legit_functional_copy__relu_14"


def _origins():
    text, record, module, calls = recorded_graph(GRAPH)
    args = module_calls(text, module)
    sizes = call_bytes(calls, args)
    placed = mostly_unplaced(call_origins(calls, record)[0], calls, record, text, module, sizes)
    return text, record, module, calls, weight_copy_origins(placed, calls, record, args, sizes)


def test_layer4s_batchnorm_kernels_keep_their_modules_beside_a_weights_copy():
    text, record, module, calls, after = _origins()
    size = {b: 4 * math.prod(int(x) for x in d.split(",") if x.strip()) for b, d in ALLOC.findall(text)}
    first, second = [i for i, c in enumerate(calls) if c.name == LAYER4_BN1]
    # independently: each call copies one of layer4's 512x512x3x3 weights (buf15, buf17) beside its
    # BatchNorm's batch mean and rstd (buf124, buf125: 1x512x1x1 buffers reused), running mean and
    # variance (512 each) and the ReLU's output (buf126: 2x512x2x2), float32
    reuse = dict(REUSE.findall(text))
    assert calls[second].written == ["buf124", "primals_112", "buf125", "primals_113", "buf126", "buf17"]
    assert (reuse["buf124"], reuse["buf123"], reuse["buf125"]) == ("buf123", "buf120", "buf119")
    assert reuse["buf119"] == "buf118" and size["buf120"] == size["buf118"] == 512 * 4
    assert "assert_size_stride(primals_112, (512, ), (1, ), 'input')" in text
    assert size["buf126"] == 2 * 512 * 2 * 2 * 4 and size["buf17"] == 512 * 512 * 9 * 4 == 9_437_184
    bytes_of = placement_bytes(calls, record, text, module)
    assert bytes_of[first] == bytes_of[second] == (9_437_184, 4 * 512 * 4 + 2 * 512 * 2 * 2 * 4) == (9_437_184, 24_576)
    for i, block in ((first, "layer4.0"), (second, "layer4.1")):
        assert (after[i].missing, after[i].modules) == (None, [f"{block}.bn1", f"{block}.act1"])
        assert [ln.code for ln in after[i].lines] == ["x = self.bn1(x)", "x = self.act1(x)"]


def test_only_the_kernel_of_copies_and_counters_is_the_copy_row():
    _, record, _, calls, after = _origins()
    copying = [i for i, ws in written_kinds(calls, record).items() if any(unplaced for _, unplaced in ws)]
    rows = [calls[i].name for i in copying if after[i].missing == WEIGHT_COPIES]
    kept = [i for i in copying if after[i].missing is None and after[i].modules and after[i].lines]
    assert len(copying) == 12 and rows == ["cpp_fused_add_copy__0"] and len(kept) == 11
