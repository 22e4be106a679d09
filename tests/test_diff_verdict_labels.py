"""`diff`'s verdict line names the kernels responsible for a regression by the labels their rows
in the tables below show, not by their whole names: on a CUDA run a flash-attention kernel's
name runs past 200 characters (three such names made one line of over 600). The whole names
stay in the JSON and on hover in HTML. Built from the synthetic CUDA breakdown
(tests/fixtures/results/synthetic_cuda_breakdown, its forward graph), head's GEMM, convolution
and attention kernels three times as slow."""

from __future__ import annotations

import html
import json

import pytest

from inductor_bench.core.diff import diff_results
from inductor_bench.core.rundir import load_any
from inductor_bench.render.diff import render_diff, verdict_line
from inductor_bench.render.doc import for_terminal, new_doc

from .conftest import FIXTURES
from .test_table_fit import _columns

SLOWED = ("extern_attention", "extern_gemm", "extern_conv")
FLASH = ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
         "cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, false, "
         "false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)")


def _side(scale: float) -> dict:
    """The forward graph, 20 samples each 1% apart, its extern kernels ``scale`` times as slow."""
    d = json.loads((FIXTURES / "results" / "synthetic_cuda_breakdown" / "breakdown.json").read_text())
    d["graphs"] = [g for g in d["graphs"] if g["id"] == "0-forward"]
    d["status"], d["errors"] = "ok", []
    (g,) = d["graphs"]
    spread = [1 + 0.01 * (i % 5 - 2) for i in range(20)]
    before = sum(k["ms"] for k in g["kernels"])
    for k in g["kernels"]:
        k["ms"] *= scale if k["category"] in SLOWED else 1.0
        k["samples_ms"] = [k["ms"] * f for f in spread]
    g["wall_ms"] += sum(k["ms"] for k in g["kernels"]) - before
    g["wall_samples_ms"] = [g["wall_ms"] * f for f in spread]
    return d


@pytest.fixture(scope="module")
def slower(tmp_path_factory):
    runs = tmp_path_factory.mktemp("runs")
    for name, scale in (("base", 1.0), ("head", 3.0)):
        (runs / name).mkdir()
        (runs / name / "breakdown.json").write_text(json.dumps(_side(scale)))
    return diff_results(load_any(runs / "base"), load_any(runs / "head"))


def test_the_verdict_names_the_kernels_by_their_rows_labels(slower):
    with for_terminal(400):  # a terminal's: a file or a pipe shows the cuBLAS and cuDNN names whole
        line = verdict_line(slower, new_doc("text"))
        text = render_diff(slower)
    assert line.startswith("REGRESSION: default: all graphs 0.1100 -> 0.1660 ms (+50.9% ")
    table = text.split("Slower kernels, significant (3)\n")[1].split("\n\n")[0]
    labels = _columns(table)["kernel"]
    assert labels == ["sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n…f_kernel__5x_cublas",
                      "flash_fwd_kernel<Flash_fwd_kernel_traits<…>, false, false, …",
                      "sm90_xmma_fprop_implicit_gemm_bf16bf16_b…ff_kernel__5x_cudnn"]
    assert line.endswith("; kernels responsible: " + ", ".join(
        f"{label} {delta} ms (slower)" for label, delta in zip(labels, ("+0.0240", "+0.0200", "+0.0120"),
                                                                strict=True)))
    assert FLASH not in line and "pytorch_flash::" not in line
    assert len(line) == 357  # 699 with the whole names


def test_the_whole_names_stay_in_the_json_and_on_hover(slower):
    names = [k["name"] for s in slower.to_dict()["sections"] for k in s["kernels"]]
    assert FLASH in names
    page = render_diff(slower, "html")
    verdict = page[page.index("kernels responsible: "):].split("</p>")[0]
    assert f'title="{html.escape(FLASH)}"' in verdict
    md = verdict_line(slower, new_doc("markdown"))
    assert "`flash_fwd_kernel<Flash_fwd_kernel_traits<…>, false, false, …`" in md and FLASH not in md


def test_markdown_names_a_plain_kernel_whole_in_the_verdict_as_in_its_row(slower):
    """Pasted into a pull request, cuBLAS's 116-character name is found by the profiler's name."""
    md = verdict_line(slower, new_doc("markdown"))
    cublas = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
    assert f"kernels responsible: `{cublas}` +0.0240 ms (slower), " in md
    assert f"| 0-forward | `{cublas}` " in render_diff(slower, "markdown")
