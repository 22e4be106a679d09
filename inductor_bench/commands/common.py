"""Options and small helpers shared by the commands."""

from __future__ import annotations

import enum
import sys
from pathlib import Path

from ..errors import UsageError


class Format(str, enum.Enum):
    text = "text"
    markdown = "markdown"
    json = "json"


def emit_json(text: str, dest: str | Path) -> None:
    """Write JSON to a path, or to stdout for '-'. Existing files are never overwritten."""
    if str(dest) == "-":
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    p = Path(dest)
    if p.exists():
        raise UsageError(f"--json {p}: already exists (results are never overwritten)")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
