"""Inductor's structured trace (the ``torch.__trace`` logger), as the compile worker's
recorders read it: which record names a newly written compiled module, and how a handler is
attached. It reports modules on cache hits too, and carries ``file_path`` from torch 2.10
(``filename`` before)."""

from __future__ import annotations

import logging
import sys
from typing import Any

TRACE_LOGGER = "torch.__trace"
# The modules log's mark of a module of the graph compiled autograd captured of a backward
COMPILED_AUTOGRAD = "compiled_autograd"


def of_compiled_autograd(md: dict[str, Any]) -> bool:
    """Whether a compiled module is of the graph compiled autograd captured of a backward: its
    compile's id says so (``compiled_autograd_id``), or, where torch's compile ids do not carry
    one (2.5), compiled autograd's region is open, as it is when its graph compiles at its
    first call."""
    if md.get("compiled_autograd_id") is not None:
        return True
    region = getattr(sys.modules.get("torch._dynamo.compiled_autograd"), "in_compiled_autograd_region", False)
    return _ids_lack_compiled_autograd() and bool(region)


def _ids_lack_compiled_autograd() -> bool:
    """Whether this torch's ``CompileId`` has no ``compiled_autograd_id`` (2.5's is a NamedTuple
    of ``frame_id`` and ``frame_compile_id``; later ones, dataclasses with it)."""
    cid = getattr(sys.modules.get("torch._guards"), "CompileId", None)
    fields = getattr(cid, "_fields", None) or getattr(cid, "__dataclass_fields__", None)
    return fields is not None and "compiled_autograd_id" not in fields


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
