"""The analyze top-kernels table splits a kernel by category: a cuBLAS GEMM that a convolution's
backward launches as well as ``aten::mm`` is two rows, each with its own launches, time and
launchers, so the rows add up to the category table. Checked on HTA's recorded ns-resolution
trace (tests/fixtures/hta/README.md: source and license) against launches matched to their ops
straight from the raw JSON."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from inductor_bench.core.analyze import analyze_file
from inductor_bench.render.analyze import render_analyze

HTA = Path(__file__).parent / "fixtures" / "hta"
NS_TRACE = HTA / "ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
SGEMM = "volta_sgemm_128x32_nt"


def _launchers_from_raw(path: Path, kernel: str) -> list[tuple[str, float]]:
    """(innermost CPU op around the launch, duration µs) of each launch of ``kernel``: its
    runtime call by correlation, then the shortest ``cpu_op`` on that thread containing it."""
    with gzip.open(path) as f:
        events = json.load(f)["traceEvents"]
    runtime = {e["args"]["correlation"]: e for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver")}
    ops = [e for e in events if e.get("cat") == "cpu_op"]
    out = []
    for k in (e for e in events if e.get("cat") == "kernel" and e["name"] == kernel):
        r = runtime.get(k["args"]["correlation"])
        if r is None:  # launched before the profiler started: no op around it recorded
            continue
        around = [o for o in ops if o["tid"] == r["tid"] and o["ts"] <= r["ts"] <= o["ts"] + o["dur"]]
        if around:
            out.append((min(around, key=lambda o: o["dur"])["name"], k["dur"]))
    return out


def test_a_kernel_launched_by_a_convolution_and_by_mm_is_a_row_each():
    raw = _launchers_from_raw(NS_TRACE, SGEMM)
    r = analyze_file(NS_TRACE)
    rows = {k.category: k for k in r.kernels if k.name == SGEMM}
    assert set(rows) == {"extern_conv", "extern_gemm"}
    conv = [us for op, us in raw if "convolution" in op]
    mm = [us for op, us in raw if op == "aten::mm"]
    assert len(conv) + len(mm) == len(raw) == 20
    assert (rows["extern_conv"].calls, rows["extern_gemm"].calls) == (len(conv), len(mm)) == (15, 5)
    assert rows["extern_conv"].total_ms == pytest.approx(sum(conv) / 1000, abs=1e-9)
    assert rows["extern_gemm"].total_ms == pytest.approx(sum(mm) / 1000, abs=1e-9)
    assert rows["extern_gemm"].launched_by == "aten::mm"
    assert rows["extern_conv"].launched_by == ", ".join(sorted({op for op, _ in raw if op != "aten::mm"}))
    text = render_analyze(r, top=len(r.kernels))
    assert "is one row per category, so the rows add up to the category table" in text
    assert "one row per category" not in render_analyze(r, top=3)  # no split kernel among them


@pytest.mark.parametrize("trace", sorted(HTA.glob("*.json.gz")), ids=lambda p: p.name[:30])
def test_top_kernel_rows_add_up_to_the_category_table(trace):
    r = analyze_file(trace)
    by_steps: dict[tuple[str, str], float] = {}
    for s in r.steps:
        for d in s.devices:
            for category, ms in d.categories.items():
                by_steps[d.device, category] = by_steps.get((d.device, category), 0.0) + ms
    by_rows: dict[tuple[str, str], float] = {}
    for k in r.kernels:
        by_rows[k.device, k.category] = by_rows.get((k.device, k.category), 0.0) + k.total_ms
    assert by_rows.keys() == by_steps.keys()
    for key, ms in by_steps.items():
        assert by_rows[key] == pytest.approx(ms, rel=1e-9, abs=1e-9), key


def test_every_launcher_is_named_the_most_time_first():
    """A kernel launched by several ops names each, the most time first (the JSON all, the
    table the first two and how many more)."""
    trace = HTA / "negative_queue_length_values_check_rank0.json.gz"
    r = analyze_file(trace)
    many = [k for k in r.kernels if len(k.launchers) >= 3]
    assert many, "the fixture has a kernel launched by three ops or more"
    k = many[0]
    time: dict[str, float] = {}
    for op, us in _launchers_from_raw(trace, k.name):
        time[op] = time.get(op, 0.0) + us
    assert k.launchers == sorted(time, key=lambda op: (-time[op], op))
    assert k.launched_by == ", ".join(k.launchers)
    ops = k.launchers
    text = render_analyze(r, top=len(r.kernels))
    assert f"{ops[0]}, {ops[1]} (+{len(ops) - 2} more)" in text
