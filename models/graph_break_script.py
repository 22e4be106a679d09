"""A script (no make_workload factory) whose compiled function has a graph break, so one
call compiles two graphs. `inductor-bench breakdown` runs it and captures every graph."""

import torch


@torch.compile
def f(x: torch.Tensor) -> torch.Tensor:
    y = torch.sin(x).sum(-1, keepdim=True) * x
    print("graph break here")  # dynamo cannot trace print: the graph splits
    return torch.nn.functional.softmax(y @ x.T, -1)


if __name__ == "__main__":
    f(torch.randn(128, 64))
