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


H200_LOOP = FIXTURES / "cuda_h200_stack_loop" / "stack-loop.pt.trace.json.gz"  # a real H200 loop


@pytest.fixture(scope="module")
def cnn_column(cudnn_names) -> list[str]:
    """The H200 loop's four cuBLAS GEMMs and the A100's ten cuDNN convolutions in one column, as
    a CNN's training run on one GPU shows both."""
    events = json.loads(gzip.decompress(H200_LOOP.read_bytes()))["traceEvents"]
    gemms = sorted({e["name"] for e in events if str(e.get("name", "")).startswith("sm80_xmma_gemm_")})
    return gemms + cudnn_names


@pytest.mark.parametrize(("width", "gemm_labels"), [
    (60, ["sm80_xmma_gemm_…nn_n_tilesize256x128x8_…execute_kernel__5x_…",
          "sm80_xmma_gemm_…nn_n_tilesize256x128x8_…split_k_kernel__5x_…",
          "sm80_xmma_gemm_…tn_n_tilesize128x128x8_…execute_kernel__5x_…",
          "sm80_xmma_gemm_…tn_n_tilesize64x64x8_…execute_kernel__5x_…"]),
    (70, ["sm80_…nn_n_tilesize256x128x8_…warpsize4x2x1_ffma_…execute_kernel__5x_…",
          "sm80_…nn_n_tilesize256x128x8_…warpsize4x2x1_ffma_…split_k_kernel__5x_…",
          "sm80_…tn_n_tilesize128x128x8_…warpsize2x2x1_ffma_…execute_kernel__5x_…",
          "sm80_…tn_n_tilesize64x64x8_…warpsize1x4x1_ffma_…execute_kernel__5x_…"]),
    (80, ["sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128…_execute_kernel__5x_cublas",
          "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128…_split_k_kernel__5x_cublas",
          "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128…_execute_kernel__5x_cublas",
          "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8…_execute_kernel__5x_cublas"]),
])
def test_gemms_and_convolutions_in_one_column_each_line_up_with_their_own_kind(
    cnn_column, cudnn_names, width, gemm_labels,
):
    """cuBLAS's GEMMs (``sm80_xmma_gemm_``) and cuDNN's convolutions (``sm80_xmma_fprop_``, ``dgrad_``,
    ``wgrad_``) in one column read as each kind reads in a column of its own. Lined up together,
    the split-K GEMM read 'sm80_…nn_n_tilesize256x128x8_stage3_…split_k_kernel__…cublas' at 60
    characters beside '…kernel__5x_cublas' (the entry point ``execute_`` hidden, the common
    ``stage3_`` shown) and every convolution showed the common ``nhwckrsc_``."""
    labels = kernel_labels(cnn_column, width)
    assert labels[:4] == gemm_labels == kernel_labels(cnn_column[:4], width)
    assert labels[4:] == kernel_labels(cudnn_names, width)
    assert len(set(labels)) == len(labels) and all(len(x) <= width and " #" not in x for x in labels)
    assert not any("nhwckrsc_" in x for x in labels) and not any("stage3_" in x for x in gemm_labels)
