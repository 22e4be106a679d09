"""What Dynamo and Inductor counted in the compile worker: the FX graph cache's hits and
misses, and each graph break (``core/graph_breaks.py`` reads their text)."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from ..core import graph_breaks
from . import trace_log

BREAK_ARTIFACT = "dynamo_graph_break_reason"


def fx_cache_counts() -> dict[str, int] | None:
    """Inductor's FX graph cache hits and misses in this process (its own counters)."""
    try:
        from torch._dynamo.utils import counters
    except ImportError:
        return None
    c = counters.get("inductor", {})
    return {"hits": int(c.get("fxgraph_cache_hit", 0)), "misses": int(c.get("fxgraph_cache_miss", 0))}


def dynamo_graph_count() -> int | None:
    """The graphs Dynamo captured in this process, whichever backend compiled them."""
    try:
        from torch._dynamo.utils import counters
    except ImportError:
        return None
    return int(counters.get("stats", {}).get("unique_graphs", 0))


class BreakRecorder(logging.Handler):
    """Keeps the text of each ``dynamo_graph_break_reason`` record of the structured trace."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.payloads: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        md = getattr(record, "metadata", None)
        if isinstance(md, dict) and (md.get("artifact") or {}).get("name") == BREAK_ARTIFACT:
            payload = getattr(record, "payload", None)
            if isinstance(payload, str):
                self.payloads.append(payload)

    def found(self) -> list[dict[str, Any]]:
        """The breaks met so far: from the records, else from Dynamo's counters (a torch
        that writes no such record)."""
        with contextlib.suppress(Exception):  # evidence only: never fails a run
            if self.payloads:
                return graph_breaks.collect(graph_breaks.parse(p) for p in self.payloads)
            from torch._dynamo.utils import counters

            return graph_breaks.collect(
                graph_breaks.from_counter(str(k), n) for k, n in counters.get("graph_break", {}).items())
        return []


def attach_break_recorder() -> BreakRecorder:
    rec = BreakRecorder()
    trace_log.attach(rec)
    return rec
