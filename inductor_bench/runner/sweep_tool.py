"""Whether the tool a sweep launches is still the one it started with. A sweep runs for hours;
a ``pip install -U inductor-bench`` meanwhile changes the code each later job's compare imports
(its workers calling functions the sweep's parent process no longer agrees with), so each of
those jobs would fail alike. The sweep takes the installed package's version and a digest of its
``.py`` files as it starts, and takes them again before each job's launch (hashing the files'
contents takes about 12 ms for the package's 2 MB)."""

from __future__ import annotations

import hashlib
import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import inductor_bench

DISTRIBUTION = "inductor-bench"
PACKAGE_DIR = Path(inductor_bench.__file__).parent


@dataclass(frozen=True)
class ToolState:
    version: str
    digest: str  # the first 12 hex digits of the sha256 over the .py files' names and contents

    def __str__(self) -> str:
        return f"{DISTRIBUTION} {self.version}, source digest {self.digest}"


def tool_state(package_dir: Path = PACKAGE_DIR) -> ToolState:
    """The installed version and the digest of the package's source files now."""
    h = hashlib.sha256()
    for f in sorted(package_dir.rglob("*.py")):
        h.update(str(f.relative_to(package_dir)).encode() + b"\0")
        try:
            h.update(f.read_bytes())
        except OSError as e:  # a file removed as pip replaces the tree: a change all the same
            h.update(f"unreadable: {e.strerror}".encode())
        h.update(b"\0")
    return ToolState(_installed_version(), h.hexdigest()[:12])


def _installed_version() -> str:
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def changed_since(started: ToolState, now: ToolState) -> str | None:
    """The line saying the tool changed on disk since ``started`` (None where it did not)."""
    if now == started:
        return None
    return f"the tool changed on disk since the sweep started ({started} then, {now} now)"


def launch_check(package_dir: Path = PACKAGE_DIR) -> Callable[[], str | None]:
    """The tool's state now, and a check to ask before each job's launch: the line saying the
    tool changed since (``changed_since``), else None."""
    started = tool_state(package_dir)
    return lambda: changed_since(started, tool_state(package_dir))
