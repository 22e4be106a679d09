"""``mlp.py`` about 25% slower: the verdict benchmark's slower variant (scripts/bench_verdicts.py).

Same inputs, layers and factory as ``mlp.py``; only the hidden size grows from 512 to 624, as a
pull request widening a layer would. Measured on the 2-core CPU machine (AMD EPYC,
``OMP_NUM_THREADS=1``, torch 2.13.0+cpu, 2026-11-23): the compiled training step (forward +
backward of the sum), this file and ``mlp.py`` called alternately in one process, 400 steps
each, took 1.245x, 1.247x and 1.256x the time of ``mlp.py`` (medians, three processes).
``mlp_slow.py`` (twice the hidden size and an extra op chain), measured the same way, took
2.95x: far beyond what a verdict needs to tell.
"""

import torch
from torch import nn


class WiderMLP(nn.Module):
    def __init__(self, d_in: int = 256, hidden: int = 624, d_out: int = 64) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, d_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm(nn.functional.gelu(self.fc1(x)))
        x = nn.functional.gelu(self.fc2(x))
        return self.fc3(x)


def make_workload(device: str = "cpu", dtype: torch.dtype = torch.float32, batch_size: int = 64):
    torch.manual_seed(0)
    model = WiderMLP().to(device=device, dtype=dtype)
    x = torch.randn(batch_size, 256, device=device, dtype=dtype)
    return model, (x,)
