"""A script compiled with dynamic shapes: one graph serves batches of 24, 40 and 7, its batch a
size symbol. `inductor-bench breakdown` profiles it at the size its compiled module's harness
holds (the first call's, 24, in a cold cache) and says so, naming the size's symbol;
`--size SYMBOL=64` with that name profiles it at 64 (torch 2.13 calls it `s33`)."""

import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 256)).to(device)
compiled = torch.compile(model, dynamic=True)

if __name__ == "__main__":
    with torch.no_grad():
        for batch in (24, 40, 7):
            compiled(torch.randn(batch, 256, device=device))
