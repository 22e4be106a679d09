"""One pre-norm transformer block: LayerNorm → multi-head self-attention (SDPA) → residual →
LayerNorm → MLP (GELU) → residual."""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim: int = 128, heads: int = 4, mlp_ratio: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, mlp_ratio * dim)
        self.fc2 = nn.Linear(mlp_ratio * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, c // self.heads).unbind(2)
        q, k, v = (y.transpose(1, 2) for y in (q, k, v))
        a = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, c))
        return x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x))))


def make_workload(device: str = "cpu", dtype: torch.dtype = torch.float32, batch_size: int = 8):
    torch.manual_seed(0)
    model = Block().to(device=device, dtype=dtype)
    x = torch.randn(batch_size, 64, 128, device=device, dtype=dtype)
    return model, (x,)
