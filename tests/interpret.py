"""Inductor's CUDA Triton kernels run on CPU tensors by Triton's interpreter (``TRITON_INTERPRET=1``).

A kernel file (or a compiled module's kernels) is loaded the way ``inductor-bench kernel`` loads
it (``runner.kernelbench.load_kernel``: a private copy, the heuristic's ``inductor_meta`` patched
for the tuning mode), then launched under the interpreter. In interpreter mode
``CachingAutotuner.run`` runs ``configs[0]`` without compiling or autotuning: these helpers test
loading, the max-autotune patch, the config spaces and numerical results, never timing.

What a CUDA kernel file or module asks of a GPU is pointed at the CPU here, in one place
(``on_cpu``, ``cpu_module``):
- ``triton_helpers.set_driver_to_gpu()`` at import: stubbed (``load_kernel(listing_only=True)``);
- tensors made for ``device='cuda...'`` (``rand_strided``, ``torch.zeros``, the autotuner's
  scratch allocator): made on the CPU by a ``TorchFunctionMode``;
- ``torch.cuda.set_device``, ``torch.cuda._DeviceGuard``, the raw stream getter and a module's
  ``empty_strided_cuda``: no-ops or CPU equivalents;
- ``libdevice``: Triton's interpreter (3.8 at least) does not patch it, so ``libdevice.exp``
  returns None; the kernels' ``libdevice`` is routed to ``tl.math``, which the interpreter patches;
- Triton 3.6's interpreter (torch 2.11) cannot use a one-element block as a loop bound: it gets
  3.8's conversion (``_one_element_blocks_as_index``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

INTERPRET_ENV = "TRITON_INTERPRET"
RUNNER = "scripts/interpret_tests.sh"


def interpreter_missing() -> str | None:
    """Why the interpreter tests cannot run in this process (None: they can)."""
    if os.environ.get(INTERPRET_ENV) != "1":
        return (f"needs Triton's interpreter: {INTERPRET_ENV}=1 and a CUDA build of torch; "
                f"run {RUNNER} (it sets both up)")
    try:
        import numpy  # noqa: F401  (the interpreter computes with numpy)
        import triton.runtime.interpreter  # noqa: F401
    except ImportError as e:
        return f"Triton's interpreter is not importable here ({e}); run {RUNNER}"
    return None


def _is_cuda(device: Any) -> bool:
    import torch

    try:
        return device is not None and torch.device(device).type == "cuda"
    except (RuntimeError, TypeError):
        return False


def _cuda_as_cpu_mode() -> Any:
    from torch.overrides import TorchFunctionMode

    class CudaAsCpu(TorchFunctionMode):
        """Every torch call that names a CUDA device gets the CPU instead."""

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if _is_cuda(kwargs.get("device")):
                kwargs["device"] = "cpu"
            return func(*args, **kwargs)

    return CudaAsCpu()


class LibdeviceViaMath:
    """``libdevice.<fn>`` resolved to ``tl.math.<fn>`` when the kernel runs (the interpreter
    patches ``tl.math`` during a launch, not ``libdevice``)."""

    def __getattr__(self, name: str) -> Any:
        import triton.language as tl

        fn = getattr(tl.math, name, None)
        if fn is None:
            raise AttributeError(f"libdevice.{name} has no tl.math counterpart for the interpreter")
        return fn


LIBDEVICE = LibdeviceViaMath()


@contextlib.contextmanager
def on_cpu() -> Iterator[None]:
    """Run a CUDA kernel file's or module's Python on the CPU (see the module docstring)."""
    import torch
    from torch._inductor.runtime import triton_helpers

    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(torch.cuda, "set_device", lambda device: None))
        stack.enter_context(mock.patch.object(torch.cuda, "_DeviceGuard",
                                              lambda index: contextlib.nullcontext()))
        stack.enter_context(mock.patch.object(triton_helpers, "libdevice", LIBDEVICE))
        stack.enter_context(_one_element_blocks_as_index())
        stack.enter_context(_cuda_as_cpu_mode())
        yield


def _one_element_blocks_as_index() -> Any:
    """Triton 3.6's interpreter turns a block into a Python int (``range(0, r0_numel, ...)``)
    only when its array is 0-d; from 3.8 it squeezes a one-element block first. The same here."""
    import triton.runtime.interpreter as interpreter

    real = getattr(interpreter, "_patch_lang_tensor", None)
    if real is None:
        return contextlib.nullcontext()

    def patch_tensor(tensor: Any, scope: Any) -> None:
        real(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.squeeze()))

    return mock.patch.object(interpreter, "_patch_lang_tensor", patch_tensor)


def _empty_strided_cpu(size: Any, stride: Any, dtype: Any) -> Any:
    import torch

    return torch.empty_strided(size, stride, dtype=dtype, device="cpu")


def cpu_module(module: Any) -> Any:
    """Point a loaded kernel file's or module's GPU names at the CPU."""
    replacements = {"libdevice": LIBDEVICE, "get_raw_stream": lambda device: 0,
                    "empty_strided_cuda": _empty_strided_cpu}
    for name, value in replacements.items():
        if hasattr(module, name):
            setattr(module, name, value)
    return module


def load_interpreted(kf: Any, mode: str, work_dir: Path, tag: str) -> tuple[Any, Any]:
    """(module, autotuner) of a kernel file, loaded as ``inductor-bench kernel`` loads it for
    ``mode`` (baseline or max-autotune of the installed torch), ready for the interpreter."""
    from inductor_bench.runner.kernelbench import load_kernel, patch_for

    module, tuner = load_kernel(kf, patch_for(mode), work_dir, tag, listing_only=True)
    return cpu_module(module), tuner


def run_with_config(tuner: Any, config: Any, launch: Any) -> Any:
    """``launch()`` with the autotuner holding only ``config``: the interpreter runs configs[0]."""
    saved = tuner.configs
    tuner.configs = [config]
    try:
        with on_cpu():
            return launch()
    finally:
        tuner.configs = saved


def fewest_programs_first(config: Any) -> tuple[int, int]:
    """Sort key: the widest XBLOCK first (the interpreter's custom reductions, Welford's, step
    through every reduction element once per program), then the most elements per program."""
    n = 1
    for key, value in config.kwargs.items():
        if key.endswith("BLOCK"):
            n *= int(value)
    return -int(config.kwargs.get("XBLOCK", 1)), -n


def load_compiled_module(path: Path, work_dir: Path, mode: str) -> Any:
    """Import a compiled module with every ``async_compile.triton(name, source)`` kernel written
    to a kernel file and loaded through ``load_interpreted`` (the ``kernel`` command's loading).
    Each kernel's candidate with the widest blocks goes first (``fewest_programs_first``), so the
    interpreter, which runs ``configs[0]``, runs the fewest programs: 64 instead of 8192 for a
    persistent reduction over 8192 rows."""
    from torch._inductor.async_compile import AsyncCompile

    from inductor_bench.core.kernelfile import read_kernel_file

    kernels_dir = work_dir / "kernels"
    kernels_dir.mkdir(parents=True, exist_ok=True)
    loaded: dict[str, Any] = {}

    def triton(self: Any, kernel_name: str, source_code: str, *args: Any, **kwargs: Any) -> Any:
        kpath = kernels_dir / f"{kernel_name}.py"
        kpath.write_text(source_code)
        _, tuner = load_interpreted(read_kernel_file(kpath), mode, work_dir, kernel_name)
        tuner.configs = sorted(tuner.configs, key=fewest_programs_first)
        loaded[kernel_name] = tuner
        return tuner

    spec = importlib.util.spec_from_file_location(f"interpreted_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with mock.patch.object(AsyncCompile, "triton", triton), on_cpu():
        spec.loader.exec_module(module)
    module.interpreted_kernels = loaded
    return cpu_module(module)
