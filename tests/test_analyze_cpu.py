"""`inductor-bench analyze` of CPU-only traces (no device events): each CPU thread is a row,
its busy time the union of its top-level ``cpu_op`` events in the step. Checked on a recorded
CPU trace against an independent reading of the raw JSON, and on a hand-built trace with
``ProfilerStep#N`` markers whose numbers are worked out by hand below."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from inductor_bench.core.analyze import WHOLE_TRACE, analyze_trace
from inductor_bench.core.trace import load_for_analysis

from .conftest import FIXTURES
from .test_analyze import merged_length, raw_events, run_cli

CPU_TRACES = sorted((FIXTURES / "cpu_mlp_train").glob("*/trace.json.gz"))
SPAN_CATS = {"cpu_op", "user_annotation", "kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver"}
STEP = re.compile(r"ProfilerStep#\d+")


def host_expected(path: Path) -> dict[tuple[str, str], tuple[float, float, float, float, float]]:
    """(step, "CPU thread <tid>") -> (wall, busy, summed, waiting, after-last) in µs."""
    evs = raw_events(path)
    steps = sorted(
        ((e["name"], e["ts"], e["ts"] + e["dur"]) for e in evs if STEP.fullmatch(e["name"])), key=lambda s: s[1]
    )
    if not steps:
        span = [e for e in evs if e.get("cat") in SPAN_CATS]
        steps = [(WHOLE_TRACE, min(e["ts"] for e in span), max(e["ts"] + e["dur"] for e in span))]
    ops = [
        e
        for e in evs
        if e.get("cat") == "cpu_op" and not STEP.fullmatch(e["name"]) and not re.fullmatch(r"## .* ##", e["name"])
    ]
    out = {}
    for name, start, end in steps:
        mine = [e for e in ops if [s for s in steps if s[1] <= e["ts"]][-1:] == [(name, start, end)]]
        mine = [e for e in mine if e["ts"] <= end]
        stop = max([end, *(e["ts"] + e["dur"] for e in mine)])
        for tid in {e["tid"] for e in mine}:
            top, cover = [], float("-inf")
            for e in sorted((e for e in mine if e["tid"] == tid), key=lambda e: (e["ts"], -e["dur"])):
                if e["ts"] >= cover:
                    top.append(e)
                    cover = e["ts"] + e["dur"]
            busy = merged_length([(e["ts"], e["ts"] + e["dur"]) for e in top])
            waiting, covered = 0.0, start
            for e in top:
                waiting += max(e["ts"] - covered, 0.0)
                covered = max(covered, e["ts"] + e["dur"])
            summed = sum(e["dur"] for e in top)
            out[name, f"CPU thread {tid}"] = (stop - start, busy, summed, waiting, stop - covered)
    return out


@pytest.mark.parametrize("path", CPU_TRACES, ids=lambda p: p.parent.name)
def test_recorded_cpu_trace_equals_an_independent_reading(path):
    r = analyze_trace(load_for_analysis(path))
    assert [s.name for s in r.steps] == [WHOLE_TRACE]  # recorded without ProfilerStep markers
    got = {
        (s.name, d.device): (
            s.wall_ms * 1e3, d.busy_ms * 1e3, d.kernel_ms * 1e3, d.waiting_on_cpu_ms * 1e3, d.nothing_launched_ms * 1e3
        )
        for s in r.steps
        for d in s.devices
    }
    expected = host_expected(path)
    assert got.keys() == expected.keys() and expected
    for key, values in expected.items():
        assert got[key] == pytest.approx(values, rel=1e-9, abs=1e-6), key
    for s in r.steps:
        for d in s.devices:
            assert d.queued_ms == 0.0
            assert sum(d.categories.values()) == pytest.approx(d.kernel_ms, rel=1e-12)
            assert d.busy_ms + d.waiting_on_cpu_ms + d.nothing_launched_ms == pytest.approx(s.wall_ms, rel=1e-9)
    assert {k.category for k in r.kernels} == {"extern_gemm", "cpp_pointwise"}


def x(name, ts, dur, tid=1, cat="cpu_op"):
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": 9, "tid": tid}


HAND_BUILT = [
    x("ProfilerStep#1", 0, 100, cat="user_annotation"),
    x("aten::mm", 10, 20),  # 10..30
    x("aten::resolve_conj", 12, 1),  # inside aten::mm: not top level
    x("aten::add", 40, 10),  # 40..50
    x("## Call CompiledFxGraph abc ##", 55, 25),  # a wrapper: its children are the ops
    x("graph_0_cpp_fused_relu_0", 60, 10),  # 60..70
    x("autograd::engine::evaluate_function: MmBackward0", 20, 25, tid=2),  # 20..45
    x("aten::mm", 21, 23, tid=2),  # inside it
    x("ProfilerStep#2", 100, 100, cat="user_annotation"),
    x("aten::mm", 150, 80),  # 150..230: runs past the step's end, which it extends
]


def test_hand_built_steps_and_threads(tmp_path):
    f = tmp_path / "cpu_steps.json"
    f.write_text(json.dumps({"traceEvents": HAND_BUILT}))
    r = analyze_trace(load_for_analysis(f))
    got = {
        (s.name, d.device): (s.wall_ms, d.busy_ms, d.kernel_ms, d.waiting_on_cpu_ms, d.queued_ms, d.nothing_launched_ms)
        for s in r.steps
        for d in s.devices
    }
    # times in µs / 1000: thread 1 busy 20+10+10, gaps 0..10, 30..40, 50..60, then 70..100;
    # thread 2 busy 20..45, gap 0..20, then 45..100; step 2: 100..230, gap 100..150.
    assert got == pytest.approx(
        {
            ("ProfilerStep#1", "CPU thread 1"): (0.100, 0.040, 0.040, 0.030, 0.0, 0.030),
            ("ProfilerStep#1", "CPU thread 2"): (0.100, 0.025, 0.025, 0.020, 0.0, 0.055),
            ("ProfilerStep#2", "CPU thread 1"): (0.130, 0.080, 0.080, 0.050, 0.0, 0.0),
        },
        rel=1e-12,
    )
    s1 = r.steps[0].device("CPU thread 1")
    assert s1.categories == pytest.approx({"extern_gemm": 0.020, "cpp_pointwise": 0.010, "extern_other": 0.010})
    assert r.steps[0].device("CPU thread 2").categories == pytest.approx({"extern_other": 0.025})
    mm = next(k for k in r.kernels if (k.device, k.name) == ("CPU thread 1", "aten::mm"))
    assert (mm.calls, mm.per_step_ms) == (2, pytest.approx([0.020, 0.080]))


def test_cli_reports_a_cpu_trace(capsys):
    code, out, err = run_cli(capsys, str(CPU_TRACES[0]))
    assert code == 0, err
    assert "CPU threads (no device activity): CPU thread " in out
    assert "No device activity in this trace" in out and "Time by category" in out
    code, out, _ = run_cli(capsys, str(CPU_TRACES[0]), "--format", "json")
    (step,) = json.loads(out)["steps"]
    assert step["name"] == WHOLE_TRACE and step["devices"][0]["device"].startswith("CPU thread ")
