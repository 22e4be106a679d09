"""A trace without steps (no ProfilerStep# markers: the whole trace is one window) gives each
named range's share of the whole trace's wall under '% trace', not '% step' (it has no step).
Recorded: HTA's A100 AlexNet trace (``tests/fixtures/hta``); the shares are worked out here from
the raw JSON: a range's calls' union over the span of the trace's CPU ops, ranges, runtime
calls and device events."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from inductor_bench.core.analyze import analyze_file
from inductor_bench.render.analyze import render_analyze

ALEXNET = (Path(__file__).resolve().parent / "fixtures" / "hta"
           / "critical_path_alexnet_benchmark_result_2869224_1695835535_trace.json.gz")
SPAN_CATS = ("cpu_op", "user_annotation", "cuda_runtime", "cuda_driver", "kernel", "gpu_memcpy", "gpu_memset")


def _union(intervals: list[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def test_whole_trace_ranges_read_as_a_share_of_the_trace():
    events = [e for e in json.loads(gzip.decompress(ALEXNET.read_bytes()))["traceEvents"]
              if e.get("ph") == "X" and e.get("cat") in SPAN_CATS]
    span = max(e["ts"] + e["dur"] for e in events) - min(e["ts"] for e in events)
    clear = [(e["ts"], e["ts"] + e["dur"]) for e in events
             if e["cat"] == "user_annotation" and e["name"] == "[param|clear_cache]"]
    share = 100 * _union(clear) / span
    assert len(clear) == 2 and round(share, 1) == 0.1 and round(_union(clear) / 1000, 3) == 56.408
    text = render_analyze(analyze_file(ALEXNET))
    ranges = text[text.index("Named ranges"):]
    header = ranges.splitlines()[3].split()
    assert header == ["range", "calls", "wall", "ms", "%", "trace", "launched", "ms"]
    row = next(line for line in ranges.splitlines() if line.startswith("[param|clear_cache]"))
    assert row.split()[1:4] == ["2", "56.408", f"{share:.1f}%"]
    assert "% trace of the whole trace's wall" in ranges and "% step" not in ranges
