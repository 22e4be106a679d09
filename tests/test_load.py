"""Load from other processes during a measurement: /proc/stat readings turned into cores
taken by others and steal, with exact numbers; the report and diff warn about it."""

from __future__ import annotations

import os

import pytest

from inductor_bench.core.diff import diff_results
from inductor_bench.core.load import CpuCounters, GpuReading, Load, load_between, worst
from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
from inductor_bench.core.step import disturbances
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.runner import machine
from inductor_bench.runner.machine import cpu_counters, load_since

STAT = """cpu  {user} 10 {system} 5000 20 0 {softirq} {steal} 0 0
cpu0 1 2 3 4 5 6 7 8 0 0
cpu1 1 2 3 4 5 6 7 8 0 0
intr 12345
"""


def reading(user: int, system: int, softirq: int, steal: int, own_s: float, wall_s: float) -> CpuCounters:
    text = STAT.format(user=user, system=system, softirq=softirq, steal=steal)
    return CpuCounters.parse(text, 100.0, own_s, wall_s)


def test_parse_reads_the_all_cpu_line_in_ticks():
    c = reading(user=1000, system=200, softirq=30, steal=40, own_s=1.5, wall_s=7.0)
    # busy = user + nice + system + irq + softirq = 1000 + 10 + 200 + 0 + 30 ticks
    assert c.busy_s == pytest.approx(12.40)
    assert c.steal_s == pytest.approx(0.40)
    assert c.total_s == pytest.approx((1000 + 10 + 200 + 5000 + 20 + 0 + 30 + 40) / 100)
    assert c.cpus == 2 and (c.own_s, c.wall_s) == (1.5, 7.0)
    with pytest.raises(ValueError):
        CpuCounters.parse("intr 1\n", 100.0, 0.0, 0.0)


def test_others_are_the_busy_time_less_our_own_over_the_wall_time():
    before = reading(user=1000, system=200, softirq=30, steal=40, own_s=1.0, wall_s=10.0)
    # 2 s later: 300 ticks more user, 20 more system, 10 more steal; we used 1.2 s ourselves
    after = reading(user=1300, system=220, softirq=30, steal=50, own_s=2.2, wall_s=12.0)
    load = load_between(before, after)
    assert load.others_cores == pytest.approx((3.20 - 1.2) / 2.0)  # 1.0 core
    assert load.steal_pct == pytest.approx(100 * 0.10 / 3.30)
    assert load.cores == 2 and load.disturbed
    assert load.describe() == "other processes kept 1.0 of 2 cores busy"
    assert load_between(before, before) is None  # too short to say


def test_quiet_and_worst():
    quiet, busy = Load(0.1, 0.0, 2), Load(1.2, 6.0, 2)
    assert not quiet.disturbed and quiet.describe() == "quiet"
    assert busy.describe() == ("other processes kept 1.2 of 2 cores busy and the hypervisor "
                               "took 6% of the CPU time (steal)")
    assert worst([quiet, None, busy]) is busy and worst([None]) is None


def test_this_machine_can_be_read():
    before = cpu_counters()
    if before is None:
        pytest.skip("no /proc/stat here")
    x = 0
    while cpu_counters().wall_s - before.wall_s < 0.2:
        x += 1
    load = load_since(before)
    assert load is not None and 0.0 <= load.steal_pct <= 100.0 and load.others_cores >= 0.0


def result(load: Load | None) -> BreakdownResult:
    k = KernelStat(name="k", category="cpp_pointwise", calls=1, ms=1.0, samples_ms=[1.0] * 10)
    g = GraphResult(id="0-forward", role="forward", iterations=10, wall_ms=1.2, wall_samples_ms=[1.2] * 10,
                    busy_ms=1.0, kernel_ms=1.0, categories={"cpp_pointwise": 1.0}, kernels=[k],
                    windows_ms=[1.2, 1.5], window=0, window_load=[load, None])
    return BreakdownResult(model="m", graphs=[g], iterations=10)


def test_report_and_diff_warn_when_the_kept_window_was_disturbed():
    busy = Load(1.4, 0.0, 2)
    text = render_breakdown(result(busy)).lower()  # "warning" is an alert: upper case in text
    assert ("warning: 0-forward was measured while other processes kept 1.4 of 2 cores busy: "
            "its times may be inflated") in text
    assert "warning" not in render_breakdown(result(Load(0.1, 0.0, 2))).lower()
    d = diff_results(result(None), result(busy))
    assert ("head: 0-forward was measured while other processes kept 1.4 of 2 cores busy: its times "
            "may be inflated") in d.warnings
    back = BreakdownResult.from_dict(result(busy).to_dict())
    assert back.graphs[0].window_load == [busy, None]


# -- step timing by time budget ------------------------------------------------------------


def test_step_timing_stops_at_the_budget_but_not_before_the_minimum(monkeypatch):
    from inductor_bench.runner import capture

    clock = [0.0]
    monkeypatch.setattr(capture.time, "perf_counter", lambda: clock[0])

    def step_of(seconds: float):
        def one() -> float:
            clock[0] += seconds
            return seconds * 1e3

        return one

    timing = capture.StepTiming(steps=200, budget_s=1.0, min_steps=10)
    long = capture.StepTiming(steps=500, budget_s=1.0, min_steps=10)
    assert len(long.run(step_of(0.003))) == 334  # 1 s of 3 ms steps: stops after 1.002 s
    assert len(timing.run(step_of(0.0001))) == 200  # the cap comes first
    assert len(timing.run(step_of(0.5))) == 10  # slow steps: the minimum still runs
    assert len(capture.StepTiming(steps=7).run(step_of(1.0))) == 7  # no budget: every step


def test_compare_times_by_budget_unless_repeat_is_given():
    from inductor_bench.runner.compare_timer import MAX_STEPS, MIN_STEPS, WARMUP_STEPS, CompareRun
    from inductor_bench.runner.settings import DEFAULT_STEPS, STEP_BUDGET_S
    from inductor_bench.runner.settings import MIN_STEPS as BREAKDOWN_MIN_STEPS

    # the interleaved timing worker: the budget per column, 10 to 200 calls
    r = CompareRun().timer_request([], "cpu")
    assert (r["budget_s"], r["max_steps"], r["min_steps"], r["exact"]) == (1.0, MAX_STEPS, MIN_STEPS, False)
    # each compile worker: warm-up calls, then as many as a breakdown times
    s = CompareRun().timing()
    assert (s.steps, s.step_budget_s, s.min_steps) == (
        DEFAULT_STEPS + WARMUP_STEPS, STEP_BUDGET_S, BREAKDOWN_MIN_STEPS + WARMUP_STEPS
    )
    s = CompareRun(repeat=30).timing()
    assert (s.steps, s.step_budget_s) == (30 + WARMUP_STEPS, None)


def test_compare_notes_a_disturbed_mode_and_round_trips_its_load():
    import json

    from inductor_bench.core.compare import CompareResult, ModeResult
    from inductor_bench.render.compare import render_compare

    busy = Load(1.3, 0.0, 2)
    cr = CompareResult(model="m", step_budget_s=1.0, modes=[
        ModeResult("eager", step_samples_ms=[2.0] * 10, compile_s=0.0),
        ModeResult("default", step_samples_ms=[1.0] * 10, compile_s=3.0, step_load=busy),
    ])
    text = render_compare(cr)
    # not timed interleaved: each column's figure is its compile worker's few calls, and said so
    assert "each column's steps were timed until" not in text
    assert "steps timed in each column's compile worker, not interleaved: eager (10 calls), default (10 calls)" in text
    assert ("warning: default: steps timed while other processes kept 1.3 of 2 cores busy: its step "
            "time may be inflated") in text
    back = CompareResult.from_dict(json.loads(cr.to_json()))
    assert back.modes[1].step_load == busy and back.step_budget_s == 1.0
    assert "step_load" not in cr.to_dict()["modes"][0]
    # timed interleaved: the timing worker's load is the one that counts, said once
    for m, level in zip(cr.modes, (2.0, 1.0), strict=True):
        m.paired_ms = [[level] * 3 for _ in range(8)]
    cr.interleaved = {"rounds": 8, "block_steps": [3, 3], "load": busy.to_dict()}
    text = render_compare(cr)
    assert ("interleaved in 8 rounds of blocks (the order reversed every other round), so that the "
            "machine's drift falls on all alike") in text
    assert "; warning: timed while other processes kept 1.3 of 2 cores busy" in text
    assert "warning: default: steps timed while" not in text  # its compile worker's samples are not used
    assert CompareResult.from_dict(json.loads(cr.to_json())).interleaved_load() == busy


# A child that says when it spins, then keeps one core busy until killed (a minute at most).
SPIN = "import time\nt = time.time()\nprint('spinning', flush=True)\nwhile time.time() - t < 60: pass"


def start_spinner():
    """The spinning child, once it spins: waiting for its word, not for a fixed time that a
    busy machine may take to start a process."""
    import subprocess
    import sys

    spinner = subprocess.Popen([sys.executable, "-c", SPIN], stdout=subprocess.PIPE, text=True)
    assert spinner.stdout.readline() == "spinning\n"
    return spinner


def test_a_known_busy_process_reads_as_about_one_core_taken():
    """An independent load: a child process spinning on one core for the whole measurement.
    Other activity on the machine can only add, so the reading is at least ~0.8 core."""
    import time

    if cpu_counters() is None:
        pytest.skip("no /proc/stat here")
    spinner = start_spinner()
    try:
        before = cpu_counters()
        time.sleep(1.0)  # we ourselves stay idle
        load = load_since(before)
    finally:
        spinner.kill()
        spinner.wait()
    assert load is not None and load.others_cores >= 0.8, load


# -- the GPU: other processes on the device, and its clock (nvidia-smi's csv, synthetic) -------



@pytest.mark.parametrize("clocks, apps, own, others, slowdown", [
    ("1980, 1980, 0x0000000000000000\n", "4242\n", 4242, 0, ""),  # alone, full clock
    ("1980, 1980, 0x0000000000000001\n", "4242\n7\n", 4242, 1, ""),  # idle bit is no slowdown
    ("1410, 1980, 0x0000000000000024\n", "4242\n", 4242, 0,
     "software power cap, software thermal slowdown: SM clock 1,410 of 1,980 MHz"),
    # in a container nvidia-smi lists the host's pids: ours is one of them
    ("1980, 1980, 0x0\n", "901\n902\n", 4242, 1, ""),
    ("[N/A], [N/A], 0x0000000000000040\n", "", 4242, 0, "hardware thermal slowdown"),
])
def test_a_gpu_reading(clocks, apps, own, others, slowdown):
    r = GpuReading.parse(clocks, apps, own)
    assert (r.others, r.slowdown()) == (others, slowdown)


def test_the_runs_own_standby_worker_is_not_another_process():
    clocks, apps = "1980, 1980, 0x0\n", "4242\n5151\n7777\n"
    assert GpuReading.parse(clocks, apps, 4242).others == 2
    assert GpuReading.parse(clocks, apps, 4242, ours=(5151,)).others == 1  # 7777 is someone else's
    assert GpuReading.parse(clocks, "4242\n5151\n", 4242, ours=(5151,)).others == 0


def test_a_gpu_reading_refuses_what_is_not_one():
    with pytest.raises(ValueError):
        GpuReading.parse("No devices were found\n", "", 1)


def test_the_gpu_readings_around_a_measurement_join_its_load():
    quiet = Load(others_cores=0.1, steal_pct=0.0, cores=16)
    alone = GpuReading(others=0, sm_mhz=1980.0, sm_max_mhz=1980.0, reasons=0)
    shared = GpuReading(others=2, sm_mhz=1755.0, sm_max_mhz=1980.0, reasons=0x4)
    assert quiet.with_gpu(None, None) == quiet and quiet.to_dict() == {
        "others_cores": 0.1, "steal_pct": 0.0, "cores": 16}  # the host: no GPU fields saved
    calm = quiet.with_gpu(alone, alone)
    assert not calm.disturbed and calm.describe() == "quiet"
    assert calm.to_dict() == {"others_cores": 0.1, "steal_pct": 0.0, "cores": 16,
                              "gpu_others": 0, "gpu_slowdown": ""}
    busy = quiet.with_gpu(alone, shared)
    assert busy.disturbed and busy.describe() == (
        "2 other processes used the GPU and the GPU slowed its clock "
        "(software power cap: SM clock 1,755 of 1,980 MHz)")
    assert Load.from_dict(busy.to_dict()) == busy


FAKE_SMI = """#!/usr/bin/env bash
# a stand-in for nvidia-smi on a driver older than 535 (no clocks_event_reasons field)
echo "$@" >> "$SMI_CALLS"
case "$*" in
  *clocks_event_reasons*) echo 'Field "clocks_event_reasons.active" is not a valid field to query.'; exit 2 ;;
  *--query-gpu=clocks.sm,clocks.max.sm,clocks_throttle_reasons.active*) echo "1500, 1980, 0x0000000000000008" ;;
  *--query-compute-apps=pid*) printf '%s\\n' "$OWN_PID" 31337 ;;
  *) exit 3 ;;
esac
"""


def test_the_device_is_read_through_its_monitor_command(tmp_path, monkeypatch):
    smi = tmp_path / "nvidia-smi"
    smi.write_text(FAKE_SMI)
    smi.chmod(0o755)
    calls = tmp_path / "calls"
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SMI_CALLS", str(calls))
    monkeypatch.setenv("OWN_PID", str(os.getpid()))
    r = machine.device_reading("cuda", "GPU-1234")
    assert r == GpuReading(others=1, sm_mhz=1500.0, sm_max_mhz=1980.0, reasons=0x8)
    assert r.slowdown() == "hardware slowdown: SM clock 1,500 of 1,980 MHz"
    assert machine.device_reading("cuda", "GPU-1234", ours=(31337,)).others == 0  # the run's own worker
    assert all(line.startswith("-i GPU-1234 --query-") for line in calls.read_text().splitlines())
    assert machine.device_reading("cpu", None) is None  # the host has no monitor
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert machine.device_reading("cuda", "GPU-1234") is None  # no nvidia-smi: no reading


def test_the_report_names_the_gpu_disturbance():
    g = GraphResult(id="0-forward", role="forward", device="cuda", iterations=10, wall_ms=1.0,
                    busy_ms=0.5, kernel_ms=0.5, window=0,
                    window_load=[Load(0.0, 0.0, 16, gpu_others=1, gpu_slowdown="")])
    r = BreakdownResult(model="m", device="cuda", graphs=[g])
    assert disturbances(r) == ["0-forward was measured while 1 other process used the GPU: "
                               "its times may be inflated"]


def test_a_short_measurement_is_read_over_the_minimum_interval():
    """A profiler window of a few iterations lasts milliseconds, under the counters' 10 ms
    tick: alone it reads as nothing; with ``min_s`` the reading waits idle until the interval
    is long enough, and a process spinning meanwhile (independent: one core) is seen. The
    interval is timed by this test's clock from just before the first reading."""
    import time

    if cpu_counters() is None:
        pytest.skip("no /proc/stat here")
    spinner = start_spinner()
    try:
        t0 = time.monotonic()
        before = cpu_counters()
        short = load_since(before, min_s=0.0)
        if time.monotonic() - t0 < 0.05:  # microseconds, unless a busy machine held us that long
            assert short is None  # too short to tell
        assert load_since(cpu_counters()) is not None  # the default waits the 0.1 s out
        load = load_since(before, min_s=0.5)
        spanned = time.monotonic() - t0
    finally:
        spinner.kill()
        spinner.wait()
    assert spanned >= 0.5 and load is not None and load.others_cores >= 0.6, (spanned, load)
