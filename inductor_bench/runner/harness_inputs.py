"""The inputs a compiled module's or kernel file's harness builds, the same in every process.

Inductor's harness (``get_args()``, before torch 2.11 ``benchmark_compiled_module()``) fills
its inputs with ``rand_strided``: ``torch.randn`` on the default generator, unseeded, so every
process profiles different data. A kernel whose time depends on its data then changes speed
from one process to the next: the scalar tail of a C++ ReLU backward branches on the sign of
each input, and on `models/densenet.py`'s backward such a kernel took 73-108 us in 8 fresh
processes on random data, 83-90 us in 8 on the same seed (``docs/statistics.md``). Every
harness the tool runs draws its inputs after ``torch.manual_seed(HARNESS_SEED)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

HARNESS_SEED = 0

T = TypeVar("T")


def seeded(build: Callable[[], T]) -> T:
    """``build()`` (a harness building its random inputs) with the generators of every device
    seeded with HARNESS_SEED first."""
    import torch

    torch.manual_seed(HARNESS_SEED)
    return build()


def harness_args(mod: Any) -> Any:
    """The module's ``get_args()``, drawn from HARNESS_SEED."""
    return seeded(mod.get_args)
