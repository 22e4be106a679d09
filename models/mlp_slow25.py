"""``mlp.py`` about 25% slower: the verdict benchmark's slower variant (scripts/bench_verdicts.py).

Same inputs, layers and factory as ``mlp.py``; only the hidden size grows from 512 to 624, as a
pull request widening a layer would. Measured on the 2-core CPU machine (AMD EPYC,
``OMP_NUM_THREADS=1``, torch 2.13.0+cpu, 2026-11-23): the compiled training step (forward +
backward of the sum), this file and ``mlp.py`` called alternately in one process, 400 steps
each, took 1.245x, 1.247x and 1.256x the time of ``mlp.py`` (medians, three processes).
``mlp_slow.py`` (twice the hidden size and an extra op chain), measured the same way, took
2.95x: far beyond what a verdict needs to tell.
"""

import importlib.util
from pathlib import Path

import torch

# mlp.py's own model, loaded by path (model files are run as scripts, not as a package)
_spec = importlib.util.spec_from_file_location("mlp", Path(__file__).with_name("mlp.py"))
_mlp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mlp)

HIDDEN = 624  # mlp.py: 512


def make_workload(device: str = "cpu", dtype: torch.dtype = torch.float32, batch_size: int = 64):
    torch.manual_seed(0)
    model = _mlp.MLP(hidden=HIDDEN).to(device=device, dtype=dtype)
    x = torch.randn(batch_size, 256, device=device, dtype=dtype)
    return model, (x,)
