"""The top table's heading names what its rows are: on the host an extern call is an ATen op
(``aten::mm``), so a table holding them reads "kernels and extern ops", where it read "Top 7 of 7
kernels" over rows of ``aten::mm`` and ``aten::addmm``; on a GPU every row is a device kernel (a
GEMM's is cuBLAS's), "kernels" (the recorded CPU run of mlp.py and the recorded H200 run)."""

from __future__ import annotations

from pathlib import Path

from inductor_bench.core.rundir import load_breakdown
from inductor_bench.core.views import By
from inductor_bench.render.breakdown import render_breakdown

FIXTURES = Path(__file__).parent / "fixtures"


def _heading(run: Path) -> tuple[str, list[str]]:
    r = load_breakdown(run)
    (line,) = [ln for ln in render_breakdown(r, by=By.OP).splitlines() if ln.startswith("Top ")]
    return line, sorted({k.category for g in r.measured() for k in g.kernels})


def test_the_host_table_of_extern_ops_says_so():
    line, categories = _heading(FIXTURES / "results" / "cpu_mlp_train_roofline")
    assert "extern_gemm" in categories
    assert line == "Top 7 of 7 kernels and extern ops (all graphs)"


def test_a_gpu_table_names_its_kernels():
    line, categories = _heading(FIXTURES / "runs" / "cuda_h200_transformer_train")
    assert "extern_gemm" in categories  # cuBLAS's kernels: device kernels all the same
    assert line.endswith(" kernels (all graphs)") and "extern" not in line
