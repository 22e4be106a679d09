"""Device work launched before the profiler started (its launch not in the trace, its
correlation below every recorded launch's) is no step's own work: in the first step it runs
in, it is other steps' work. On HTA's recorded rank-0 trace (tests/fixtures/hta, BSD-3-Clause,
its README) 872 such events (59.5 ms) run in ProfilerStep#550; before, they were counted as
that step's own (busy 132.9 ms, 35.8%). The figures below are computed here from the raw JSON."""

from __future__ import annotations

import gzip
import json

import pytest

from inductor_bench.core.analyze import analyze_file

from .conftest import FIXTURES

TRACE = FIXTURES / "hta" / "negative_queue_length_values_check_rank0.json.gz"
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def union_us(spans: list[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for a, b in sorted(spans):
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def first_step_by_hand(device: str) -> tuple[float, float, int]:
    """(own busy ms, other work ms, events launched before the trace) of the first step: own
    work is what its launch calls (recorded in it) started; the step's window runs to the end
    of its own last event; other work is the rest of the device's busy time in that window."""
    with gzip.open(TRACE) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    step = min((e for e in events if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
    launches = {e["args"]["correlation"]: e for e in events
                if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    dev = [e for e in events if e.get("cat") in DEVICE_CATS and str(e["pid"]) == device]
    start, stop = step["ts"], step["ts"] + step["dur"]
    own = [e for e in dev if (la := launches.get(e["args"].get("correlation"))) and start <= la["ts"] <= stop]
    end = max([stop] + [e["ts"] + e["dur"] for e in own])
    own_busy = union_us([(e["ts"], e["ts"] + e["dur"]) for e in own])
    any_busy = union_us([(max(e["ts"], start), min(e["ts"] + e["dur"], end)) for e in dev
                         if e["ts"] < end and e["ts"] + e["dur"] > start])
    before = sum(1 for e in dev if 0 < e["args"].get("correlation", 0) < min(launches))
    return own_busy / 1e3, (any_busy - own_busy) / 1e3, before


def test_work_launched_before_the_profiler_is_other_work_of_the_first_step():
    own, other, before = first_step_by_hand("0")
    assert before == 872
    r = analyze_file(TRACE)
    d = next(x for x in r.steps[0].devices if x.device == "0")
    assert d.busy_ms == pytest.approx(own, abs=1e-3)
    assert d.other_work_ms == pytest.approx(other, abs=1e-3)
    assert r.outside_steps >= before
