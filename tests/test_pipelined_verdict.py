"""The launch-bound verdict without the profiler's own cost (inductor_bench/core/pipelined.py):
the device's busy time from the profiled pipelined trace against the wall of the same
iterations launched without the profiler; the unprofiled timing itself, on a clock the test
drives and on real sleeps; the report and the saved result. Hand-built samples (synthetic)."""

from __future__ import annotations

import json
import time

import pytest
from pytest import approx

from inductor_bench.core.pipelined import LAUNCH_BOUND_IDLE, analyze_pipelined, time_back_to_back
from inductor_bench.core.results import BreakdownResult
from inductor_bench.render.breakdown import render_breakdown

from .test_gpu_truth import pipelined_trace, result_with

# pipelined_trace(): 3 iterations, the device busy 58 µs in a profiled run of 100 µs; each
# iteration's launches took 10 µs under the profiler.
BUSY_US, PROFILED_US, PROFILED_LAUNCH_US = 58.0, 100.0, 10.0


def test_the_profiled_run_alone_calls_the_step_launch_bound():
    p = analyze_pipelined(pipelined_trace())
    assert p.plain_wall_ms is None and p.verdict_wall_ms == p.wall_ms
    assert p.idle_share == approx(1 - BUSY_US / PROFILED_US)  # 42% idle
    assert p.launch_bound and p.profiler_launch_ms is None


def test_without_the_profilers_cost_the_same_step_is_device_bound():
    # the same three iterations launched without the profiler: 65 µs in all, 4 µs of launches each
    plain = {"wall_ms": 65.0 / 3 / 1000, "launch_ms": 4.0 / 1000}
    p = analyze_pipelined(pipelined_trace(), plain)
    assert p.verdict_wall_ms == approx(65.0 / 3 / 1000)
    assert p.idle_share == approx(1 - 58.0 / 65.0)  # 10.8% idle: under the 20% line
    assert not p.launch_bound
    assert p.profiler_launch_ms == approx((PROFILED_LAUNCH_US - 4.0) / 1000)  # 6 µs per iteration
    assert p.busy_pct == approx(58.0)  # the profiled pair is kept as it was measured


def test_a_plain_wall_still_over_the_line_is_launch_bound():
    wall_us = BUSY_US / (1 - LAUNCH_BOUND_IDLE) + 3.0  # just past 20% idle
    p = analyze_pipelined(pipelined_trace(), {"wall_ms": wall_us / 3 / 1000, "launch_ms": 0.009})
    assert p.idle_share == approx(1 - BUSY_US / wall_us) and p.idle_share > LAUNCH_BOUND_IDLE
    assert p.launch_bound


def test_a_plain_wall_below_the_busy_time_reads_as_no_idle_time():
    # two runs, two spreads: the unprofiled wall can come out under the profiled busy time
    p = analyze_pipelined(pipelined_trace(), {"wall_ms": 50.0 / 3 / 1000, "launch_ms": 0.004})
    assert p.idle_share == 0.0 and not p.launch_bound


@pytest.mark.parametrize("bad", [None, {}, {"wall_ms": 0.0}, {"wall_ms": "x"}, {"wall_ms": True}])
def test_no_usable_plain_timing_keeps_the_profiled_verdict(bad):
    p = analyze_pipelined(pipelined_trace(), bad)
    assert p.plain_wall_ms is None and p.launch_bound


class DrivenClock:
    """A clock that moves only when the launches and the sync say so."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_unprofiled_timing_on_a_driven_clock():
    clock = DrivenClock()
    syncs = iter([0.005, 0.001, 0.009])  # seconds each round's sync waits: the median round is the first

    def launch() -> None:
        clock.now += 0.002

    def sync() -> None:
        clock.now += next(syncs)

    got = time_back_to_back(launch, sync, 4, clock, rounds=3)
    assert got == {"wall_ms": approx((4 * 2 + 5) / 4), "launch_ms": approx(2.0)}


def test_the_unprofiled_timing_on_real_sleeps():
    """The host path the worker runs, with known sleeps standing in for launches and the sync:
    never under the sleeps, never over what the test's own clock saw around the call."""
    t0 = time.perf_counter()
    got = time_back_to_back(lambda: time.sleep(0.002), lambda: time.sleep(0.010), 5, time.perf_counter)
    total_ms = (time.perf_counter() - t0) * 1e3
    assert got["launch_ms"] >= 2.0
    assert got["wall_ms"] >= (5 * 2.0 + 10.0) / 5
    # three rounds; the median round is at most half of all three together
    assert got["wall_ms"] * 5 <= total_ms / 2


def test_the_report_shows_the_plain_wall_and_the_profilers_cost_and_the_json_keeps_them():
    r = result_with([2.0], [0.5, 1.0])
    r.graphs[0].pipelined = analyze_pipelined(pipelined_trace(), {"wall_ms": 65.0 / 3 / 1000,
                                                                 "launch_ms": 0.004})
    text = render_breakdown(r)
    assert "profiler's launch ms" in text and "device-bound" in text and "launch-bound —" not in text
    assert f"{100 * 58.0 / 65.0:.1f}%" in text  # busy by the unprofiled wall
    back = BreakdownResult.from_dict(json.loads(r.to_json()))
    assert back.graphs[0].pipelined == r.graphs[0].pipelined
    assert back.graphs[0].pipelined.plain_launch_ms == approx(0.004)


PLAIN_CODE = """
import json, sys
from inductor_bench.runner import profile as tool_profile
module, trace, pipelined = sys.argv[1:4]
r = tool_profile.handle({"module": module, "device": "cpu", "iterations": 10, "windows": 1,
                         "trace": trace, "pipelined_trace": pipelined})
print("RESPONSE " + json.dumps({"iterations": r["iterations"], "plain": r["pipelined_plain"]}))
"""


@pytest.mark.e2e
def test_the_profiling_worker_times_the_pipelined_run_without_the_profiler(mlp_train, tmp_path):
    """The worker's own code on CPU (where it can be asked for a pipelined session): the profiled
    back-to-back session is written, then the same launches are timed without the profiler; the
    analysis reads both. On a CPU every op runs inside its launch, so the plain wall per
    iteration holds at least the (steady mean) launch time; no device event, no busy time."""
    import os
    import subprocess
    import sys

    from inductor_bench.core.trace import load_for_analysis

    _, run_dir, err = mlp_train
    assert err is None
    module = next(run_dir.glob("graphs/*-forward/module.py"))
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(run_dir / "cache"), "TORCHINDUCTOR_COMPILE_THREADS": "1"}
    trace, pipelined = tmp_path / "trace.json.gz", tmp_path / "pipelined.json.gz"
    out = subprocess.run([sys.executable, "-c", PLAIN_CODE, str(module), str(trace), str(pipelined)],
                         env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    resp = json.loads(next(ln for ln in out.stdout.splitlines() if ln.startswith("RESPONSE "))[9:])
    plain = resp["plain"]
    assert resp["iterations"] == 10 and set(plain) == {"wall_ms", "launch_ms"}
    assert plain["wall_ms"] >= plain["launch_ms"] > 0
    p = analyze_pipelined(load_for_analysis(pipelined), plain)
    assert p.iterations == 10 and p.busy_ms == 0.0
    assert (p.plain_wall_ms, p.plain_launch_ms) == (plain["wall_ms"], plain["launch_ms"])
    assert p.profiler_launch_ms == p.launch_ms - plain["launch_ms"]
