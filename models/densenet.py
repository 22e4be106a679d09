"""A densenet-like net of many small ops: dense layers (BatchNorm → ReLU → 1x1 conv → BatchNorm
→ ReLU → 3x3 conv) whose outputs are concatenated onto their inputs, with a transition
(1x1 conv + average pool) between blocks. At small batch its time goes to per-op overhead,
which the busy % makes visible."""

import torch
from torch import nn


class DenseLayer(nn.Module):
    def __init__(self, c_in: int, growth: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.BatchNorm2d(c_in),
            nn.ReLU(),
            nn.Conv2d(c_in, 2 * growth, 1, bias=False),
            nn.BatchNorm2d(2 * growth),
            nn.ReLU(),
            nn.Conv2d(2 * growth, growth, 3, padding=1, bias=False),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, self.body(x)], 1)


class DenseNet(nn.Module):
    def __init__(self, growth: int = 8, layers: int = 3, blocks: int = 2, classes: int = 10) -> None:
        super().__init__()
        ch = 2 * growth
        mods: list[nn.Module] = [nn.Conv2d(3, ch, 3, padding=1, bias=False)]
        for b in range(blocks):
            for _ in range(layers):
                mods.append(DenseLayer(ch, growth))
                ch += growth
            if b < blocks - 1:
                mods += [
                    nn.BatchNorm2d(ch),
                    nn.ReLU(),
                    nn.Conv2d(ch, ch // 2, 1, bias=False),
                    nn.AvgPool2d(2),
                ]
                ch //= 2
        self.features = nn.Sequential(*mods, nn.BatchNorm2d(ch), nn.ReLU())
        self.head = nn.Linear(ch, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).mean((2, 3)))


def make_workload(device: str = "cpu", dtype: torch.dtype = torch.float32, batch_size: int = 2):
    torch.manual_seed(0)
    model = DenseNet().to(device=device, dtype=dtype)
    x = torch.randn(batch_size, 3, 32, 32, device=device, dtype=dtype)
    return model, (x,)
