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

This module is pure (no torch): it validates options and looks at the file's syntax.
``runner/workload.py`` builds the step inside the worker.
"""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .devices import AUTO, DEVICE_CHOICES
from .errors import UsageError
from .modes import check_name as check_mode_name
from .vocab import CompileMode

FACTORY = "make_workload"
DTYPES = ("float32", "bfloat16", "float16")
FACTORY_KIND = "factory"  # the file defines make_workload()
SCRIPT_KIND = "script"  # the file runs as __main__


@dataclass
class WorkloadOptions:
    path: str
    device: str = AUTO
    train: bool = False
    dtype: str = "float32"
    autocast: bool = False  # keep the model in float32 and run under torch.autocast(dtype)
    mode: str = CompileMode.DEFAULT
    batch_size: int | None = None
    freezing: bool = False  # inference only: weights become constants (CPU GEMM templates need it)

    def validate(self) -> WorkloadOptions:
        p = Path(self.path)
        if not p.exists():
            raise UsageError(f"{self.path}: no such file")
        if p.is_dir() or p.suffix != ".py":
            raise UsageError(f"{self.path}: not a Python file (expected a model file ending in .py)")
        if self.device not in DEVICE_CHOICES:
            raise UsageError(f"--device must be one of {', '.join(DEVICE_CHOICES)}, not {self.device!r}")
        if self.dtype not in DTYPES:
            raise UsageError(f"--dtype must be one of {', '.join(DTYPES)}, not {self.dtype!r}")
        check_mode_name(self.mode)  # the compile worker checks it against the installed torch
        if self.autocast and self.dtype == "float32":
            raise UsageError("--autocast needs --dtype bfloat16 or float16")
        if self.freezing and self.train:
            raise UsageError("--freezing is for inference: frozen weights cannot be trained")
        if self.batch_size is not None and self.batch_size < 1:
            raise UsageError("--batch-size must be at least 1")
        kind = file_kind(p)
        if kind == SCRIPT_KIND and self.batch_size is not None:
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
            return FACTORY_KIND
    return SCRIPT_KIND
