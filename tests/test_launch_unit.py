"""The latency verdict judges one launch of a row: its ideal and fastest times over its launches
per iteration. Where a row's launches could do unequal work, what the real modules hold:
a generated kernel called at several places in the H200 transformer's backward is called at
one size each time, so the mean launch is each launch; a ``while_loop`` body's kernel, launched
once per trip, is not counted at all (one trip's bytes over all the trips' time would read
8 times too slow), rather than counted once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inductor_bench.core.analysis import reanalyze
from inductor_bench.core.ceilings import LATENCY, Ceilings, kernel_roof
from inductor_bench.core.modparse import read_module
from inductor_bench.core.results import GraphResult, KernelStat
from inductor_bench.core.roofline import count_work

from .conftest import FIXTURES

RUN = FIXTURES / "runs" / "cuda_h200_transformer_train"
LOOP = FIXTURES / "subgraphs" / "while_loop_inference.py"
REUSED = "triton_per_fused_add_native_layer_norm_native_layer_norm_backward_view_8"
H200 = Ceilings("NVIDIA H200", 4240.0, {"fp32": 51.3})  # as measured there (docs/gpu-validation.md)


def test_a_kernel_called_at_four_places_is_judged_per_launch_at_its_one_size():
    text = (RUN / "graphs" / "0-backward" / "module.py").read_text()
    sizes = re.findall(REUSED + r"\.run\(\w+, \w+, (\d+), (\d+), stream", text)
    assert sizes == [("128", "4")] * 4  # xnumel 128 rows of r0_numel 4 floats, each call
    per_launch = 4 * (128 * 4) + 4 * 128  # reads 128 x 4 float32, writes 128
    r, _ = reanalyze(RUN)
    k = next(k for k in r.graph("0-backward").kernels if k.name == REUSED)
    assert (k.calls, k.bytes) == (4.0, 4 * per_launch)
    roof = kernel_roof(k, H200, "cuda")
    assert roof.pct == pytest.approx(100 * 4 * per_launch / (k.ms / 1e3) / 1e9 / 4240.0, rel=1e-12)
    fastest_launch_us = min(k.samples_ms) * 1e3 / 4
    ideal_launch_us = per_launch / 4240e9 * 1e6  # 0.6 ns
    assert fastest_launch_us < 2 * (5.0 + ideal_launch_us) and roof.bound == LATENCY


def test_a_while_loop_bodys_kernel_is_not_counted_at_one_trip_for_all_its_launches():
    text = LOOP.read_text()
    assert "while should_loop:" in text and "cpp_fused_add_mul_sin_zeros_2(while_loop_body" in text
    g = GraphResult(id="0-inference", role="inference", device="cpu")
    # launches per call of the graph as its profile had them: 8 trips, 9 conditions
    g.kernels = [KernelStat("cpp_fused_add_mul_sin_zeros_2", "cpp_pointwise", 8.0, 0.418),
                 KernelStat("cpp_fused_lt_zeros_1", "cpp_pointwise", 9.0, 0.001),
                 KernelStat("cpp_fused_zeros_0", "cpp_pointwise", 1.0, 0.0002)]
    count_work(g, read_module(LOOP), text, Path("/nonexistent"))
    body, cond, zeros = g.kernels
    assert body.bytes is None and cond.bytes is None and kernel_roof(body, H200, "cpu").pct is None
    assert zeros.bytes == 8.0  # the counter's int64, written once at the top level
