"""A GPU trace whose device side was not recorded as kernels (CUPTI's range-profiler mode writes
``cuda_profiler_range`` events: counters, no times) is analysed per CPU thread, and the report says
why: the CPU called the CUDA runtime, the device's events are absent. Checked on HTA's recorded A100
trace (tests/fixtures/hta/README.md: source and license) against the raw JSON."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from inductor_bench.core.analyze import analyze_file
from inductor_bench.render.analyze import render_analyze

TRACE = Path(__file__).parent / "fixtures" / "hta_small" / "cupti_profiler_benchmark_result_924719_1679055439_trace.json.gz"


def test_a_range_profiler_trace_says_its_device_side_was_not_recorded():
    with gzip.open(TRACE) as f:
        events = json.load(f)["traceEvents"]
    cats = [e.get("cat") for e in events]
    runtime = sum(c in ("cuda_runtime", "cuda_driver") for c in cats)
    assert runtime == 1862
    assert not any(c in ("kernel", "gpu_memcpy", "gpu_memset") for c in cats)
    assert cats.count("cuda_profiler_range") == 77
    r = analyze_file(TRACE)
    assert r.launches == runtime
    assert r.devices == ["CPU thread 924719"]
    text = render_analyze(r)
    assert ("1,862 CUDA runtime / driver calls (launches among them) but no kernel, memcpy or memset "
            "event: the device's side was not recorded") in text


def test_a_cpu_only_trace_has_no_such_line():
    r = analyze_file(Path(__file__).parent / "fixtures" / "cpu_loop" / "stack-torch-2.13.0.json.gz")
    assert r.launches == 0
    assert "CUDA runtime / driver calls" not in render_analyze(r)
