"""The end of what the profiler recorded: kineto writes one ``Trace`` event, "PyTorch
Profiler (0)", over the span it recorded; pure, no torch.

A ``ProfilerStep#N`` range can end far past it (the step's end written when the profiler
next stepped, long after it had stopped recording): nothing was recorded there, so a step's
figures stop at the recording (``steps.recorded_step_end``). Events do end a little past
the span as written: in the recorded traces read, events up to 16.9 ms past it (an NCCL
trace; 11.5 ms in another), ``ProfilerStep`` ranges never; a step that ends less than
``PAST_RECORDING_MARGIN_US`` past it is taken as recorded.
"""

from __future__ import annotations

import math
from itertools import compress
from typing import Any

PROFILER_SPAN = "Trace"  # the category of the profiler's own span
PROFILER_SPAN_NAME = "PyTorch Profiler"
PAST_RECORDING_MARGIN_US = 100_000.0  # 100 ms: six times the most an event was seen past the span


def recording_end(xs: list[Any], cats: list[str], end: float) -> tuple[float, list[Any], list[str]]:
    """(``end``, or the latest end of the profiler's spans among ``xs`` where one ends later;
    ``xs`` and their ``cats`` without the spans). ``end`` is ``math.inf`` until a span is
    met: the recording's end is not known."""
    is_span = [c == PROFILER_SPAN for c in cats]
    ends = [x.ts + x.dur for x, span in zip(xs, is_span, strict=True)
            if span and str(x.name).startswith(PROFILER_SPAN_NAME) and x.dur >= 0]
    ends = [e for e in ends if math.isfinite(e)]
    if ends:
        end = max(ends) if end == math.inf else max(end, *ends)
    keep = [not span for span in is_span]
    return end, list(compress(xs, keep)), list(compress(cats, keep))


def latest_end(*ends: float) -> float:
    """The latest of the recording ends known (finite) among ``ends``; ``math.inf`` where
    none is known."""
    known = [e for e in ends if math.isfinite(e)]
    return max(known) if known else math.inf
