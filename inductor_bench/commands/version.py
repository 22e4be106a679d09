"""``inductor-bench --version``: the tool's version and what it would measure with (torch and
the accelerator toolkit it was built with, as ``torch.version`` names it; Triton; Python), read
from the installed packages without importing torch (a fraction of a second, where importing
torch takes seconds)."""

from __future__ import annotations

import platform
from importlib import metadata

from .. import __version__
from ..core.devices import BACKENDS
from ..runner.presence import torch_build

# The distributions Triton ships as: upstream, and torch's own builds of it.
TRITON_DISTS = ("triton", "pytorch-triton", "pytorch-triton-rocm", "pytorch-triton-xpu")


def _dist_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _torch_part() -> str:
    build = torch_build()
    if build is None:
        return "torch not found"
    backends = [f"{attr} {build[attr]}" for b in BACKENDS for attr, _ in b.torch_builds if build.get(attr)]
    return f"torch {build.get('__version__', '?')}" + (f" ({', '.join(backends)})" if backends else "")


def _triton_part() -> str:
    for name in TRITON_DISTS:
        if v := _dist_version(name):
            return f"triton {v}"
    return "no triton"


def version_text() -> str:
    """One line: ``inductor-bench 0.1.0 · torch 2.14.1+cu130 (cuda 13.0) · triton 3.8.0 ·
    Python 3.11.7``; the tool's version is the one every run records (``runner/compat.py``)."""
    return " · ".join([f"inductor-bench {__version__}", _torch_part(), _triton_part(),
                       f"Python {platform.python_version()}"])
