"""The machine's speed around each window (runner/speed.py): the worker waits for the full
speed before a window, within its budgets, and the report says at what speed the kept window
ran. The watch runs on a synthetic clock and synthetic probe readings; no torch."""

from __future__ import annotations

import copy

import pytest

from inductor_bench.core.analysis import window_speeds
from inductor_bench.core.load import Load
from inductor_bench.core.processes import merge_responses
from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
from inductor_bench.core.step import disturbances
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.runner import speed
from inductor_bench.runner.speed import SpeedWatch


class FakeMachine:
    """Probe readings in turn (seconds of the fixed work), each taking ``cost`` of the clock;
    ``sleep`` advances the clock."""

    def __init__(self, readings: list[float], cost: float = 0.001) -> None:
        self.readings, self.cost, self.now, self.slept = list(readings), cost, 0.0, 0.0

    def clock(self) -> float:
        return self.now

    def probe(self) -> float:
        self.now += self.cost
        return self.readings.pop(0) if len(self.readings) > 1 else self.readings[0]

    def sleep(self, s: float) -> None:
        self.now += s
        self.slept += s


def watch(m: FakeMachine, reference: float | None = None) -> SpeedWatch:
    return SpeedWatch(reference=reference, started=True, clock=m.clock, probe=m.probe, sleep=m.sleep)


def test_a_window_waits_until_the_machine_is_back_at_full_speed():
    m = FakeMachine([9.0e-3, 9.2e-3, 9.1e-3, 5.3e-3])
    w = watch(m, reference=5.2e-3)
    reading, waited = w.before_window()
    assert reading == 5.3e-3  # within 10% of 5.2 ms: the window starts here
    assert m.slept == pytest.approx(3 * speed.POLL_S)
    assert waited == pytest.approx(m.now) and w.waited_s == pytest.approx(waited)


def test_a_machine_at_full_speed_costs_one_reading():
    m = FakeMachine([5.3e-3])
    reading, waited = watch(m, reference=5.2e-3).before_window()
    assert (reading, m.slept) == (5.3e-3, 0.0)
    assert waited == pytest.approx(m.cost)


def test_the_wait_stops_at_its_budget_per_window_and_per_process():
    m = FakeMachine([9.0e-3])  # slow for ever
    w = watch(m, reference=5.2e-3)
    _, waited = w.before_window()
    assert speed.WAIT_S <= waited < speed.WAIT_S + speed.POLL_S + 2 * m.cost
    w.waited_s = speed.WAIT_TOTAL_S - 0.25  # the process's waits nearly spent
    _, waited = w.before_window()
    assert waited < 0.25 + speed.POLL_S + 2 * m.cost


def test_a_processs_first_window_looks_for_the_fast_speed_and_keeps_the_fastest_reading():
    m = FakeMachine([9.0e-3, 9.1e-3, 5.2e-3, 9.0e-3, 9.0e-3, 5.25e-3], cost=0.05)
    w = SpeedWatch(clock=m.clock, probe=m.probe, sleep=m.sleep)
    reading, _ = w.before_window()
    assert w.reference == 5.2e-3  # met while polling at the start
    assert reading <= 5.2e-3 * (1 + speed.SLOW)


def test_each_windows_speed_is_the_reference_over_its_reading():
    speeds, waited = window_speeds({"speed_reference_s": 0.005, "window_probe_s": [0.005, 0.008, None],
                                    "speed_waited_s": 1.23456})
    assert speeds == [1.0, 0.625, None] and waited == 1.235
    assert window_speeds({}) == ([], 0.0)  # answers saved before readings: none


def test_merged_answers_take_the_fastest_reading_of_all_and_add_the_waits():
    a = {"windows_ms": [1.0], "window": 0, "window_probe_s": [0.006], "speed_reference_s": 0.0055,
         "speed_waited_s": 1.0}
    b = {"windows_ms": [1.2], "window": 0, "window_probe_s": [0.009], "speed_reference_s": 0.005,
         "speed_waited_s": 0.5}
    merged, kept = merge_responses([a, b])
    assert kept == 0
    assert merged["window_probe_s"] == [0.006, 0.009]
    assert (merged["speed_reference_s"], merged["speed_waited_s"]) == (0.005, 1.5)
    speeds, _ = window_speeds(merged)
    assert speeds == [round(0.005 / 0.006, 4), round(0.005 / 0.009, 4)]


def _result(speeds, waited):
    k = KernelStat(name="aten::mm", category="extern_gemm", calls=1, ms=1.0, samples_ms=[1.0] * 10)
    g = GraphResult(
        id="0-backward", role="backward", iterations=10, wall_ms=1.1, wall_samples_ms=[1.1] * 10,
        busy_ms=1.0, kernel_ms=1.0, categories={"extern_gemm": 1.0}, kernels=[k],
        windows_ms=[1.5, 1.45], window_faults=[None, None], window=1, window_speed=speeds,
        speed_waited_s=waited,
    )
    return BreakdownResult(model="m", graphs=[g])


def test_the_report_says_when_the_kept_window_ran_on_a_slow_machine_and_how_long_it_waited():
    text = render_breakdown(_result([1.0, 0.64], 3.21))
    assert ("(0-backward 1.100 ms (the machine at 64% of its full speed), on the worker's clock 1.450 ms "
            "and the others +3%)") in text
    assert "; 3.2 s spent waiting for the machine's full speed before windows." in text
    assert ("0-backward was measured while the machine ran at 64% of its full speed (fixed work "
            "took 1.56x the fastest time of the run): its times may be inflated") in text
    quiet = render_breakdown(_result([0.7, 0.84], 0.0))
    assert "full speed" not in quiet  # 84%: within the reading's own spread, which the watch allows
    assert "inflated" not in quiet  # the slow window was not the kept one


def test_a_slow_machine_and_other_processes_are_one_warning_of_the_graph():
    r = _result([1.0, 0.5], 1.0)
    g = r.graphs[0]
    g.window_load = [None, Load(others_cores=1.2, steal_pct=0.0, cores=2)]
    assert disturbances(r) == [
        "0-backward was measured while other processes kept 1.2 of 2 cores busy and the machine "
        "ran at 50% of its full speed (fixed work took 2.00x the fastest time of the run): its "
        "times may be inflated"]
    g.window_speed = [1.0, 0.75]  # exactly 25% slower: within what the watch allows
    assert disturbances(r) == ["0-backward was measured while other processes kept 1.2 of 2 "
                               "cores busy: its times may be inflated"]
    g.window_speed = []  # a run saved before the readings: nothing to say
    g.window_load = []
    assert disturbances(r) == []


def test_speeds_round_trip_through_json_and_are_left_out_when_unread():
    back = BreakdownResult.from_dict(_result([1.0, 0.64], 3.2).to_dict()).graphs[0]
    assert (back.window_speed, back.speed_waited_s) == ([1.0, 0.64], 3.2)
    d = _result([], 0.0).to_dict()["graphs"][0]
    assert "window_speed" not in d and "speed_waited_s" not in d


@pytest.mark.parametrize(("device", "threads", "others", "hint"), [
    ("cpu", 2, 1.0, True),  # 2 threads, 1 of 2 cores taken: every parallel region waits
    ("cpu", 1, 1.0, False),  # one thread fits in the free core
    ("cpu", 2, 0.3, False),  # others below the disturbance floor
    ("cuda", 2, 1.0, False),  # the kernels run on the device, not in the host's threads
])
def test_more_host_threads_than_free_cores_gets_a_hint(device, threads, others, hint):
    """Synthetic: the kept window's load and the run's intra-op threads (those its ceilings
    were measured with). The hint names OMP_NUM_THREADS where the threads outnumber the free
    cores, which no per-iteration rule can make up for."""
    from inductor_bench.core.ceilings import Ceilings, Roofline

    r = _result([1.0, 1.0], 0.0)
    r.device = device
    r.graphs[0].window_load = [None, Load(others_cores=others, steal_pct=0.0, cores=2)]
    r.roofline = Roofline(measured=Ceilings(device_name="x", gbps=10.0, threads=threads))
    line = (f"hint: the kernels ran {threads} intra-op threads while other processes kept "
            f"{others:.1f} of the 2 cores busy")
    assert (line in render_breakdown(r)) is hint
    r.roofline = None  # no ceilings, no thread count: nothing to say
    assert "hint: the kernels ran" not in render_breakdown(r)


def test_compare_gives_the_hint_once():
    """Synthetic: two columns whose breakdowns both ran 2 threads beside 1.0 busy core; the
    threads and the cores are the machine's, so the hint is one note, not one per column."""
    import copy

    from inductor_bench.core.ceilings import Ceilings, Roofline
    from inductor_bench.core.compare import CompareResult, ModeResult
    from inductor_bench.render.compare import render_compare

    r = _result([1.0, 1.0], 0.0)
    r.device = "cpu"
    r.graphs[0].window_load = [None, Load(others_cores=1.0, steal_pct=0.0, cores=2)]
    r.roofline = Roofline(measured=Ceilings(device_name="x", gbps=10.0, threads=2))
    modes = [ModeResult(mode=m, compile_s=1.0, step_samples_ms=[9.0] * 5, breakdown=copy.deepcopy(r))
             for m in ("default", "max-autotune")]
    text = render_compare(CompareResult(model="m", device="cpu", modes=modes))
    assert text.count("hint: ") == 1
    assert "hint: default: the kernels ran 2 intra-op threads while other processes kept 1.0" in text


def test_a_slow_parallel_probe_is_a_disturbance_and_names_its_factor_in_the_hint():
    """Synthetic: the kept window's parallel probe (runner/parallel_probe.py) read 18.4: a
    parallel op took 18.4x as long on the run's 2 threads as on one. The warning and the hint
    say so, with others' load below its own floor too (a busy core the counters do not charge
    to others: another tenant's, a process of higher priority)."""
    from inductor_bench.core.ceilings import Ceilings, Roofline

    r = _result([1.0, 1.0], 0.0)
    r.device = "cpu"
    r.roofline = Roofline(measured=Ceilings(device_name="x", gbps=10.0, threads=2))
    r.graphs[0].window_load = [None, Load(others_cores=0.3, steal_pct=0.0, cores=2, parallel_x=18.4)]
    assert disturbances(r) == ["0-backward was measured while parallel work took 18.4x as long on all the "
                               "threads as on one (each parallel region waits for a thread whose core is "
                               "taken): its times may be inflated"]
    text = render_breakdown(r)
    assert ("hint: the kernels ran 2 intra-op threads while other work held their cores (a parallel op took "
            "18.4x as long on them as on one thread, in 0-backward): each parallel region waits") in text
    r.graphs[0].window_load = [None, Load(others_cores=1.2, steal_pct=0.0, cores=2, parallel_x=18.4)]
    assert ("hint: the kernels ran 2 intra-op threads while other processes kept 1.2 of the 2 cores busy "
            "(during 0-backward) (a parallel op took 18.4x as long on them as on one thread, in 0-backward)"
            ) in render_breakdown(r)
    # two graphs: the busiest cores read in one, the slowest parallel op in the other, each named
    fwd = copy.deepcopy(r.graphs[0])
    fwd.id, fwd.role = "0-forward", "forward"
    fwd.window_load = [None, Load(others_cores=0.1, steal_pct=0.0, cores=2, parallel_x=45.5)]
    r.graphs[0].window_load = [None, Load(others_cores=0.5, steal_pct=0.0, cores=2, parallel_x=1.0)]
    r.graphs.insert(0, fwd)
    assert ("while other processes kept 0.5 of the 2 cores busy (during 0-backward) (a parallel op took 45.5x "
            "as long on them as on one thread, in 0-forward)") in render_breakdown(r)
    r.graphs.pop(0)
    # the threads sharing the work, as on a quiet machine: nothing to say
    r.graphs[0].window_load = [None, Load(others_cores=0.0, steal_pct=0.0, cores=2, parallel_x=0.56)]
    assert disturbances(r) == [] and "hint: the kernels ran" not in render_breakdown(r)
    back = Load.from_dict(Load(others_cores=0.0, steal_pct=0.0, cores=2, parallel_x=0.56).to_dict())
    assert back.parallel_x == 0.56
    assert "parallel_x" not in Load(others_cores=0.0, steal_pct=0.0, cores=2).to_dict()  # not read: not saved


def test_the_parallel_probe_times_all_threads_against_one_and_puts_the_threads_back():
    """The probe's figure is the add's time on the threads over its time on one: under 1 where
    the threads share the work, far over 1 where a thread waits for a core (not asserted here:
    that is the machine's state, not the probe's mechanism); with one thread there is nothing
    to compare."""
    torch = pytest.importorskip("torch")
    from inductor_bench.runner import parallel_probe

    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        x = parallel_probe.parallel_x()
        assert x is not None and x > 0 and torch.get_num_threads() == 2
        torch.set_num_threads(1)
        assert parallel_probe.parallel_x() is None and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(threads)
    assert parallel_probe.slower(0.5, 18.4) == 18.4 and parallel_probe.slower(None, 0.561) == 0.56
    assert parallel_probe.slower(None, None) is None


def test_the_parallel_probe_figure_is_the_ops_time_on_the_threads_over_its_time_on_one(monkeypatch):
    """Against known times on a synthetic clock: an add that takes 6 ms on the threads and 2 ms
    on one reads 3, as the report's "N x slower on the threads" says; a stall of 40 ms in one
    of the tries on each side changes nothing (the fastest try is kept). The clock is the
    test's, not the machine's: the late wake-ups of sleeps on a loaded machine (sleeps of 6
    and 2 ms read 2.09x with other processes on both cores) are no part of the rule."""
    torch = pytest.importorskip("torch")
    import types

    from inductor_bench.runner import parallel_probe

    clock = {"now": 0.0, "calls": 0}

    def add(a, b, out):
        clock["calls"] += 1
        stall = 0.040 if clock["calls"] % (parallel_probe.REPS * parallel_probe.TRIES) == 2 else 0.0
        clock["now"] += (0.006 if torch.get_num_threads() > 1 else 0.002) + stall
        return out

    threads = torch.get_num_threads()
    monkeypatch.setattr(torch, "add", add)
    monkeypatch.setattr(parallel_probe, "time", types.SimpleNamespace(perf_counter=lambda: clock["now"]))
    monkeypatch.setattr(parallel_probe, "ELEMENTS", 8)  # the op is the clock's, not the tensors'
    try:
        torch.set_num_threads(2)
        x = parallel_probe.parallel_x()
    finally:
        torch.set_num_threads(threads)
    assert clock["calls"] == 2 * parallel_probe.REPS * parallel_probe.TRIES
    assert x == pytest.approx(3.0, rel=1e-9)
