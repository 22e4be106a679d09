"""Each iteration's parts, from a profiler session's own records (``core/window_figure.py``):
the iterations' markers and every other host record inside the session."""

from __future__ import annotations

from typing import Any

from ..core.breakdown import MARKER
from ..core.window_figure import iteration_parts


def session_parts(prof: Any, iterations: int) -> list[list[float]]:
    """The parts of each of the session's ``iterations`` (``[]`` where its records cannot be
    read or do not hold one marker per iteration: the window is then judged by its clock)."""
    try:
        events = prof.profiler.kineto_results.events()
        spans = [(e.name(), e.start_ns(), e.start_ns() + e.duration_ns()) for e in events
                 if str(e.device_type()).endswith("CPU")]
    except Exception:  # a profiler without these records: the clock alone ranks the window
        return []
    markers = sorted((s, e) for name, s, e in spans if name == MARKER)
    if len(markers) != iterations:
        return []
    return iteration_parts(markers, [x for x in spans if x[0] != MARKER])
