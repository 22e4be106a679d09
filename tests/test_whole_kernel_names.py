"""Kernel names whole where a report is grepped or pasted (text to a file or a pipe, markdown),
shortened only on a terminal, whose width they must fit. Inputs: the recorded runs of
tests/fixtures/results (cpu_mlp_*: torch 2.13 CPU, 2026-12-07; synthetic_cuda_breakdown: synthetic)."""

from __future__ import annotations

import os
import sys

from inductor_bench.cli import main
from inductor_bench.commands import output
from inductor_bench.render.doc import new_doc

from .conftest import FIXTURES

RESULTS = FIXTURES / "results"

CUBLAS = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
SOFTMAX = "cpp_fused__softmax__softmax_backward_data_add_flip_gelu_gelu_backward_1"  # 71 characters
LAYER_NORM = "cpp_fused_gelu_gelu_backward_native_layer_norm_native_layer_norm_backward_sum_2"  # 79


def _out(capsys, argv: list[str]) -> str:
    try:
        main(argv)
    except SystemExit as e:
        assert not e.code
    return capsys.readouterr().out


def test_a_report_to_a_pipe_shows_a_long_kernel_name_whole(capsys):
    out = _out(capsys, ["report", str(RESULTS / "synthetic_cuda_breakdown")])
    # the GEMM's own table: its whole 116-character name, then its calls, ms, % graph and ATen ops
    assert f"{CUBLAS}        1  0.012      16.0%  aten.view, aten.t, aten.mm" in out.splitlines()
    assert "…nt_k_off_kernel__5x_cublas" not in out


def test_a_report_on_a_terminal_still_shortens_it(capsys, monkeypatch):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)  # capsys's stdout, as a terminal
    monkeypatch.setattr(output.shutil, "get_terminal_size", lambda *a, **k: os.terminal_size((250, 24)))
    out = _out(capsys, ["report", str(RESULTS / "synthetic_cuda_breakdown")])
    cut = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x…nt_k_off_kernel__5x_cublas"
    assert f"{cut}        1  0.012      16.0%  aten.view, aten.t, aten.mm" in out.splitlines()
    assert CUBLAS not in out


def test_a_diff_in_markdown_and_to_a_pipe_names_kernels_whole(capsys):
    base, head = str(RESULTS / "cpu_mlp_train_autotune"), str(RESULTS / "cpu_mlp_slow_train")
    md = _out(capsys, ["diff", base, head, "--format", "markdown", "--top", "3"])
    assert (f"| 0-backward | `{SOFTMAX}` | C++ reduction | -         |    0.4497 |     +0.4497 | "
            "fused: \\_softmax__softmax_backward_data_add_flip_gelu_gelu_backward |") in md.splitlines()
    text = _out(capsys, ["diff", base, head])
    rows = [ln for ln in text.splitlines() if ln.startswith("0-backward  cpp_fused_gelu_gelu_backward")]
    assert rows[0].split()[:3] == ["0-backward", LAYER_NORM, "C++"]
    assert "…" not in rows[0].split()[1]


def test_each_format_decides_whether_names_are_whole():
    names = [CUBLAS, CUBLAS.replace("_tn_", "_nn_")]
    assert new_doc("markdown").kernel_labels(names) == names
    assert new_doc("text").kernel_labels(names) == names  # no terminal: a file or a pipe
    assert new_doc("text", width=120).kernel_labels(names, 60) == [
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n…f_kernel__5x_cublas",
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n…f_kernel__5x_cublas",
    ]  # on a terminal: cut, the two told apart
    assert new_doc("html").kernel_label(CUBLAS, 60) == "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n…f_kernel__5x_cublas"
