"""The analysis side works where torch (and triton) cannot be imported at all."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"

PURE_MODULES = ["trace", "classify", "breakdown", "modparse", "results", "categories"]

CHILD = r"""
import importlib, sys

class Blocker:
    # refuses torch and triton, whatever imports them
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "triton"):
            raise ImportError(f"{name} is blocked in this test")
        return None

sys.meta_path.insert(0, Blocker())
for name in sys.argv[2].split(","):
    importlib.import_module("inductor_bench." + name)

# and the analysis itself runs: a recorded CPU graph and the synthetic CUDA graph
from inductor_bench.breakdown import analyze_graph
from inductor_bench.modparse import read_module
from inductor_bench.results import GraphResult
from inductor_bench.trace import load_trace

fx = sys.argv[1]
for device, gdir, trace in (("cpu", "/cpu_mlp_train/0-forward", "trace.json.gz"),
                            ("cuda", "/synthetic_cuda_transformer", "trace.json")):
    g = analyze_graph(load_trace(fx + gdir + "/" + trace), read_module(fx + gdir + "/module.py"),
                      GraphResult(id="g", role="forward", device=device))
    print(device, g.iterations, len(g.kernels))
leaked = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "triton"))
print("leaked", leaked)
"""


def test_analysis_imports_and_runs_without_torch():
    r = subprocess.run(
        [sys.executable, "-c", CHILD, str(FIXTURES), ",".join(PURE_MODULES)],
        capture_output=True, text=True, cwd=ROOT, check=False, timeout=120,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split("\n") == ["cpu 5 2", "cuda 3 9", "leaked []", ""]


def test_the_blocker_really_blocks():
    """The child above would be meaningless if importing torch still worked in it."""
    code = CHILD.split("for name in")[0] + "import torch\n"
    r = subprocess.run([sys.executable, "-c", code, "", ""], capture_output=True, text=True,
                       cwd=ROOT, check=False, timeout=60)
    assert r.returncode != 0
    assert "torch is blocked in this test" in r.stderr
