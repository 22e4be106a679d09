"""`analyze` on every real GPU trace we have: each step's idle split (waiting on CPU, queued,
nothing launched) and each kernel's calls and time in each step, against an independent reading
of the raw JSON written here from docs/analyze.md's definitions (plain json/gzip, a sort-and-merge
union). The traces: tests/fixtures/hta/, hta_small/, cuda_h200_stack_loop/, and the shared
HolisticTraceAnalysis traces where the checkout has them (A100, V100, H200; several streams,
CUDA-graph replays, work queued before the profiler started, ns-resolution timestamps, kineto's
old category names, a step that ends 13 s past the profiler's recording)."""

from __future__ import annotations

import bisect
import functools
import gzip
import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

from inductor_bench.core.analyze import analyze_file

from .conftest import FIXTURES, ROOT

SHARED = ROOT.parent / "shared"
FOLDERS = (FIXTURES / "hta", FIXTURES / "hta_small", FIXTURES / "cuda_h200_stack_loop",
           SHARED / "gpu-traces" / "hta", SHARED / "gpu-artifacts" / "hta")
TRACES = {p.name: p for d in FOLDERS if d.is_dir() for p in sorted(d.glob("*.json.gz"))
          if not p.name.startswith("cupti_profiler")}  # range-profiler: no device events
DEVICE = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}
LAUNCH = {"cuda_runtime", "cuda_driver", "Runtime"}
WINDOW = DEVICE | LAUNCH | {"cpu_op", "Operator", "user_annotation"}


def _events(path: Path) -> list[dict]:
    with gzip.open(path, "rt") as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X" and e.get("dur", 0) >= 0]


@functools.cache
def independent(path: Path) -> tuple[dict, dict]:
    """(step, device) -> (waiting on CPU, queued, nothing launched) in µs, and
    (device, kernel name, step) -> (calls, µs) of the step's own device events."""
    evs = _events(path)
    steps = sorted(((e["name"], e["ts"], e["ts"] + e["dur"]) for e in evs
                    if re.fullmatch(r"ProfilerStep#\d+", e["name"]) and e.get("cat") != "gpu_user_annotation"),
                   key=lambda s: s[1])
    if not steps:
        span = [e for e in evs if e.get("cat") in WINDOW]
        steps = [("whole trace", min(e["ts"] for e in span), max(e["ts"] + e["dur"] for e in span))]
    launched = {e["args"]["correlation"]: e["ts"] for e in evs
                if e.get("cat") in LAUNCH and "correlation" in (e.get("args") or {})}
    first = min(launched, default=None)
    device = [e for e in evs if e.get("cat") in DEVICE]
    own: dict[int, list[dict]] = defaultdict(list)
    for e in device:
        corr = e["args"].get("correlation")
        if corr not in launched and first is not None and corr is not None and corr < first:
            continue  # queued before the profiler started: no step's own
        t = launched.get(corr, e["ts"])
        at = [i for i, (_, a, b) in enumerate(steps) if a <= t <= b]
        if at:
            own[at[-1]].append(e)
    devices = {str(e["pid"]) for es in own.values() for e in es}
    recorded = max((e["ts"] + e["dur"] for e in evs if e.get("cat") == "Trace"
                    and e["name"].startswith("PyTorch Profiler")), default=float("inf"))
    split, kernels = {}, {}
    for i, (name, start, end) in enumerate(steps):
        stop = max([end] + [e["ts"] + e["dur"] for e in own[i]])
        if stop > recorded + 100e3:  # past the profiler's recording by over 100 ms: cut there
            stop = max([start, recorded] + [e["ts"] + e["dur"] for e in own[i]])
        for dev in devices:
            mine = sorted((e for e in own[i] if str(e["pid"]) == dev), key=lambda e: e["ts"])
            starts = [e["ts"] for e in mine]
            ran = sorted((max(e["ts"], start), min(e["ts"] + e["dur"], stop)) for e in device
                         if str(e["pid"]) == dev and e["ts"] + e["dur"] > start and e["ts"] < stop)
            gaps, t = [], start  # where the device ran nothing, any step's work or its own
            for a, b in ran:
                if a > t:
                    gaps.append((t, a))
                t = max(t, b)
            if stop > t:
                gaps.append((t, stop))
            waiting = queued = nothing = 0.0
            for a, b in gaps:
                nxt = bisect.bisect_left(starts, b)  # the step's next event on the device
                if nxt == len(mine):  # the step issued no more work on this device
                    nothing += b - a
                    continue
                issued = launched.get(mine[nxt]["args"].get("correlation"), a)
                cut = min(max(issued, a), b)  # before the launch: the CPU had not issued it
                waiting += cut - a
                queued += b - cut
            split[name, dev] = (waiting, queued, nothing)
            for e in mine:
                calls, us = kernels.get((dev, e["name"], i), (0, 0.0))
                kernels[dev, e["name"], i] = (calls + 1, us + e["dur"])
    return split, kernels


# A timestamp of an ns-resolution trace (µs since 1970 with three decimals) is a float64 whose
# steps are 0.25 µs there (docs/analyze.md): a column made of many gaps adds such errors up.
def _tolerance(path: Path) -> float:
    return 15.0 if any(e["ts"] > 1e15 for e in _events(path)[:50]) else 1e-3


@functools.cache
def _analysed(path: Path):
    return analyze_file(path)  # as the command reads it: the profiler's span too


@pytest.mark.parametrize("name", sorted(TRACES))
def test_idle_split_equals_an_independent_reading(name):
    path = TRACES[name]
    r = _analysed(path)
    expected, _ = independent(path)
    got = {(s.name, d.device): (d.waiting_on_cpu_ms * 1e3, d.queued_ms * 1e3, d.nothing_launched_ms * 1e3)
           for s in r.steps for d in s.devices}
    assert got.keys() == expected.keys()
    for key, figures in expected.items():
        assert got[key] == pytest.approx(figures, abs=_tolerance(path)), key


@pytest.mark.parametrize("name", sorted(TRACES))
def test_each_kernels_calls_and_time_per_step(name):
    """A kernel that classifies apart by its launching op is several rows: their sum per step."""
    path = TRACES[name]
    r = _analysed(path)
    _, expected = independent(path)
    got: dict[tuple[str, str, int], tuple[int, float]] = {}
    for k in r.kernels:
        for i, (calls, ms) in enumerate(zip(k.per_step_calls, k.per_step_ms, strict=True)):
            if calls:
                c, us = got.get((k.device, k.name, i), (0, 0.0))
                got[k.device, k.name, i] = (c + calls, us + ms * 1e3)
    assert got.keys() == expected.keys()
    for key, (calls, us) in expected.items():
        assert got[key][0] == calls, key
        assert got[key][1] == pytest.approx(us, rel=1e-9, abs=1e-6), key


def test_the_traces_cover_what_they_are_for():
    """The set holds a CUDA-graph run, several streams, ns timestamps and old category names."""
    assert {"negative_queue_length_values_check_rank0.json.gz", "stack-loop.pt.trace.json.gz",
            "ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"} <= TRACES.keys()
