"""`analyze` on a step that ends past the profiler's own recorded span (kineto's ``Trace``
event "PyTorch Profiler (0)"): its figures stop at the recording, one note says how far it
ran past it. A synthetic trace with exact numbers, and the recorded HTA trace whose
``ProfilerStep#1`` ends 13.3 s after its recording."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from inductor_bench.cli import main
from inductor_bench.core.analyze import analyze_file, analyze_trace
from inductor_bench.core.trace import load_for_analysis
from inductor_bench.render.analyze import render_analyze

from .conftest import FIXTURES


def _x(name: str, cat: str, ts: float, dur: float, **args) -> dict:
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": 1, "tid": 1, "args": args}


def _kernel(ts: float, dur: float, corr: int) -> dict:
    return {**_x(f"triton_poi_{corr}", "kernel", ts, dur, correlation=corr), "pid": 0, "tid": 7}


def _trace(tmp_path: Path, step2_end: float, span: bool = True) -> Path:
    """Synthetic: the profiler recorded 0..1000 µs; step 1 is 100..300 with a kernel at
    200..250 (issued at 150), step 2 starts at 300 and ends at ``step2_end``, its kernel at
    400..600 (issued at 310)."""
    events = [
        _x("ProfilerStep#1", "user_annotation", 100, 200),
        _x("cudaLaunchKernel", "cuda_runtime", 150, 5, correlation=1),
        _kernel(200, 50, 1),
        _x("ProfilerStep#2", "user_annotation", 300, step2_end - 300),
        _x("cudaLaunchKernel", "cuda_runtime", 310, 5, correlation=2),
        _kernel(400, 200, 2),
    ]
    if span:
        events.append({"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "ts": 0, "dur": 1000,
                       "pid": "Spans", "tid": "PyTorch Profiler"})
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def test_a_step_ending_past_the_recording_stops_at_it(tmp_path):
    r = analyze_file(_trace(tmp_path, 500_000.0))
    one, two = r.steps
    assert (one.wall_ms, one.past_recording_ms) == (pytest.approx(0.2), 0.0)
    # cut at the recording's end, 1000 µs: wall 700 µs; ran 500,000 - 1000 µs past it
    assert two.wall_ms == pytest.approx(0.7)
    assert two.past_recording_ms == pytest.approx(499.0)
    (d,) = two.devices
    assert d.busy_ms == pytest.approx(0.2)
    assert d.waiting_on_cpu_ms == pytest.approx(0.010)  # 300 .. 310, the launch
    assert d.queued_ms == pytest.approx(0.090)  # 310 .. 400
    assert d.nothing_launched_ms == pytest.approx(0.400)  # 600 .. 1000, not .. 500,000
    assert d.busy_ms + d.waiting_on_cpu_ms + d.queued_ms + d.nothing_launched_ms + d.other_work_ms \
        == pytest.approx(two.wall_ms)
    text = render_analyze(r)
    assert ("ProfilerStep#2 ran 499.0 ms past the end of the profiler's recording: wall, busy and "
            "idle count only what was recorded") in text
    assert "ProfilerStep#1 ran" not in text
    assert json.loads(r.to_json())["steps"][1]["past_recording_ms"] == pytest.approx(499.0)


def test_within_the_margin_or_without_a_span_the_step_is_whole(tmp_path):
    """Events end up to 17 ms past the span in recorded traces: 99 ms past it is not cut;
    nor is any step of a trace that writes no span."""
    within = analyze_file(_trace(tmp_path, 100_000.0)).steps[1]
    assert (within.wall_ms, within.past_recording_ms) == (pytest.approx(99.7), 0.0)
    assert within.devices[0].nothing_launched_ms == pytest.approx(99.4)  # 600 .. 100,000
    no_span = analyze_file(_trace(tmp_path, 500_000.0, span=False)).steps[1]
    assert (no_span.wall_ms, no_span.past_recording_ms) == (pytest.approx(499.7), 0.0)
    assert "past the end" not in render_analyze(analyze_file(_trace(tmp_path, 100_000.0)))


def test_the_recorded_trace_whose_step_ends_13_s_after_its_recording(capsys):
    """tests/fixtures/hta/triton_example (HTA's example trace, A100): the profiler recorded
    355.494 ms; ProfilerStep#1 ends 13,334.643 ms past it. Read independently from the JSON."""
    path = FIXTURES / "hta" / "triton_example_triton_example.json.gz"
    with gzip.open(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    (span,) = [e for e in events if e.get("cat") == "Trace"]
    (step,) = [e for e in events if e.get("name") == "ProfilerStep#1"]
    recorded_end = span["ts"] + span["dur"]
    past = (step["ts"] + step["dur"] - recorded_end) / 1000
    (s,) = analyze_file(path).steps
    assert s.past_recording_ms == pytest.approx(past) == pytest.approx(13334.643, abs=1e-3)
    assert s.wall_ms == pytest.approx((recorded_end - step["ts"]) / 1000) == pytest.approx(1.673, abs=1e-3)
    (d,) = s.devices
    assert d.nothing_launched_ms == pytest.approx(0.317, abs=1e-3)  # was 13,334.960
    assert not main(["analyze", str(path)])
    assert "ProfilerStep#1 ran 13,334.6 ms past the end of the profiler's recording" in capsys.readouterr().out


def test_the_slower_reading_path_cuts_the_step_as_analyze_file_does(tmp_path):
    """``analyze_trace(load_for_analysis(path))`` keeps only the events the breakdown reads:
    the profiler's span is read aside (``Trace.recorded_end``), so its steps stop at the
    recording as ``analyze_file``'s do, with the same figures; the breakdown's events leave it out."""
    path = _trace(tmp_path, 500_000.0)
    trace = load_for_analysis(path)
    assert trace.recorded_end == 1000.0
    assert "Trace" not in {e.cat for e in trace.events}
    slow, fast = analyze_trace(trace), analyze_file(path)
    two = slow.steps[1]
    assert (two.wall_ms, two.past_recording_ms) == (pytest.approx(0.7), pytest.approx(499.0))
    assert two.devices[0].nothing_launched_ms == pytest.approx(0.400)  # 600 .. 1000
    assert slow.to_dict()["steps"] == fast.to_dict()["steps"]
    assert render_analyze(slow) == render_analyze(fast)
