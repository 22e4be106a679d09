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
import math
import os
import re
import shlex
import stat
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from .devices import AUTO, DEVICE_CHOICES
from .errors import UsageError
from .modes import check_name as check_mode_name
from .rerun import tool_command
from .rundir import BREAKDOWN_FILE, COMPARE_FILE
from .vocab import CompileMode

FACTORY = "make_workload"
DTYPES = ("float32", "bfloat16", "float16")
MAX_MODEL_BYTES = 16 << 20  # far above any model file; a generated one stays well under it
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
    # A script's command-line arguments (its sys.argv after the file), given after ``--``.
    script_args: list[str] = field(default_factory=list)
    script_seconds: float | None = None  # a script: stopped after this long (a long training loop)
    # The file as the command line named it: a script's sys.argv[0], as ``python FILE`` gives it.
    typed_path: str = ""

    def validate(self) -> WorkloadOptions:
        """Checked before any worker starts; ``path`` made absolute (workers keep finding the
        file when the model changes directory), ``typed_path`` keeping it as it was typed."""
        p = Path(self.path)
        check_model_file(p)
        if self.device not in DEVICE_CHOICES:
            raise UsageError(f"--device must be one of {', '.join(DEVICE_CHOICES)}, not {self.device!r}")
        if self.dtype not in DTYPES:
            raise UsageError(f"--dtype must be one of {', '.join(DTYPES)}, not {self.dtype!r}")
        check_mode_name(self.mode)  # the compile worker checks it against the installed torch
        if self.freezing and self.train:
            raise UsageError("--freezing is for inference: frozen weights cannot be trained")
        if self.batch_size is not None and self.batch_size < 1:
            raise UsageError("--batch-size must be at least 1")
        kind = self.kind
        factory_only = [flag for flag, given in (
            ("--batch-size", self.batch_size is not None), ("--train", self.train),
            ("--dtype", self.dtype != DTYPES[0]), ("--autocast", self.autocast)) if given]
        if kind == SCRIPT_KIND and factory_only:
            raise UsageError(
                f"{self.path} has no {FACTORY}() factory and runs as a script, which makes its own "
                f"inputs and chooses whether it trains and in which dtype: {', '.join(factory_only)} "
                "needs the factory"
            )
        if self.autocast and self.dtype == "float32":  # a factory's: a script has no dtype to give
            raise UsageError("--autocast needs --dtype bfloat16 or float16")
        if self.script_seconds is not None and not 0 < self.script_seconds < math.inf:
            raise UsageError(f"--script-seconds must be a number of seconds above 0, not "
                             f"{self.script_seconds}")
        if kind == FACTORY_KIND and self.script_seconds is not None:
            raise UsageError(f"{self.path} defines {FACTORY}(), whose model runs one step: --script-seconds "
                             "stops a script that would run longer than its graphs need")
        if kind == FACTORY_KIND and self.script_args:
            raise UsageError(
                f"{self.path} defines {FACTORY}(): the arguments after -- ({' '.join(self.script_args)}) are "
                "a script's sys.argv, and the factory takes --batch-size, --dtype and --device instead"
            )
        self.typed_path = self.typed_path or self.path
        self.path = os.path.abspath(self.path)
        return self

    @property
    def name(self) -> str:
        return Path(self.path).stem

    @cached_property
    def kind(self) -> str:
        """``FACTORY_KIND`` or ``SCRIPT_KIND`` (``file_kind``), read from the file once."""
        return file_kind(Path(self.path))

    def file_and_args(self) -> str:
        """The file and the script's arguments, quoted as a shell needs them."""
        return script_line(self.path, self.script_args)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def script_line(path: str, args: list[str]) -> str:
    """``train.py --epochs 1``: the file's name and its arguments, quoted as a shell needs them."""
    return shlex.join([Path(path).name, *args])


def check_model_file(p: Path) -> None:
    """A model file is a regular ``.py`` file of at most ``MAX_MODEL_BYTES``, checked by its
    metadata alone: a device (a link to /dev/zero) or a FIFO is refused without being read."""
    try:
        st = p.stat()
    except FileNotFoundError:
        raise UsageError(f"{p}: no such file") from None
    except OSError as e:
        raise UsageError(f"{p}: cannot read it ({e.strerror or e})") from None
    if p.suffix == ".pt2" and not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{p}: a torch.export or AOTInductor package, not a model file: breakdown "
                         "compiles a model file (.py) with torch.compile; to see where the package's runs "
                         "spend their time, profile them with torch.profiler and read the trace with "
                         "`inductor-bench analyze`")
    if p.suffix == ".ipynb" and not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{p}: a Jupyter notebook, not a model file: export it as a script "
                         f"(jupyter nbconvert --to script {p}) and break down the .py it writes")
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(_a_directory(p))
    if p.suffix != ".py":
        raise UsageError(f"{p}: not a Python file (expected a model file ending in .py)")
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{p}: not a regular file (a device, FIFO or socket): a model file is a .py file")
    if st.st_size > MAX_MODEL_BYTES:
        size, cap = f"{st.st_size / 2**20:.0f} MiB", f"{MAX_MODEL_BYTES >> 20} MiB"
        raise UsageError(f"{p}: {size}, too large for a model file (at most {cap})")


def _a_directory(p: Path) -> str:
    """Why a directory is not a model file; a run directory is pointed to ``report``."""
    if any((p / name).is_file() for name in (BREAKDOWN_FILE, COMPARE_FILE)):
        return f"{p}: a run directory, not a model file: `{tool_command('report', p)}` shows it"
    return f"{p}: a directory, not a model file (a .py file: its factory make_workload, or a script)"


def _top_functions(path: Path) -> list[str]:
    """The names of the functions the file defines at top level."""
    return [n.name for n in _top_defs(path)]


def _top_defs(path: Path) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The functions the file defines at top level, as parsed."""
    try:
        with open(path, "rb") as f:  # at most the cap: the file may have grown since it was checked
            text = f.read(MAX_MODEL_BYTES + 1).decode(errors="replace")
    except OSError as e:
        raise UsageError(f"{path}: cannot read it ({e.strerror or e})") from None
    try:
        tree = ast.parse(text, filename=str(path))
        # what parses but Python refuses before it runs (return at top level)
        compile(tree, str(path), "exec", dont_inherit=True)
    except SyntaxError as e:
        raise UsageError(f"{path}:{e.lineno}: syntax error: {e.msg}") from None
    except ValueError as e:  # a NUL byte
        raise UsageError(f"{path}: not Python source ({e})") from None
    return [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def default_batch_size(path: str | Path) -> int | None:
    """The batch size the factory runs at when none is asked for: the default of its
    ``batch_size`` parameter, where the file writes it as a whole number (``batch_size: int =
    64``). None for a script, a factory without that parameter or without a default, and a
    default only running the file would compute (``batch_size=BATCH``)."""
    try:
        factory = next((n for n in _top_defs(Path(path)) if n.name == FACTORY), None)
    except UsageError:  # not readable again: it says so where it is run
        return None
    if factory is None:
        return None
    a = factory.args
    positional = [x.arg for x in a.posonlyargs + a.args]  # the defaults belong to the last of them
    defaults = dict(zip(positional[len(positional) - len(a.defaults):], a.defaults, strict=True))
    defaults.update((x.arg, d) for x, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None)
    value = defaults.get("batch_size")
    if isinstance(value, ast.Constant) and type(value.value) is int and value.value >= 1:
        return value.value
    return None


def file_kind(path: Path) -> str:
    """'factory' if the file defines make_workload at top level, else 'script'."""
    return FACTORY_KIND if FACTORY in _top_functions(path) else SCRIPT_KIND


# A top-level function named like a factory under another name: get_model, build_workload ...
_LOOKALIKE = re.compile(r"^_?(make|get|build|create|load|init)_?\w*(model|workload|net)\w*$", re.IGNORECASE)


def factory_lookalikes(path: str | Path) -> list[str]:
    """Top-level functions of a script that look like a model factory under another name than
    ``make_workload`` (none where the file cannot be read again)."""
    try:
        return [name for name in _top_functions(Path(path)) if _LOOKALIKE.match(name)]
    except UsageError:
        return []
