"""A small MLP: Linear → GELU → LayerNorm → Linear → GELU → Linear.

GEMMs go to extern kernels (cuBLAS / MKL); GELU and LayerNorm fuse into pointwise and
reduction kernels.
"""

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, d_in: int = 256, hidden: int = 512, d_out: int = 64) -> None:
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
    model = MLP().to(device=device, dtype=dtype)
    x = torch.randn(batch_size, 256, device=device, dtype=dtype)
    return model, (x,)
