"""The CUDA path end to end. Marked `gpu`: skipped on machines without CUDA."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench.core.categories import TRITON_CATEGORIES

from .conftest import run_breakdown_cached

pytestmark = [pytest.mark.gpu, pytest.mark.e2e]
AGREEMENT = 0.10  # tool vs independent device-time measurement, as on CPU


@pytest.fixture(scope="module")
def cuda_block(tmp_path_factory):
    return run_breakdown_cached(tmp_path_factory, "transformer_block.py", device="cuda", train=True)


def test_cuda_transformer_train(cuda_block):
    result, run_dir, err = cuda_block
    assert err is None, err
    assert result.device == "cuda" and result.status == "ok"
    assert {"forward", "backward"} <= {g.role for g in result.graphs}
    t = result.totals()
    assert any(t.categories.get(c, 0) > 0 for c in TRITON_CATEGORIES)
    assert t.categories.get("extern_gemm", 0) > 0
    for g in result.graphs:
        assert 0 < g.busy_pct <= 100.0
        assert g.busy_ms <= g.wall_ms
        triton = [k for k in g.kernels if k.category in TRITON_CATEGORIES]
        assert triton and all(k.file and (run_dir / k.file).exists() for k in triton)
        gemm = [k for k in g.kernels if k.category == "extern_gemm"]
        assert all(k.launched_by for k in gemm)


def _independent_device_ms(module: Path, cache: Path, calls: int = 30) -> float:
    code = f"""
import importlib.util, json, os
os.environ["TORCHINDUCTOR_CACHE_DIR"] = {str(cache)!r}
import torch
from torch.autograd import DeviceType
from torch.profiler import profile, ProfilerActivity
spec = importlib.util.spec_from_file_location("m", {str(module)!r})
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
args = m.get_args()
# the values the model's first call gave the graph, as the tool profiles on: the same workload
from pathlib import Path
from inductor_bench.runner import call_inputs
call_inputs.apply(args, Path({str(module)!r}), m)
for _ in range(5): m.call(list(args))
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
    for _ in range({calls}): m.call(list(args))
    torch.cuda.synchronize()
total = sum(e.self_device_time_total for e in p.events() if e.device_type == DeviceType.CUDA)
print(json.dumps(total / {calls} / 1e3))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_cuda_kernel_time_agrees_with_independent_profile(cuda_block):
    result, run_dir, _ = cuda_block
    for g in result.graphs:
        independent = _independent_device_ms(run_dir / g.module, run_dir / "cache")
        assert g.kernel_ms == pytest.approx(independent, rel=AGREEMENT), (g.id, g.kernel_ms, independent)


def test_cuda_report_renders(cuda_block):
    _, run_dir, _ = cuda_block
    p = subprocess.run([sys.executable, "-m", "inductor_bench.cli", "report", str(run_dir)],
                       capture_output=True, text=True, check=True)
    assert "Triton" in p.stdout and "union of GPU kernel intervals" in p.stdout
    assert json.loads((run_dir / "meta.json").read_text())["status"] == "ok"
