"""The inputs a compiled module's or kernel file's harness builds, the same in every process.

Inductor's harness (``get_args()``, before torch 2.11 ``benchmark_compiled_module()``) fills
its inputs with ``rand_strided``: ``torch.randn`` on the default generator, unseeded, so every
process profiles different data. A kernel whose time depends on its data then changes speed
from one process to the next: the scalar tail of a C++ ReLU backward branches on the sign of
each input, and on `models/densenet.py`'s backward such a kernel took 73-108 us in 8 fresh
processes on random data, 83-90 us in 8 on the same seed (``docs/statistics.md``). Every
harness the tool runs draws its inputs after ``torch.manual_seed(HARNESS_SEED)``.

``module_args`` is what the profiling worker runs a module on: the harness's inputs, with
the dynamic-shape inputs that ``breakdown --size`` changes drawn again at their new shapes
(``core/resize.py`` works out which, and the shapes).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..core.errors import WorkloadError
from ..core.resize import ResizeError, call_inputs, resize

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


def module_args(mod: Any, sizes: dict[str, int] | None = None) -> list[Any] | None:
    """The inputs of the module's harness (``get_args()``), with the size symbols of ``sizes``
    it has at those values (``breakdown --size``: ``core/resize.py``); None for torch < 2.11's
    harness, which builds its inputs inside ``benchmark_compiled_module`` (``closure_args``)."""
    if not callable(getattr(mod, "get_args", None)):
        return None
    args = list(harness_args(mod))
    return resized(args, Path(mod.__file__).read_text(errors="replace"), sizes) if sizes else args


def closure_args(fn: Callable[[], Any], text: str) -> list[Any]:
    """torch < 2.11: the inputs ``benchmark_compiled_module`` built, in ``call()``'s order, read
    from the closure it hands ``print_performance`` (``lambda: call([arg0_1, ...])``)."""
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False))
    names = call_inputs(text)
    if not names or any(n not in cells for n in names):
        raise WorkloadError("--size: the harness's call does not hand call() the inputs it unpacks")
    return [cells[n].cell_contents for n in names]


def resized(args: list[Any], text: str, sizes: dict[str, int]) -> list[Any]:
    """``args`` (the harness's inputs, in ``call()``'s order) with those that depend on the size
    symbols of ``sizes`` drawn again at their new shapes, or set to their new values."""
    try:
        _, changed = resize(text, sizes)
    except ResizeError as e:
        raise WorkloadError(f"--size: {e}") from None
    names = call_inputs(text)
    from torch._dynamo.testing import rand_strided

    for name, r in changed.items():
        i = names.index(name)
        old = args[i]
        args[i] = r.value if r.value is not None else seeded(
            lambda old=old, r=r: rand_strided(r.shape, r.stride, dtype=old.dtype, device=old.device))
    return args
