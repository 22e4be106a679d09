"""The step sets the model's mode as the README says: eval for inference, training for
``--train``, whichever mode the factory left it in (a factory calling ``model.eval()``, as
Hugging Face examples do, still trains with dropout on)."""

from __future__ import annotations

import torch

from inductor_bench.core.workload import WorkloadOptions
from inductor_bench.runner.workload import build_step


class Probe(torch.nn.Module):
    """Records the mode its forward ran in."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 2)
        self.seen: list[bool] = []

    def forward(self, x):
        self.seen.append(self.training)
        return self.lin(x)


def _run(train: bool, factory_mode: bool) -> list[bool]:
    model = Probe().train(factory_mode)
    step = build_step(model, (torch.ones(3, 4),), {}, WorkloadOptions(path="m.py", train=train), "cpu")
    step()
    step()
    return model.seen


def test_inference_runs_in_eval_mode_whatever_the_factory_left():
    assert _run(train=False, factory_mode=True) == [False, False]
    assert _run(train=False, factory_mode=False) == [False, False]


def test_train_runs_in_training_mode_whatever_the_factory_left():
    assert _run(train=True, factory_mode=False) == [True, True]
    assert _run(train=True, factory_mode=True) == [True, True]
