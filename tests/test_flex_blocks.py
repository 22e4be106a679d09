"""A masked flex attention's FLOPs: Inductor's C++ flex attention template computes only the
key/value blocks its block mask lists, known at run time (``runner/flex_blocks.py`` reads them
in one untimed call; ``core/conv_attention.flex_masked_flops`` counts). The unit tests read
the compiled module of ``tests/fixtures/models/flex_masked.py`` recorded with torch 2.13.0
(``tests/fixtures/cpp_kernels/flex_attention_masked_module.py``: a causal mask of 64 x 64
blocks over 256 queries and keys, 4 batches, 4 heads of 16); the end-to-end test compiles it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench.core.conv_attention import flex_block_args, flex_masked_flops
from inductor_bench.core.graph_work import call_work
from inductor_bench.core.modparse import read_module
from inductor_bench.core.work import kernel_params

FIXTURES = Path(__file__).parent / "fixtures"
MODULE = FIXTURES / "cpp_kernels" / "flex_attention_masked_module.py"
TEMPLATE = "cpp_fused_flex_attention_permute_select_view_1"
B, H, T, E, BLOCK = 4, 4, 256, 16, 64
CAUSAL_BLOCKS = 1 + 2 + 3 + 4  # of the 4 x 4 blocks, those on or below the diagonal


def _tile_flops(tiles: int) -> float:
    """Q·Kᵀ and P·V of ``tiles`` blocks of 64 queries by 64 keys, heads of 16 (and 16 for V)."""
    return tiles * (2.0 * BLOCK * BLOCK * E + 2.0 * BLOCK * BLOCK * E)


def test_the_mask_counts_are_the_arguments_the_call_passes_as_them():
    module = read_module(MODULE)
    k = module.kernels[TEMPLATE]
    names = [n for n, _ in kernel_params(k)]
    assert names[3:7] == ["kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices"]
    args = ["buf1", "buf2", "buf3", "arg4_1", "arg3_1", "arg5_1", "arg6_1", "buf6"]  # as call() writes it
    assert flex_block_args(names, args) == ["arg4_1", "arg5_1"]
    assert flex_block_args(names, args[:4]) is None and flex_block_args(["query", "output"], args) is None


def test_a_causal_mask_counts_the_blocks_it_computes_for_every_batch_and_head():
    """The mask is (1, 1, 4): one for all 4 batches and 4 heads, 10 blocks of 16 computed."""
    source = read_module(MODULE).kernels[TEMPLATE].source
    assert flex_masked_flops(source, CAUSAL_BLOCKS) == _tile_flops(CAUSAL_BLOCKS * B * H) == 41_943_040
    dense = 2.0 * B * H * T * T * (E + E)
    assert flex_masked_flops(source, 16) == dense  # every block listed: the whole attention
    # a sequence that is not whole blocks: the sum cannot place the shorter block
    ragged = source.replace("int64_t qSize = static_cast<int64_t>(256L);", "int64_t qSize = static_cast<int64_t>(250L);")
    assert ragged != source and flex_masked_flops(ragged, CAUSAL_BLOCKS) is None


def test_the_count_follows_each_call_of_the_template_and_none_where_unread():
    module = read_module(MODULE)
    text = MODULE.read_text()

    def flops(blocks):
        return [w.flops for c, w in call_work(module, text, None, blocks) if c.name == TEMPLATE]

    assert flops(None) == [None]  # as before: no count without the run's mask
    assert flops({TEMPLATE: [CAUSAL_BLOCKS]}) == [41_943_040]
    assert flops({TEMPLATE: [None]}) == [None]


@pytest.mark.slow
def test_a_compiled_masked_flex_attention_counts_the_blocks_its_mask_keeps(tmp_path):
    """Real (CPU): the template's FLOPs are the dense attention's times the share of blocks the
    mask keeps, as torch's own ``BlockMask.sparsity()`` says it (independent of the count),
    and ``report --reanalyze`` counts the same from the saved record."""
    torch = pytest.importorskip("torch")
    if tuple(int(x) for x in torch.__version__.split(".")[:2]) < (2, 6):
        pytest.skip("torch 2.5 lowers flex attention for CUDA only")
    sys.path.insert(0, str(FIXTURES / "models"))
    try:
        from flex_masked import make_workload
    finally:
        sys.path.pop(0)
    from inductor_bench.core.analysis import reanalyze

    model, _ = make_workload("cpu", torch.float32)
    kept = 1 - model.mask.sparsity() / 100
    p = subprocess.run(
        [sys.executable, "-m", "inductor_bench.cli", "breakdown", str(FIXTURES / "models" / "flex_masked.py"),
         "--device", "cpu", "--iterations", "5", "--windows", "1", "--processes", "1",
         "--out", str(tmp_path / "run"), "--json", str(tmp_path / "r.json")],
        capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr
    (g,) = json.loads((tmp_path / "r.json").read_text())["graphs"]
    (template,) = [k for k in g["kernels"] if k["category"] == "cpp_attention_template"]
    assert template["flops"] == pytest.approx(2.0 * B * H * T * T * (E + E) * kept)
    assert template["flops"] == _tile_flops(CAUSAL_BLOCKS * B * H)
    again, _ = reanalyze(tmp_path / "run")
    (k,) = [k for k in again.graphs[0].kernels if k.category == "cpp_attention_template"]
    assert k.flops == template["flops"]
