"""A profiler session written as a gzipped chrome trace, whole or not at all."""

from __future__ import annotations

import contextlib
import gzip
import os
import shutil
from pathlib import Path
from typing import Any


def export_trace(prof: Any, trace: Path) -> None:
    """The session as a gzipped chrome trace at ``trace`` (``x.json.gz``), written whole or not
    at all (a temporary file renamed into place: a full disk leaves no torn trace)."""
    raw = trace.with_name(f".{trace.name}.{os.getpid()}.json")
    part = trace.with_name(f".{trace.name}.{os.getpid()}.part")
    try:
        prof.export_chrome_trace(str(raw))
        with open(raw, "rb") as src, gzip.open(part, "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst)
        os.replace(part, trace)
    finally:
        for p in (raw, part):
            with contextlib.suppress(OSError):
                p.unlink()
