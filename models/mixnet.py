"""A mixnet-like conv net: stem conv + BatchNorm, then blocks of pointwise (1x1) expansion,
depthwise 3x3 / 5x5 convs on split channel groups (mixed kernel sizes), squeeze-and-excite,
BatchNorm and SiLU, and a pooled linear head."""

import torch
from torch import nn


class MixConv(nn.Module):
    def __init__(self, ch: int, kernel_sizes=(3, 5)) -> None:
        super().__init__()
        self.splits = [ch // len(kernel_sizes)] * len(kernel_sizes)
        self.splits[0] += ch - sum(self.splits)
        self.convs = nn.ModuleList(
            nn.Conv2d(c, c, k, padding=k // 2, groups=c, bias=False)
            for c, k in zip(self.splits, kernel_sizes, strict=True)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([conv(t) for conv, t in zip(self.convs, x.split(self.splits, 1), strict=True)], 1)


class Block(nn.Module):
    def __init__(self, ch: int, expand: int = 3) -> None:
        super().__init__()
        mid = ch * expand
        self.expand = nn.Sequential(nn.Conv2d(ch, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.SiLU())
        self.mix = nn.Sequential(MixConv(mid), nn.BatchNorm2d(mid), nn.SiLU())
        self.se = nn.Sequential(
            nn.AdaptiveAvgPool2d(1),
            nn.Conv2d(mid, mid // 4, 1),
            nn.SiLU(),
            nn.Conv2d(mid // 4, mid, 1),
            nn.Sigmoid(),
        )
        self.project = nn.Sequential(nn.Conv2d(mid, ch, 1, bias=False), nn.BatchNorm2d(ch))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.mix(self.expand(x))
        return x + self.project(y * self.se(y))


class MixNet(nn.Module):
    def __init__(self, ch: int = 16, blocks: int = 2, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, ch, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(ch), nn.SiLU()
        )
        self.blocks = nn.Sequential(*(Block(ch) for _ in range(blocks)))
        self.head = nn.Linear(ch, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.blocks(self.stem(x))
        return self.head(x.mean((2, 3)))


def make_workload(device: str = "cpu", dtype: torch.dtype = torch.float32, batch_size: int = 8):
    torch.manual_seed(0)
    model = MixNet().to(device=device, dtype=dtype)
    x = torch.randn(batch_size, 3, 32, 32, device=device, dtype=dtype)
    return model, (x,)
