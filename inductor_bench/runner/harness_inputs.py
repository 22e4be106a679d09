"""The inputs a compiled module's or kernel file's harness builds, the same in every process.

Inductor's harness (``get_args()``, before torch 2.11 ``benchmark_compiled_module()``) fills
its inputs with ``rand_strided``: ``torch.randn`` on the default generator, unseeded, so every
process profiles different data. A kernel whose time depends on its data then changes speed
from one process to the next: the scalar tail of a C++ ReLU backward branches on the sign of
each input, and on `models/densenet.py`'s backward such a kernel took 73-108 us in 8 fresh
processes on random data, 83-90 us in 8 on the same seed (``docs/statistics.md``). Every
harness the tool runs draws its inputs after ``torch.manual_seed(HARNESS_SEED)``.

``module_args`` is what the profiling worker runs a module on: the harness's inputs set to the
values the model's first call gave them (within a size budget)
(``runner/call_inputs.py``), with the dynamic-shape inputs drawn again at the sizes it is
profiled at (``breakdown --size``, or those most of its calls ran at: ``core/call_sizes.py``;
``core/resize.py`` works out which inputs change, and their shapes), then set to the values
the first call at those sizes gave them.
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ..core.errors import WorkloadError
from ..core.resize import ResizeError, applicable, call_inputs, resize
from . import call_inputs as real_inputs
from .call_inputs import Restorer

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


def module_args(mod: Any, sizes: dict[str, int] | None = None) -> tuple[list[Any] | None, Restorer]:
    """The inputs of the module's harness (``get_args()``), with the recorded values of its
    inputs, and the size symbols of ``sizes`` it has at those values
    (``breakdown --size``: ``core/resize.py``); None for torch < 2.11's harness, which builds
    its inputs inside ``benchmark_compiled_module`` (``closure_args``). With them, what puts
    back the inputs the graph changes in place (``Restorer``)."""
    if not callable(getattr(mod, "get_args", None)):
        return None, Restorer()
    args = list(harness_args(mod))
    restorer = real_inputs.apply(args, Path(mod.__file__), mod)
    if sizes:
        args = resized(args, Path(mod.__file__).read_text(errors="replace"), sizes)
        real_inputs.apply_sized(args, Path(mod.__file__), sizes, restorer)
    return args, restorer


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


def load_module(path: str):
    spec = importlib.util.spec_from_file_location(f"inductor_bench_graph_{abs(hash(path))}", path)
    if spec is None or spec.loader is None:
        raise WorkloadError(f"{path}: cannot load compiled module")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if not callable(getattr(mod, "call", None)):
        raise WorkloadError(f"{path}: compiled module has no call()")
    if not any(callable(getattr(mod, h, None)) for h in ("get_args", HARNESS_2_5)):
        raise WorkloadError(f"{path}: compiled module has no get_args() nor {HARNESS_2_5}(): "
                            "it was written without TORCHINDUCTOR_BENCHMARK_KERNEL=1")
    return mod


# torch < 2.11 writes no get_args(): its harness builds the inputs inside
# benchmark_compiled_module(times, repeat) and hands print_performance a closure that calls
# call() on a fresh list of them.
HARNESS_2_5 = "benchmark_compiled_module"


@dataclass
class HarnessCall:
    """One call of a module on its harness's inputs, as a zero-argument function; ``restore()``
    puts back the inputs the graph changes in place (``call_inputs.py``), to be called before
    each call outside what is timed; ``args``: the inputs (None: torch < 2.11's closure)."""

    call: Callable[[], Any]
    restorer: Restorer
    args: list[Any] | None = None

    def __call__(self) -> Any:
        return self.call()

    def restore(self) -> None:
        self.restorer.restore()


def harness(mod: Any, sizes: dict[str, int] | None = None) -> HarnessCall:
    """One call of the module on its harness's inputs (at ``sizes``, ``breakdown --size``) as
    the model's first call had them."""
    args, restorer = module_args(mod, sizes)
    if args is not None:
        return HarnessCall(lambda: mod.call(list(args)), restorer, args)  # call() clears its list
    fn = _harness_closure(mod)  # torch < 2.11: the closure the harness calls, over its inputs
    text = Path(mod.__file__).read_text(errors="replace")
    with contextlib.suppress(WorkloadError):  # a closure that is not the usual: its zeros stay
        restorer = real_inputs.apply(closure_args(fn, text), Path(mod.__file__), mod)
    if sizes and applicable(text, sizes):
        args = resized(closure_args(fn, text), text, sizes)
        real_inputs.apply_sized(args, Path(mod.__file__), sizes, restorer)
        return HarnessCall(lambda: mod.call(list(args)), restorer, args)
    return HarnessCall(fn, restorer)


def _harness_closure(mod: Any) -> Callable[[], Any]:
    """torch < 2.11's harness: the closure ``benchmark_compiled_module`` hands print_performance."""
    import torch._inductor.utils as inductor_utils

    caught: list[Callable[[], Any]] = []
    real = inductor_utils.print_performance
    inductor_utils.print_performance = lambda fn, *a, **kw: caught.append(fn) or 0.0
    try:
        seeded(getattr(mod, HARNESS_2_5))
    finally:
        inductor_utils.print_performance = real
    if not caught:
        raise WorkloadError(f"{HARNESS_2_5}() of this module never handed print_performance a call")
    return caught[0]
