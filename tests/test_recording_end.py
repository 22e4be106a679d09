"""``recording.recording_end``: where the profiler's recording ends (the latest end of its
``Trace`` spans named "PyTorch Profiler"), and the events without those spans, in their order.
A trace holds one span; a merged or replicated one a few, or many: the spans are taken out in
place where they are few and by a copy where they are many, with the same result either way.
Synthetic events; the recorded HTA trace is read back against its raw JSON."""

from __future__ import annotations

import gzip
import json
import math

import pytest

from inductor_bench.core.recording import FEW_SPANS, PROFILER_SPAN, recording_end
from inductor_bench.core.trace import ANALYSIS_ARGS, ANALYSIS_CATEGORIES, Event, load_for_analysis, load_trace

from .conftest import FIXTURES


def _ev(name: str, cat: str, ts: float, dur: float) -> Event:
    return Event(name, cat, ts, dur, 1, 1, {})


def _events(spans: int) -> list[Event]:
    """Synthetic: 80 ops 10 µs apart, and after every third op (from the first) a span of
    the profiler, the k-th ending at 1000 + 7k µs; a span of another name (ending last) and
    an unfinished span (dur -1) at the end."""
    out, k = [], 0
    for i in range(80):
        out.append(_ev(f"op{i}", "cpu_op", 10.0 * i, 5.0))
        if i % 3 == 0 and k < spans:
            out.append(_ev(f"PyTorch Profiler ({k})", PROFILER_SPAN, 0.0, 1000.0 + 7 * k))
            k += 1
    assert k == spans
    return [*out, _ev("Another span", PROFILER_SPAN, 0.0, 99_999.0), _ev("PyTorch Profiler (x)", PROFILER_SPAN, 5.0, -1.0)]


@pytest.mark.parametrize("spans", [0, 1, FEW_SPANS - 2, FEW_SPANS + 5])
def test_the_end_is_the_latest_named_finished_span_and_every_span_is_left_out(spans):
    xs = _events(spans)
    ops = [x for x in xs if x.cat == "cpu_op"]
    end, kept, cats = recording_end(xs, [x.cat for x in xs], math.inf)
    assert end == (1000.0 + 7 * (spans - 1) if spans else math.inf)
    assert kept == ops and cats == ["cpu_op"] * 80


def test_a_known_end_is_kept_where_the_spans_end_before_it():
    xs = _events(2)
    assert recording_end(xs, [x.cat for x in xs], 5000.0)[0] == 5000.0
    xs = _events(2)
    assert recording_end(xs, [x.cat for x in xs], 500.0)[0] == 1007.0


def test_load_for_analysis_of_the_recorded_trace_reads_its_span_aside():
    """tests/fixtures/hta/triton_example (HTA's A100 example trace): its one span ends where
    the raw JSON says; the events are load_trace's of the breakdown's categories, in order."""
    path = FIXTURES / "hta" / "triton_example_triton_example.json.gz"
    with gzip.open(path, "rt") as f:
        raw = json.load(f)["traceEvents"]
    (span,) = [e for e in raw if e.get("cat") == PROFILER_SPAN]
    trace = load_for_analysis(path)
    assert trace.recorded_end == span["ts"] + span["dur"]
    assert trace.events == load_trace(path, categories=ANALYSIS_CATEGORIES, args=ANALYSIS_ARGS).events

