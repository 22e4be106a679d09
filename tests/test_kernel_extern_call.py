"""`kernel RUN "OP #n"`: an extern call as the report's tables number it is read as its op only
where the run has that call. Synthetic run directory, shaped as a CPU breakdown of models/mlp.py
(three aten::addmm calls, #0-#2, and two C++ kernels)."""

from __future__ import annotations

import pytest

from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
from inductor_bench.core.sources import CallSite

from .test_kernel_cli import error_line, run_cli


@pytest.fixture
def mlp_run(tmp_path):
    addmm = KernelStat(name="aten::addmm", category="extern_gemm", calls=3, ms=0.409)
    kernels = [addmm, KernelStat(name="cpp_fused_gelu_1", category="cpp_pointwise", calls=1, ms=0.021)]
    sites = [CallSite(kernel="aten::addmm", index=i, callee="extern_kernels.addmm", calls=1, ms=ms)
             for i, ms in enumerate([0.136, 0.235, 0.038])]
    graph = GraphResult(id="0-inference", role="inference", frame_id=0, kernels=kernels, sites=sites,
                        wall_ms=0.562, kernel_ms=0.430)
    (tmp_path / "breakdown.json").write_text(BreakdownResult(model="mlp", device="cpu", graphs=[graph]).to_json())
    return tmp_path


CALLS = "its calls of aten::addmm: 0-inference/aten::addmm #0, 0-inference/aten::addmm #1, 0-inference/aten::addmm #2"


@pytest.mark.parametrize("name,message", [
    # a call the run does not have: refused, naming those it has (it was read as aten::addmm)
    ("aten::addmm #7", f"no call aten::addmm #7 in {{run}}; {CALLS}"),
    ("0-inference/aten::addmm #3", f"no call aten::addmm #3 in graph 0-inference in {{run}}; {CALLS}"),
    # one it has: its op, refused as an extern op, saying where its time is and what could
    # replace it (the refusal pointed nowhere)
    ("aten::addmm #2", ("0-inference/aten::addmm has no Triton kernel file (category GEMM (extern)): "
     "only Triton kernels can be benchmarked; an extern op's calls are timed in inductor-bench "
     "report {run} --by op, and inductor-bench compare MODEL.py --modes default,max-autotune "
     "shows what max-autotune makes of it")),
])
def test_extern_call_number(capsys, mlp_run, name, message):
    code, _, err = run_cli(capsys, str(mlp_run), name)
    assert code == 2
    assert message.format(run=mlp_run) in error_line(err)
