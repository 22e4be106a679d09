"""Is the requested accelerator absent? Told in milliseconds, before any worker starts.

``--device cuda`` on a machine without CUDA used to start a compile worker (importing torch
and the model file: seconds) and leave a failed run directory behind, only for torch to
say ``is_available() is False``. Two facts settle most such cases without importing torch:

- the torch build: ``torch/version.py`` (read as text) leaves ``cuda`` and ``hip`` None in a
  build without the backend (the ``+cpu`` wheels);
- the driver: a CUDA build cannot run without the driver library (``libcuda.so.1``), and
  when the library loads, its own ``cuInit``/``cuDeviceGetCount`` say whether it sees a device
  (``CUDA_VISIBLE_DEVICES`` included) — the calls torch's ``is_available()`` rests on.

Only a certain absence is reported; when either fact cannot be read, the workers' torch
decides as before. The table (``Backend.torch_builds`` in ``core/devices.py``) names the
attributes, libraries and calls; nothing here names a device.
"""

from __future__ import annotations

import ast
import ctypes
import importlib.util
import sys
from pathlib import Path
from typing import Any

from ..core.devices import AUTO, BACKENDS, HOST_BACKEND, Driver, backend
from ..core.errors import DeviceError


def check_requested(requested: str) -> None:
    """DeviceError, in the words the compile worker would use, when ``--device requested``
    certainly cannot run here."""
    why = absent(requested)
    if why:
        b = backend(requested)
        raise DeviceError(
            f"--device {b.name}: {b.name.upper()} is not available here ({why}); "
            f"use --device {HOST_BACKEND.name} or run on a {b.name.upper()} machine"
        )


def device_words(requested: str) -> str:
    """``--device`` as a progress line names it: ``auto`` as the host (``cpu (auto)``) where every
    accelerator is certainly absent, so the line says where the run goes; else as asked."""
    if requested == AUTO and on_host(requested):
        return f"{HOST_BACKEND.name} ({AUTO})"
    return requested


def on_host(requested: str) -> bool:
    """Whether ``--device requested`` certainly runs on the host: asked for, or ``auto`` where
    every accelerator is certainly absent."""
    if requested == AUTO:
        return all(absent(b.name) for b in BACKENDS if b.torch_module is not None)
    return requested == HOST_BACKEND.name


def absent(requested: str, version_file: Path | None = None) -> str | None:
    """Why torch cannot have the backend ``requested`` here, found without importing torch;
    None when it may (the workers' torch then decides). ``version_file``: torch's
    ``version.py`` (default: the installed torch's)."""
    b = backend(requested)
    if requested == AUTO or not b.torch_builds:
        return None
    build = torch_build(version_file)
    if build is None:
        return None
    present = [driver for attr, driver in b.torch_builds if build.get(attr)]
    if not present:
        return f"torch {build.get('__version__', '?')} was built without {b.name.upper()}"
    if any(driver is None for driver in present):
        return None
    reasons = [driver_absent(driver, b.name.upper()) for driver in present if driver]
    return reasons[0] if all(reasons) else None


def torch_build(version_file: Path | None = None) -> dict[str, Any] | None:
    """The constants of torch's ``version.py`` (``__version__``, ``cuda``, ``hip``, ...),
    parsed, not imported; None when torch or the file cannot be found or read."""
    path = version_file or _installed_version_file()
    if path is None:
        return None
    try:
        tree = ast.parse(path.read_text())
    except (OSError, SyntaxError, ValueError):
        return None
    out: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value  # cuda: Optional[str] = None
        else:
            continue
        if isinstance(target, ast.Name):
            try:
                out[target.id] = ast.literal_eval(value)
            except ValueError:
                continue
    return out


def _installed_version_file() -> Path | None:
    try:
        spec = importlib.util.find_spec("torch")  # finds the package; runs none of it
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    return Path(spec.origin).parent / "version.py"


def driver_absent(driver: Driver, label: str) -> str | None:
    """Why the driver says there is no device (None: it sees one, or cannot be asked here)."""
    if not sys.platform.startswith(driver.platform):
        return None
    try:
        lib = ctypes.CDLL(driver.library)
    except OSError:
        return f"no {label} driver: {driver.library} cannot be loaded"
    init, count = getattr(lib, driver.init, None), getattr(lib, driver.count, None)
    if init is None or count is None:
        return None
    rc = init(0)
    if rc != 0:
        return f"the {label} driver sees no device ({driver.init} returned {rc})"
    n = ctypes.c_int(0)
    if count(ctypes.byref(n)) == 0 and n.value == 0:
        return f"the {label} driver sees no device"
    return None
