"""A column of cuDNN convolution kernels (render/distinct_labels.py, render/label_slots.py): the
ten ``sm80_xmma_{dgrad,fprop,wgrad}_implicit_gemm…`` names of a recorded A100 trace (HTA's
nccl_parser_config test data, NVIDIA A100-PG509-200) differ in the operation, ``indexed_``, the
layout, the tile, stage and warp shape, ``alignc4_`` / ``t1r1s1_``, the entry point and
``infer`` / ``train``; no choice of whole runs of those fits a table's column."""

from __future__ import annotations

import gzip
import json
import re

import pytest

from inductor_bench.render.format import kernel_labels

from .conftest import FIXTURES

A100_TRACE = FIXTURES / "hta" / "nccl_parser_config_nccl_data.json.gz"


@pytest.fixture(scope="module")
def cudnn_names() -> list[str]:
    events = json.loads(gzip.decompress(A100_TRACE.read_bytes()))["traceEvents"]
    return sorted({e["name"] for e in events if str(e.get("name", "")).startswith("sm80_xmma_")})


def test_the_column_holds_the_ten_convolution_kernels(cudnn_names):
    operations = [re.match(r"sm80_xmma_(\w+?)_", n).group(1) for n in cudnn_names]
    assert operations == ["dgrad"] * 2 + ["fprop"] * 4 + ["wgrad"] * 4


@pytest.mark.parametrize(("width", "labels"), [
    (45, ["sm80_…dgrad_implicit_…tilesize128x128x16_…",
          "sm80_…dgrad_implicit_…tilesize64x128x32_…",
          "sm80_…fprop_…tilesize128x128x16_…alignc4_…",
          "sm80_…fprop_implicit_…tilesize128x128x16_…",
          "sm80_…fprop_implicit_…tilesize256x64x32_…",
          "sm80_…fprop_implicit_…tilesize64x128x32_…",
          "sm80_…wgrad_implicit_…tilesize128x128x16_…",
          "sm80_…wgrad_…tilesize128x128x16_…split_k_…",
          "sm80_…wgrad_…tilesize64x128x32_…t1r1s1_…",
          "sm80_…wgrad_implicit_gemm_…tilesize64x64x64_…"]),
    (80, ["sm80_xmma_dgrad_implicit_…nhwc_tilesize128x128x16_stage4_warpsize2x2x1_g1_…infer",
          "sm80_xmma_dgrad_implicit_…nhwc_tilesize64x128x32_stage5_warpsize2x2x1_g1_…infer",
          "sm80_xmma_fprop_implicit_…indexed_…nchw_tilesize128x128x16_…alignc4_…infer",
          "sm80_xmma_fprop_implicit_…indexed_tf32f32_…nchw_tilesize128x128x16_stage4_…infer",
          "sm80_xmma_fprop_implicit_…indexed_tf32f32_…nchw_tilesize256x64x32_stage3_…infer",
          "sm80_xmma_fprop_implicit_…nhwc_tilesize64x128x32_stage5_warpsize2x2x1_g1_…infer",
          "sm80_xmma_wgrad_implicit_…indexed_tf32f32_…nhwc_tilesize128x128x16_stage4_…train",
          "sm80_xmma_wgrad_implicit_…indexed_…nhwc_tilesize128x128x16_…split_k_…train",
          "sm80_xmma_wgrad_implicit_…indexed_tf32f32_…nhwc_tilesize64x128x32_…t1r1s1_…train",
          "sm80_xmma_wgrad_implicit_…indexed_tf32f32_…nhwc_tilesize64x64x64_stage4_…train"]),
])
def test_convolution_kernels_are_told_apart_a_part_at_a_time(cudnn_names, width, labels):
    """Each place the names differ at is left out on its own, the tile's details before the words:
    at 80 characters two fprop rows read 'sm80_xmma_fprop_implicit_…alignc4_execute_kernel_cudnn_infer'
    and '…execute_kernel_cudnn_infer' (indexed, layout and tile hidden); at 45 a dgrad and a wgrad
    kernel with the same tile read 'sm80_xmma_…tilesize64x128x32_stage5_warps… #1' and '#2'."""
    assert kernel_labels(cudnn_names, width) == labels


@pytest.mark.parametrize("width", [45, 60, 70, 80])
def test_every_convolution_label_names_its_operation_and_is_distinct(cudnn_names, width):
    """At each table's width every label fits, none is numbered, and each shows its operation
    (dgrad / fprop / wgrad); from 60 characters its layout too, before the tile."""
    labels = kernel_labels(cudnn_names, width)
    assert len(set(labels)) == len(labels) and all(len(x) <= width and " #" not in x for x in labels)
    for name, label in zip(cudnn_names, labels, strict=True):
        operation, layout = re.search(r"sm80_xmma_(\w+?)_.*_(nhwc|nchw)_tilesize", name).groups()
        assert f"{operation}_" in label, label
        if width >= 60:
            assert f"{layout}_tilesize" in label, label
