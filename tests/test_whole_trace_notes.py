"""`analyze` of a trace without step markers: the note under its table says what its wall is,
the whole trace's span, not "the step on the CPU, extended to the end of the last device work it
launched" (there is no step), and "nothing launched" is no step's. Recorded traces of
HolisticTraceAnalysis (A100, tests/fixtures/hta*/): the A100 AlexNet trace (device events) and its
range-profiler twin (no device event: CPU threads); each wall is checked against the span
worked out here from the raw JSON."""

from __future__ import annotations

import gzip
import json

import pytest

from .conftest import FIXTURES
from .test_analyze import run_cli

ALEXNET = FIXTURES / "hta" / "critical_path_alexnet_benchmark_result_2869224_1695835535_trace.json.gz"
RANGE_PROFILER = FIXTURES / "hta_small" / "cupti_profiler_benchmark_result_924719_1679055439_trace.json.gz"
SPANNED = {"cpu_op", "user_annotation", "cuda_runtime", "cuda_driver", "kernel", "gpu_memcpy", "gpu_memset"}


def _span_ms(path) -> str:
    with gzip.open(path, "rt") as f:
        evs = [e for e in json.load(f)["traceEvents"]
               if e.get("ph") == "X" and e.get("cat") in SPANNED and e.get("dur", -1) >= 0]
    return f"{(max(e['ts'] + e['dur'] for e in evs) - min(e['ts'] for e in evs)) / 1000:.3f}"


@pytest.mark.parametrize("path", [ALEXNET, RANGE_PROFILER], ids=["device", "host"])
def test_a_whole_traces_wall_note_names_the_trace_not_a_step(capsys, path):
    code, out, err = run_cli(capsys, str(path))
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith("whole trace "))
    assert row.split()[5 if "CPU thread" in row else 3] == _span_ms(path)  # 43425.365, 11843.640
    assert "wall = the whole trace (no ProfilerStep# markers), from its first recorded event to its last" in out
    assert "wall = the step" not in out and "the step issued no more device work" not in out


def test_a_trace_with_steps_keeps_the_steps_note(capsys):
    code, out, _ = run_cli(capsys, str(FIXTURES / "hta_small" / "event_sync_trace.json.gz"))
    assert code == 0 and "wall = the step on the CPU, extended to the end of the last device work" in out
    assert "nothing launched (the step issued no more device work)" in out and "whole trace" not in out
