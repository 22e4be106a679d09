"""A deliberately slower variant of ``mlp.py``, for the diff and merge-gate examples.

Same inputs and factory as ``mlp.py``, with two changes a pull request could make by accident:
a larger hidden size (every GEMM does twice the work) and an extra op chain after the second
GELU (softmax, then a cumulative sum that Inductor does not fuse with its neighbours), which
adds kernels of its own.
"""

import torch
from torch import nn


class SlowMLP(nn.Module):
    def __init__(self, d_in: int = 256, hidden: int = 1024, d_out: int = 64) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, d_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm(nn.functional.gelu(self.fc1(x)))
        x = nn.functional.gelu(self.fc2(x))
        x = x + 0.1 * torch.softmax(x, dim=-1).cumsum(dim=-1)  # the extra, unfused chain
        return self.fc3(x)


def make_workload(device: str = "cpu", dtype: torch.dtype = torch.float32, batch_size: int = 64):
    torch.manual_seed(0)
    model = SlowMLP().to(device=device, dtype=dtype)
    x = torch.randn(batch_size, 256, device=device, dtype=dtype)
    return model, (x,)
