"""Which compiled graphs torch.compile did NOT put under CUDA graphs, and why.

In a CUDA-graph mode (``reduce-overhead``, ``max-autotune``) Inductor wraps each graph in a
CUDA graph after compiling it, unless something forbids it (CPU tensors, mutated inputs,
dynamic shapes, ...). It says so in one log line per graph, "skipping cudagraphs due to
<reason>", through ``torch._inductor.cudagraph_utils``'s artifact logger (``cudagraphs``
from torch 2.11, ``perf_hints`` before), right after that graph's compile (its
``cudagraph_post_compile`` runs after the graph's ``inductor_output_code`` record). So a
skip belongs to the last module recorded before it.

The compile worker appends one JSON line per skip to the modules log,
``{"cudagraph_skip": reason, "module_order": n}``; ``skips_by_order`` reads them back.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

SKIP_PREFIX = "skipping cudagraphs"
# The artifact loggers that have carried the skip message, newest first.
LOGGERS = (
    "torch._inductor.cudagraph_utils.__cudagraphs",
    "torch._inductor.cudagraph_utils.__perf_hints",
)
SKIP_KEY = "cudagraph_skip"


class SkipRecorder(logging.Handler):
    """Appends each cudagraph skip to ``log_path``, tied to the latest recorded module.

    ``modules`` is the live list the module recorder appends to (each entry has ``order``).
    """

    def __init__(self, log_path: Path, modules: list[dict[str, Any]]) -> None:
        super().__init__(level=logging.DEBUG)
        self.log_path = log_path
        self.modules = modules

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = record.getMessage().strip()
        except Exception:  # a malformed record must never break the compile
            return
        if not msg.lower().startswith(SKIP_PREFIX):
            return
        order = self.modules[-1]["order"] if self.modules else None
        with open(self.log_path, "a") as f:
            f.write(json.dumps({SKIP_KEY: msg, "module_order": order}) + "\n")


def attach(log_path: Path, modules: list[dict[str, Any]]) -> SkipRecorder:
    rec = SkipRecorder(log_path, modules)
    for name in LOGGERS:
        logger = logging.getLogger(name)
        logger.addHandler(rec)
        if logger.level == logging.NOTSET or logger.level > logging.WARNING:
            logger.setLevel(logging.WARNING)  # the skip is logged at warning level
    return rec


def skips_by_order(lines: list[dict[str, Any]]) -> dict[int, str]:
    """module order -> the reason its graph was not put under CUDA graphs (the first one)."""
    out: dict[int, str] = {}
    for line in lines:
        order = line.get("module_order")
        if SKIP_KEY in line and isinstance(order, int):
            out.setdefault(order, _reason(str(line[SKIP_KEY])))
    return out


def _reason(msg: str) -> str:
    """``skipping cudagraphs due to mutated inputs (1 instances)...`` -> ``mutated inputs (1
    instances)...``: the first line, without the common prefix."""
    first = msg.strip().splitlines()[0] if msg.strip() else msg
    low = first.lower()
    for head in (SKIP_PREFIX + " due to ", SKIP_PREFIX + ": ", SKIP_PREFIX):
        if low.startswith(head):
            return first[len(head):].strip() or first
    return first
