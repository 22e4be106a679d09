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
    ``xs`` and their ``cats`` without the spans, taken out of the lists given). ``end`` is
    ``math.inf`` until a span is met: the recording's end is not known."""
    at = _spans(cats)
    ends = [xs[i].ts + xs[i].dur for i in at
            if str(xs[i].name).startswith(PROFILER_SPAN_NAME) and xs[i].dur >= 0]
    ends = [e for e in ends if math.isfinite(e)]
    if ends:
        end = max(ends) if end == math.inf else max(end, *ends)
    if len(at) > FEW_SPANS:  # each removal moves the events after it: a copy is cheaper
        keep = [c != PROFILER_SPAN for c in cats]
        return end, list(compress(xs, keep)), list(compress(cats, keep))
    for i in reversed(at):
        del xs[i], cats[i]
    return end, xs, cats


# A trace holds one span (a replicated or merged one a few): removed in place, where copying
# a million events' list cost 23 MB and 0.1 s of a 300 MB trace's 3.4 s in ``load_for_analysis``
FEW_SPANS = 16


def _spans(cats: list[str]) -> list[int]:
    """The places of the profiler's spans in ``cats``: scans in C, no list as long as ``cats``."""
    at: list[int] = []
    for _ in range(cats.count(PROFILER_SPAN)):
        at.append(cats.index(PROFILER_SPAN, at[-1] + 1 if at else 0))
    return at


def latest_end(*ends: float) -> float:
    """The latest of the recording ends known (finite) among ``ends``; ``math.inf`` where
    none is known."""
    known = [e for e in ends if math.isfinite(e)]
    return max(known) if known else math.inf
