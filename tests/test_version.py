"""``inductor-bench --version``: one line with the tool's version (pyproject.toml's), the
installed torch's (and its CUDA or ROCm build), Triton's and Python's, each found here by
importing the package itself; the command imports no torch."""

from __future__ import annotations

import platform
import re
import subprocess
import sys

import pytest

from .conftest import ROOT


def _expected() -> str:
    import torch

    own = re.search(r'(?m)^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text())[1]
    builds = [f"{name} {v}" for name, v in (("cuda", torch.version.cuda), ("hip", torch.version.hip)) if v]
    torch_part = f"torch {torch.__version__}" + (f" ({', '.join(builds)})" if builds else "")
    try:
        import triton
        triton_part = f"triton {triton.__version__}"
    except ImportError:
        triton_part = "no triton"
    return f"inductor-bench {own} · {torch_part} · {triton_part} · Python {platform.python_version()}"


def test_version_is_one_line_naming_the_tool_torch_triton_and_python():
    code = ("import sys; from inductor_bench.cli import main; main(['--version']); "
            "print('torch imported' if 'torch' in sys.modules else 'no torch')")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [_expected(), "no torch"]


@pytest.mark.parametrize("args", [["--version"], ["--version", "breakdown", "nope.py"]])
def test_version_exits_0_before_any_command(args):
    p = subprocess.run([sys.executable, "-m", "inductor_bench.cli", *args], capture_output=True, text=True,
                       timeout=120)
    assert (p.returncode, p.stderr) == (0, "")
    assert p.stdout.startswith("inductor-bench ") and len(p.stdout.splitlines()) == 1
