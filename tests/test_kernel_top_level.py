"""`kernel` loads a kernel file only if its top level is what Inductor writes there (imports of
torch and Triton, the driver call, the decorated kernel and its helpers, the harness's functions,
the `__main__` block): a file with Inductor's decorator and anything else at its top level is
refused in one line, exit 2, before a worker imports it, so none of its code runs. Before, a
file that passed the decorator check was imported by a worker to list its configs on a machine
without CUDA, and its top-level `open(...)` ran there (the marker file below was written).

The files edited here are Inductor's own: kernel files recorded on an H200 and on A100s/H100s
(tests/fixtures/triton_kernels/README.md), and the kernels inside the compiled modules of the
codegen fixtures (each fixture's README says where and when it was recorded)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench.core.errors import UsageError
from inductor_bench.core.kernel_toplevel import require_inductor_top_level
from inductor_bench.core.kernelfile import parse_kernel_source

from .conftest import FIXTURES

KERNELS = FIXTURES / "triton_kernels"
ADD_SIN = KERNELS / "cuda_h200" / "triton_poi_fused_add_sin_0.py"
DRIVER = "triton_helpers.set_driver_to_gpu()\n"


def _embedded_kernels(module: Path) -> list[str]:
    """The kernel sources a compiled module holds: ``async_compile.triton('name', '''...''')``."""
    return [n.args[1].value for n in ast.walk(ast.parse(module.read_text()))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "triton"
            and len(n.args) > 1 and isinstance(n.args[1], ast.Constant) and "@triton_heuristics." in n.args[1].value]


def _inductors_sources() -> list[tuple[str, str]]:
    files = [(str(p), p.read_text()) for p in sorted(KERNELS.rglob("*.py"))]
    modules = sorted(p for d in FIXTURES.glob("codegen_*") for p in d.glob("*.py"))
    return files + [(str(m), k) for m in modules for k in _embedded_kernels(m)]


def test_every_kernel_inductor_wrote_is_accepted():
    sources = _inductors_sources()
    assert len(sources) >= 100  # the recorded kernel files and the kernels of the codegen modules
    for path, text in sources:
        parse_kernel_source(text, path)
        require_inductor_top_level(path, text)


def _edited(old: str, new: str) -> str:
    text = ADD_SIN.read_text()
    assert text.count(old) == 1
    return text.replace(old, new)


@pytest.mark.parametrize(("old", "new", "runs"), [
    (DRIVER, DRIVER + "open('/tmp/x', 'w').write('ran')\n", "open('/tmp/x', 'w').write('ran')"),
    (DRIVER, DRIVER + "import os\n", "import os"),
    (DRIVER, DRIVER + "from . import helper\n", "from . import helper"),
    (DRIVER, DRIVER + "class triton_heuristics:\n    pass\n", "class triton_heuristics:"),
    (DRIVER, DRIVER + "with open('/tmp/x') as f:\n    pass\n", "with open('/tmp/x') as f:"),
    (DRIVER, DRIVER + "N = len('abc')\n", "len('abc')"),
    # a name the allowed calls start from, bound to something else: DeviceProperties(...) in the
    # decorator's triton_meta, set() in its inductor_meta would then run it
    (DRIVER, DRIVER + "from torch.hub import load as DeviceProperties\n",
     "from torch.hub import load as DeviceProperties"),
    (DRIVER, DRIVER + "import torch as triton\n", "import torch as triton"),
    (DRIVER, DRIVER + "from torch import *\n", "from torch import *"),
    (DRIVER, DRIVER + "set = eval\n", "set = eval"),
    (DRIVER, DRIVER + "def DeviceProperties(**kw):\n    return kw\n", "def DeviceProperties(**kw):"),
    ("size_hints={'x': 16777216}", "size_hints={'x': __import__('os').getpid()}", "__import__('os').getpid()"),
    ("min_elem_per_thread=0", "min_elem_per_thread=(lambda: 0)()", "(lambda: 0)()"),
    ("XBLOCK : tl.constexpr", "XBLOCK : print('ran')", "print('ran')"),
    ("def get_args():", "def get_args(n=print('ran')):", "print('ran')"),
    ("def get_args():", "@print\ndef get_args():", "print"),
    ("def get_args():", "@triton_heuristics.__loader__.load_module('os')\ndef get_args():",
     "triton_heuristics.__loader__.load_module('os')"),
    ("if __name__ == '__main__':", "if __name__ != '__main__':", "if __name__ != '__main__':"),
], ids=["call", "import", "relative-import", "class", "with", "assignment", "alias", "module-alias",
        "star-import", "shadowing-assignment", "shadowing-def", "decorator-argument",
        "decorator-lambda", "annotation", "default", "decorator", "module-attribute-decorator", "not-the-main-guard"])
def test_code_inductor_never_writes_is_named(old, new, runs):
    text = _edited(old, new)
    parse_kernel_source(text, "k.py")  # the decorator check alone lets it through
    with pytest.raises(UsageError) as e:
        require_inductor_top_level("k.py", text)
    assert str(e.value).startswith(f"k.py: not a kernel file Inductor wrote: loading it would run `{runs}` (line ")
    assert str(e.value).endswith("which Inductor never writes at a kernel file's top level; nothing of the file was run")


def test_a_refused_file_runs_none_of_its_top_level(tmp_path: Path):
    marker = tmp_path / "ran"
    f = tmp_path / "triton_poi_fused_add_sin_0.py"
    f.write_text(_edited(DRIVER, DRIVER + "open('ran', 'w').write('ran')\n"))
    p = subprocess.run([sys.executable, "-m", "inductor_bench.cli", "kernel", f.name], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300, check=False)
    assert not marker.exists()
    assert p.returncode == 2 and p.stdout == ""
    (line,) = p.stderr.splitlines()
    assert line == (f"inductor-bench: error: {f.name}: not a kernel file Inductor wrote: loading it would run "
                    "`open('ran', 'w').write('ran')` (line 9), which Inductor never writes at a "
                    "kernel file's top level; nothing of the file was run")
