"""The configs a refused CUDA kernel file lists are those its GPU would tune over, whatever this
machine has: Inductor's heuristics branch on ``torch.cuda.is_available()`` as they build them.
Checked on a persistent reduction Inductor wrote on a real H200 (torch 2.11.0+cu130,
tests/fixtures/triton_kernels/README.md)."""

from __future__ import annotations

import re

import pytest

from inductor_bench.core.autotune import BASELINE, MAX_AUTOTUNE
from inductor_bench.core.kernelfile import read_kernel_file

from .conftest import FIXTURES, skip_unless_kernel_files_load

SOFTMAX = FIXTURES / "triton_kernels" / "cuda_h200" / "triton_per_fused__softmax_exp_prepare_softmax_online_sub_0.py"


def test_a_cuda_persistent_reduction_lists_the_config_a_cuda_machine_builds(tmp_path):
    """torch 2.13's ``_persistent_reduction_configs``, an INNER reduction of 256 <= r <= 1024 with
    x // 8 >= 128 and no tuning switch: on a CUDA machine one config, ``XBLOCK = min(1024 // r,
    8)`` with one warp; ``if not torch.cuda.is_available()`` gives Intel's XBLOCK=8 with warps by
    size instead, which a machine without the GPU listed (XBLOCK=8, num_warps=8)."""
    skip_unless_kernel_files_load()
    import torch

    from inductor_bench.runner.kernel_load import config_space

    if not torch.__version__.startswith("2.13."):
        pytest.skip("the branch checked is torch 2.13's")
    text = SOFTMAX.read_text()
    x, r = map(int, re.search(r"size_hints=\{'x': (\d+), 'r0_': (\d+)\}", text).groups())
    assert "reduction_hint=ReductionHint.INNER" in text and "'max_autotune': False" in text
    assert 256 <= r <= 1024 and x // 8 >= 128 and "RSPLIT_SIZE" not in text
    available = torch.cuda.is_available()
    kf = read_kernel_file(SOFTMAX)
    base = config_space(kf, BASELINE, tmp_path / "base")
    assert base == [{"XBLOCK": min(1024 // r, 8), "num_warps": 1, "num_stages": 1}]
    assert base == [{"XBLOCK": 4, "num_warps": 1, "num_stages": 1}]
    # max-autotune does not filter: XBLOCK 1, 8, 32, 128 while XBLOCK x r <= 4096
    tuned = config_space(kf, MAX_AUTOTUNE, tmp_path / "tuned")
    assert [c["XBLOCK"] for c in tuned] == [b for b in (1, 8, 32, 128) if b == 1 or b * r <= 4096]
    assert torch.cuda.is_available() is available  # answered as on the GPU only while listing
