"""Inductor's structured trace (the ``torch.__trace`` logger), as the compile worker's
recorders read it: which record names a newly written compiled module, and how a handler is
attached. It reports modules on cache hits too, and carries ``file_path`` from torch 2.10
(``filename`` before)."""

from __future__ import annotations

import logging
from typing import Any

TRACE_LOGGER = "torch.__trace"


def compiled_module(record: logging.LogRecord) -> tuple[str, dict[str, Any]] | None:
    """(the module's path, the record's metadata) when ``record`` is an
    ``inductor_output_code`` record naming a module; else None."""
    md = getattr(record, "metadata", None)
    if not isinstance(md, dict) or "inductor_output_code" not in md:
        return None
    info = md["inductor_output_code"] or {}
    path = info.get("file_path") or info.get("filename")
    return (path, md) if path else None


def attach(handler: logging.Handler) -> None:
    """Route every structured-trace record to ``handler`` (and nowhere else)."""
    logger = logging.getLogger(TRACE_LOGGER)
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
