"""Compile time by phase from torch's own compile timers (``core/compile_phases.py``): synthetic
timers worked out by hand, and the timers torch 2.13.0 and 2.5.1 wrote for one cold compile of
an MLP's training step (``tests/fixtures/compile_events``), against torch's own record of the
same compiles (``compilation_metrics``)."""

from __future__ import annotations

import json

import pytest

from inductor_bench.core import compile_phases as cp
from inductor_bench.core.compiles import merge

from .conftest import FIXTURES

IDS = {"frame_id": 0, "frame_compile_id": 0}


def _ev(name: str, ph: str, ts_s: float, ids: dict | None = None, **extra) -> cp.Event:
    return cp.event(IDS if ids is None else ids, {"name": name, "ph": ph, "ts": ts_s * 1e6, "tid": 0, **extra})


def test_each_moment_goes_to_the_innermost_timer():
    """Synthetic: a 10 s frame compile; backend_compile from 1 to 9 s; Inductor's codegen from 2
    to 8 s with a C++ compile from 3 to 7 s inside it; a timer torch might add (not listed) from
    7.5 to 8 s inside the codegen: codegen's phase."""
    events = [_ev("entire_frame_compile", "B", 0), _ev("backend_compile", "B", 1), _ev("code_gen", "B", 2),
              _ev("compile_file", "B", 3), _ev("compile_file", "E", 7), _ev("some_new_timer", "B", 7.5),
              _ev("some_new_timer", "E", 8), _ev("code_gen", "E", 8), _ev("backend_compile", "E", 9),
              _ev("entire_frame_compile", "E", 10)]
    (rows,) = cp.spans(events).values()
    assert cp.phase_seconds([rows]) == pytest.approx({cp.KERNELS: 4.0, cp.AOT: 2.0, cp.DYNAMO: 2.0, cp.CODEGEN: 2.0})
    assert cp.timed_total([rows]) == pytest.approx(10.0)


def test_interleaved_timers_of_one_name_pair_with_their_own_start():
    """Synthetic: torch writes every timer on thread 0; two C++ compiles on two threads overlap
    (1-6 s and 2-4 s, or 1-4 s and 2-6 s: the timers cannot tell) inside a wait of 0-8 s, and an end never started, a start never ended and
    a complete (X) event of 1 s from 8 s. The overlap counts once."""
    events = [_ev("async_compile.wait", "B", 0), _ev("compile_file", "B", 1), _ev("compile_file", "B", 2),
              _ev("compile_file", "E", 4), _ev("compile_file", "E", 6), _ev("async_compile.wait", "E", 8),
              _ev("GraphLowering.run", "E", 8.5), _ev("Scheduler.codegen", "B", 9.5),
              _ev("GraphLowering.run", "X", 8, dur=1e6)]
    (rows,) = cp.spans(events).values()
    assert sorted((r[0], r[1], r[2]) for r in rows) == [
        ("GraphLowering.run", 8.0, 1.0), ("async_compile.wait", 0.0, 8.0), ("compile_file", 1.0, 5.0),
        ("compile_file", 2.0, 2.0)]  # the latest start of the name is closed first: the union is the same
    assert cp.phase_seconds([rows]) == pytest.approx({cp.KERNELS: 8.0, cp.LOWERING: 1.0})


def test_a_timer_without_ids_belongs_to_the_compile_it_ran_in():
    events = [_ev("entire_frame_compile", "B", 0), _ev("compile_file", "B", 1, ids={}),
              _ev("compile_file", "E", 2, ids={}), _ev("entire_frame_compile", "E", 3),
              _ev("entire_frame_compile", "B", 4, ids={"frame_id": 1, "frame_compile_id": 0}),
              _ev("entire_frame_compile", "E", 5, ids={"frame_id": 1, "frame_compile_id": 0})]
    got = cp.spans(events)
    assert {ids: [r[0] for r in rows] for ids, rows in got.items()} == {
        (0, 0): ["entire_frame_compile", "compile_file"], (1, 0): ["entire_frame_compile"]}
    entries = merge([], [], timers=got)
    assert [x["timers"] for x in entries] == [got[0, 0], got[1, 0]]
    assert cp.phase_line(entries).startswith(
        "compile time by phase (torch's own compile timers, 2 compiles, 4.00 s; each timer's own time to its "
        "phase, docs/breakdown.md): Dynamo (tracing Python, guards) 3.00 s (75%), compiling kernels (C++ "
        "compiler, Triton) 1.00 s (25%)")
    assert cp.phase_line([{"frame_id": 0}]) is None


@pytest.mark.parametrize("version", ["2.13.0", "2.5.1"])
def test_a_recorded_cold_compile_against_torchs_record_of_it(version):
    """torch's compilation_metrics time the frame's compile (Dynamo, AOTAutograd, Inductor's
    forward) and the backward's Inductor compile: the timers' union covers the same seconds."""
    data = json.loads((FIXTURES / "compile_events" / f"mlp-train-torch-{version}.json").read_text())
    events = [e for x in data["events"] if (e := cp.event(x["metadata"], x["payload"])) is not None]
    compiles = cp.spans(events)
    assert list(compiles) == [(0, 0)]
    frame, backward = (m.get("entire_frame_compile_time_s") or m["inductor_compile_time_s"] for m in data["metrics"])
    total = cp.timed_total(compiles.values())
    assert total == pytest.approx(frame + backward, rel=0.01)
    phases = cp.phase_seconds(compiles.values())
    assert sum(phases.values()) == pytest.approx(total)
    assert {cp.DYNAMO, cp.AOT, cp.LOWERING, cp.CODEGEN, cp.KERNELS} <= {p for p, s in phases.items() if s > 0}
    assert next(iter(phases)) == cp.KERNELS  # a cold CPU compile: the C++ compiler takes the most
    assert phases.get(cp.OTHER, 0.0) < 0.01 * total


def test_torchs_timer_names_and_the_autotuning_outside_any_compile():
    """Names torch 2.13 times (``dynamo_timed``): a template's autotuning by its suffix, Triton's
    precompile; a first run's autotuning, which ran in no compile (no ids, no compile open),
    kept apart and counted in the line."""
    assert cp.phase_of("mm_template_autotuning") == cp.AUTOTUNE
    assert cp.phase_of("mm_template_precompiling") == cp.KERNELS
    assert cp.phase_of("CachingAutotuner.benchmark_all_configs") == cp.AUTOTUNE
    assert cp.phase_of("GraphLowering.codegen_subgraph") == cp.CODEGEN
    assert cp.phase_of("TritonBundler.load_cached_static_autotuners") == cp.LOADING
    assert cp.phase_of("something_new") is None
    events = [_ev("entire_frame_compile", "B", 0), _ev("entire_frame_compile", "E", 2),
              _ev("CachingAutotuner.benchmark_all_configs", "B", 3, ids={}),
              _ev("CachingAutotuner.benchmark_all_configs", "E", 4, ids={})]
    got = cp.spans(events)
    assert {ids: [r[0] for r in rows] for ids, rows in got.items()} == {
        (0, 0): ["entire_frame_compile"], cp.NO_COMPILE: ["CachingAutotuner.benchmark_all_configs"]}
    entries = merge([], [], timers=got)
    assert [x["frame_id"] for x in entries] == [0, None]
    assert cp.phase_line(entries).startswith(
        "compile time by phase (torch's own compile timers, 1 compile and the timers that ran outside them "
        "(autotuning 1.00 s), 3.00 s;")
    # a timer of no length outside any compile: counted, with no phase to name
    entries[1]["timers"] = [["async_compile.wait", 0.0, 0.0]]
    assert cp.phase_line(entries).startswith(
        "compile time by phase (torch's own compile timers, 1 compile and the timers that ran outside them, "
        "2.00 s;")
    # one that rounds to 0.00 s: not named either (as the phase list leaves such a phase out)
    entries[1]["timers"] = [["async_compile.wait", 0.0, 0.004]]
    assert cp.phase_line(entries).startswith(
        "compile time by phase (torch's own compile timers, 1 compile and the timers that ran outside them, "
        "2.00 s;")


def test_compares_rows_per_phase():
    """Synthetic: default compiled in 10 s, 6 of them compiling kernels; max-autotune in 40 s,
    30 of them autotuning; eager compiled nothing. A phase is a row where it took a tenth of
    some column's compile (Dynamo's 0.5 s in each: no row)."""
    from inductor_bench.core.compare import ModeResult
    from inductor_bench.core.results import BreakdownResult
    from inductor_bench.render.compare import _compile_phase_rows

    def mode(name: str, spans: list) -> ModeResult:
        compiles = [{"frame_id": 0, "frame_compile_id": 0, "timers": spans}]
        return ModeResult(mode=name, breakdown=BreakdownResult("m", compiles=compiles))

    default = mode("default", [["entire_frame_compile", 0.0, 10.0], ["code_gen", 0.5, 9.5],
                               ["compile_file", 1.0, 6.0]])
    autotune = mode("max-autotune", [["entire_frame_compile", 0.0, 40.0], ["code_gen", 0.5, 39.5],
                                     ["mm_template_autotuning", 1.0, 30.0], ["compile_file", 31.0, 6.0]])
    rows = _compile_phase_rows([ModeResult(mode="eager"), default, autotune])
    assert rows == [["  compile: code generation", "-", "3.50 s", "3.50 s"],
                    ["  compile: compiling kernels", "-", "6.00 s", "6.00 s"],
                    ["  compile: autotuning", "-", "0.00 s", "30.00 s"]]


def test_the_cpu_isa_probe_is_timed_and_counts_as_compiling_kernels(monkeypatch):
    """The tool's timer around Inductor's probe of the CPU's vector instruction sets (C++
    programs compiled and loaded, untimed by torch beyond the compiler): a probe of 20 ms
    inside a lowering with 10 ms of its own on each side, its calls after the first answered at once and not kept. The
    probe here is a stand-in that sleeps (synthetic); the real one is what
    ``pick_vec_isa`` calls through the module."""
    import time

    torch = pytest.importorskip("torch")
    from torch._inductor import cpu_vec_isa

    from inductor_bench.runner.dynamo_counts import CompileRecorder, time_isa_probe

    calls = []

    def probe() -> list:
        if not calls:
            time.sleep(0.02)
        calls.append(1)
        return []

    monkeypatch.setattr(cpu_vec_isa, "valid_vec_isa_list", probe)
    rec = CompileRecorder()
    time_isa_probe(rec)
    time_isa_probe(rec)  # a second attach wraps nothing again
    t0 = time.time_ns() / 1e3
    assert cpu_vec_isa.pick_vec_isa() is cpu_vec_isa.invalid_vec_isa  # through the wrapped probe
    cpu_vec_isa.pick_vec_isa()
    assert len(calls) == 2 and len(rec.timers) == 1
    ids, compile_id, name, ph, ts, _ = rec.timers[0]
    assert (ids, compile_id, name) == (None, None, cp.ISA_PROBE) and ts >= t0
    assert 20e3 <= float(ph[1:]) < 2e6  # µs
    assert torch.__version__  # the real module, patched and restored by monkeypatch
    # in a compile: torch's GraphLowering.run around it, 10 ms of its own on each side (however
    # long a loaded machine made the probe's sleep)
    start, probe_us = ts - 10e3, float(ph[1:])
    events = [_ev("GraphLowering.run", "B", start / 1e6),
              _ev("GraphLowering.run", "E", (start + probe_us + 20e3) / 1e6), rec.timers[0]]
    (rows,) = cp.spans(events).values()
    got = cp.phase_seconds([rows])  # spans keep microseconds
    assert got == pytest.approx({cp.LOWERING: 0.02, cp.VEC_ISA: probe_us / 1e6}, abs=2e-6)


def test_the_timers_total_says_how_it_stands_to_torchs_record_of_the_same_compiles():
    """The two totals of a report: the compile times' (torch's record: the frame's compile,
    4.19 s, and the backward's Inductor compile, 1.45 s) and the timers' union, which also holds
    Dynamo's outermost timer (0.01 s before the frame's) and AOTAutograd's around the backward's
    Inductor compile (0.01 s more): 5.66 s, said to be the record's 5.64 s and 0.02 s around it."""
    from inductor_bench.core.compiles import time_line
    from inductor_bench.core.results import BreakdownResult

    timers = [["dynamo", 0.0, 4.2], ["entire_frame_compile", 0.01, 4.19],
              ["entire_backward_compile", 5.0, 1.46], ["inductor_compile", 5.01, 1.45]]
    run = BreakdownResult("m", compiles=[{**IDS, "seconds": {"frame": 4.19, "backward": 1.45}, "timers": timers}])
    assert time_line(run).endswith("5.64 s in all (1 compile)")
    assert cp.phase_line(run.compiles) == (
        "compile time by phase (torch's own compile timers, 1 compile, 5.66 s: the 5.64 s of torch's record "
        "of them (the compile times) and 0.02 s its timers ran around that record (Dynamo's outermost around a "
        "frame's compile, AOTAutograd's around a backward's Inductor compile); each timer's own time to its "
        "phase, docs/breakdown.md): Dynamo (tracing Python, guards) 4.20 s (74%), Inductor graph passes and "
        "lowering 1.45 s (26%), AOTAutograd (the joint graph, its partition) 0.01 s (0%)")
    # timers that agree with the record to the hundredth: one figure, nothing to say
    same = [{**IDS, "seconds": {"frame": 4.2}, "timers": [["entire_frame_compile", 0.0, 4.2]]}]
    assert cp.phase_line(same).startswith("compile time by phase (torch's own compile timers, 1 compile, 4.20 s; ")
    # a timer that never ended (a compile that raised) is left out: the timers fall short of the record
    short = [{**IDS, "seconds": {"frame": 3.0}, "timers": [["entire_frame_compile", 0.0, 2.0]]}]
    assert cp.phase_line(short).startswith(
        "compile time by phase (torch's own compile timers, 1 compile, 2.00 s, 1.00 s less than torch's record "
        "of them (the compile times, 3.00 s): a timer that never ended (a compile that raised) is left out; ")
