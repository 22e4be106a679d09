"""Model files: the convention, the options, and (in a worker) building the step to run.

A model file is a Python file. If it defines a factory::

    def make_workload(device: str, dtype: torch.dtype, batch_size: int = 8):
        model = MyModel().to(device=device, dtype=dtype)
        return model, (torch.randn(batch_size, 64, device=device, dtype=dtype),)

the tool builds the model itself, compiles it with the requested mode and runs one step
(inference, or forward + backward of a scalar loss with ``--train``). The factory may take any
subset of ``device``, ``dtype`` and ``batch_size``; it returns ``(model, args)`` or
``(model, args, kwargs)``. A file without the factory runs as a script, and every graph the
script compiles is captured.

The top half of this module is pure (no torch): it validates options and looks at the file's
syntax. ``build_step`` (torch) runs inside the worker.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .errors import UsageError, WorkloadError

FACTORY = "make_workload"
MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs", "eager")
DEVICES = ("auto", "cuda", "cpu")
DTYPES = ("float32", "bfloat16", "float16")


@dataclass
class WorkloadOptions:
    path: str
    device: str = "auto"
    train: bool = False
    dtype: str = "float32"
    autocast: bool = False  # keep the model in float32 and run under torch.autocast(dtype)
    mode: str = "default"
    batch_size: int | None = None
    freezing: bool = False  # inference only: weights become constants (CPU GEMM templates need it)

    def validate(self) -> WorkloadOptions:
        p = Path(self.path)
        if not p.exists():
            raise UsageError(f"{self.path}: no such file")
        if p.is_dir() or p.suffix != ".py":
            raise UsageError(f"{self.path}: not a Python file (expected a model file ending in .py)")
        if self.device not in DEVICES:
            raise UsageError(f"--device must be one of {', '.join(DEVICES)}, not {self.device!r}")
        if self.dtype not in DTYPES:
            raise UsageError(f"--dtype must be one of {', '.join(DTYPES)}, not {self.dtype!r}")
        if self.mode not in MODES:
            raise UsageError(f"--mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if self.autocast and self.dtype == "float32":
            raise UsageError("--autocast needs --dtype bfloat16 or float16")
        if self.freezing and self.train:
            raise UsageError("--freezing is for inference: frozen weights cannot be trained")
        if self.batch_size is not None and self.batch_size < 1:
            raise UsageError("--batch-size must be at least 1")
        kind = file_kind(p)
        if kind == "script" and self.batch_size is not None:
            raise UsageError(
                f"{self.path} has no {FACTORY}() factory and runs as a script: --batch-size needs the factory"
            )
        return self

    @property
    def name(self) -> str:
        return Path(self.path).stem

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def file_kind(path: Path) -> str:
    """'factory' if the file defines make_workload at top level, else 'script'."""
    try:
        tree = ast.parse(path.read_text(errors="replace"), filename=str(path))
    except SyntaxError as e:
        raise UsageError(f"{path}:{e.lineno}: syntax error: {e.msg}") from None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == FACTORY:
            return "factory"
    return "script"


# ---- torch side (worker only) -------------------------------------------------------------


def torch_dtype(name: str):
    import torch

    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]


def resolve_device(requested: str) -> str:
    import torch

    from .errors import DeviceError

    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        raise DeviceError(
            f"--device cuda: CUDA is not available here (torch {torch.__version__}); "
            "use --device cpu or run on a CUDA machine"
        )
    return requested


def load_factory(path: str) -> Callable[..., Any]:
    import runpy

    try:
        ns = runpy.run_path(path, run_name="inductor_bench_workload")
    except Exception as e:
        raise WorkloadError(f"{path}: importing the model file raised {type(e).__name__}: {e}") from e
    fn = ns.get(FACTORY)
    if not callable(fn):
        raise UsageError(f"{path}: {FACTORY} is not a function")
    return fn


def call_factory(fn: Callable[..., Any], opts: WorkloadOptions, device: str):
    """Call the factory with the parameters it declares; return (model, args, kwargs)."""
    offered = {
        "device": device,
        "dtype": torch_dtype("float32" if opts.autocast else opts.dtype),
        "batch_size": opts.batch_size,
    }
    params = inspect.signature(fn).parameters
    takes_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    if opts.batch_size is not None and "batch_size" not in params and not takes_kw:
        raise UsageError(f"{opts.path}: {FACTORY}() takes no batch_size, so --batch-size cannot apply")
    kwargs = {k: v for k, v in offered.items() if (k in params or takes_kw) and v is not None}
    try:
        out = fn(**kwargs)
    except Exception as e:
        raise WorkloadError(f"{FACTORY}() raised {type(e).__name__}: {e}") from e
    if not isinstance(out, tuple) or len(out) not in (2, 3):
        raise WorkloadError(f"{FACTORY}() must return (model, args) or (model, args, kwargs)")
    model, args = out[0], out[1]
    call_kwargs = out[2] if len(out) == 3 else {}
    if not isinstance(args, (tuple, list)):
        args = (args,)
    return model, tuple(args), dict(call_kwargs)


def scalar_loss(out: Any):
    """A scalar from the model's output(s): the sum of every floating tensor's sum."""
    import torch

    tensors = [
        t for t in _flatten(out) if isinstance(t, torch.Tensor) and t.is_floating_point() and t.requires_grad
    ]
    if not tensors:
        raise WorkloadError("--train: the model's output has no floating tensor that requires grad")
    loss = tensors[0].float().sum()
    for t in tensors[1:]:
        loss = loss + t.float().sum()
    return loss


def _flatten(x: Any):
    if isinstance(x, dict):
        for v in x.values():
            yield from _flatten(v)
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _flatten(v)
    elif hasattr(x, "to_tuple"):  # HF ModelOutput
        yield from _flatten(x.to_tuple())
    else:
        yield x


def build_step(model, args, kwargs, opts: WorkloadOptions, device: str) -> Callable[[], Any]:
    """One step of the (possibly compiled) model: inference, or forward + backward."""
    import contextlib

    import torch

    if isinstance(model, torch.nn.Module):
        model.train(opts.train)

    def ctx():
        if opts.autocast:
            return torch.autocast(device_type=device, dtype=torch_dtype(opts.dtype))
        return contextlib.nullcontext()

    if opts.train:

        def step():
            with ctx():
                out = model(*args, **kwargs)
                loss = scalar_loss(out)
            loss.backward()
            if isinstance(model, torch.nn.Module):
                model.zero_grad(set_to_none=True)
            return loss

    else:

        def step():
            with torch.no_grad(), ctx():
                return model(*args, **kwargs)

    return step
