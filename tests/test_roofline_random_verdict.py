"""A generated kernel that draws random numbers and moved its bytes at under 1% of the bandwidth
is "not its data", and its verdict names the work no count holds: its random numbers. Figures
recorded with torch 2.13 on the CPU machine (2026-12-07, one thread, the machine busy): a
two-layer GPT-2's training forward (hidden 128, batch 4 x 64 tokens), its kernel of add,
dropout and LayerNorm, 562 kB in 2.910 ms, against a measured 33.5 GB/s."""

from __future__ import annotations

from dataclasses import replace

import pytest

from inductor_bench.core.ceilings import NOT_ITS_DATA, Ceilings
from inductor_bench.core.results import KernelStat
from inductor_bench.core.roofline import kernel_roof
from inductor_bench.core.work import FROM_BUFFERS, RANDOM_NOTE
from inductor_bench.render.roofline_marks import bound_words

DROPOUT = KernelStat("cpp_fused_add_native_dropout_native_layer_norm_view_10", "cpp_reduction", 1.0, 2.910,
                     bytes=562e3, work_from=f"{FROM_BUFFERS}; {RANDOM_NOTE}")


def test_a_dropout_kernel_under_one_percent_of_the_bandwidth_names_its_random_numbers():
    roof = kernel_roof(DROPOUT, Ceilings("cpu", gbps=33.5), "cpu")
    assert roof.bound == NOT_ITS_DATA
    assert roof.pct == pytest.approx(100 * 562e3 / 2.910e-3 / 33.5e9)  # 0.58%
    assert bound_words(roof, DROPOUT) == ("not its data (under 1% of the bandwidth: its random numbers, "
                                          "not counted)")
    # a kernel that draws none (a mask computed from indices) keeps the general words
    plain = replace(DROPOUT, work_from=FROM_BUFFERS)
    assert bound_words(roof, plain) == "not its data (under 1% of the bandwidth: uncounted work)"
