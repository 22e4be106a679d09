"""`inductor-bench analyze`: any kineto trace, per step. Numbers are checked against an
independent reading of the raw JSON (plain json/gzip, a sort-and-merge union written here),
on every real GPU trace we have (tests/fixtures/hta/, and ../shared/gpu-traces/hta/ where
the checkout has it)."""

from __future__ import annotations

import gzip
import json
import math
import re
from pathlib import Path

import pytest

from inductor_bench.cli import main
from inductor_bench.core.analyze import WHOLE_TRACE, analyze_trace
from inductor_bench.core.timeline import Covered
from inductor_bench.core.trace import load_for_analysis

from .conftest import FIXTURES, ROOT

SHARED = ROOT.parent / "shared" / "gpu-traces" / "hta"
TRACES = {p.name: p for d in (SHARED, FIXTURES / "hta") if d.is_dir() for p in sorted(d.glob("*.json*"))}
DEVICE = {"kernel", "gpu_memcpy", "gpu_memset"}
LAUNCH = {"cuda_runtime", "cuda_driver"}


def raw_events(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]


def merged_length(intervals: list[tuple[float, float]]) -> float:
    total, cur = 0.0, None
    for a, b in sorted(intervals):
        if b <= a:
            continue
        if cur is None or a > cur[1]:
            total += cur[1] - cur[0] if cur else 0.0
            cur = [a, b]
        else:
            cur[1] = max(cur[1], b)
    return total + (cur[1] - cur[0] if cur else 0.0)


def independent(path: Path) -> dict[tuple[str, str], tuple[float, float, float, float]]:
    """(step, device) -> (wall µs, busy µs, summed duration µs, other steps' work µs), from the
    raw JSON; a step ending over 100 ms past the profiler's span ("PyTorch Profiler (0)")
    stops at it, or at its last device work if later."""
    evs = raw_events(path)
    steps = sorted(
        (
            (e["name"], float(e["ts"]), float(e["ts"]) + float(e["dur"]))
            for e in evs
            if re.fullmatch(r"ProfilerStep#\d+", e.get("name", ""))
        ),
        key=lambda s: s[1],
    )
    if not steps:  # the span of what the analysis reads: CPU ops, launches, device activity
        span = [e for e in evs if e.get("cat") in DEVICE | LAUNCH | {"cpu_op", "user_annotation"}]
        steps = [
            (
                WHOLE_TRACE,
                min(float(e["ts"]) for e in span),
                max(float(e["ts"]) + float(e.get("dur", 0)) for e in span),
            )
        ]
    issued = {
        e["args"]["correlation"]: float(e["ts"])
        for e in evs
        if e.get("cat") in LAUNCH and "correlation" in e.get("args", {})
    }
    members: dict[str, list[dict]] = {s[0]: [] for s in steps}
    first = min((c for c in issued if isinstance(c, int) and c > 0), default=None)
    for e in evs:
        if e.get("cat") not in DEVICE:
            continue
        corr = e.get("args", {}).get("correlation")
        if corr not in issued and first is not None and isinstance(corr, int) and 0 < corr < first:
            continue  # launched before the profiler started: no step's own
        t = issued.get(corr, float(e["ts"]))
        owner = [s for s in steps if s[1] <= t <= s[2]]
        if owner:
            members[owner[-1][0]].append(e)
    devs = {str(e["pid"]) for es in members.values() for e in es}
    recorded = max((float(e["ts"]) + float(e["dur"]) for e in evs
                    if e.get("cat") == "Trace" and e["name"].startswith("PyTorch Profiler")), default=math.inf)
    every = [e for e in evs if e.get("cat") in DEVICE]  # launched in a step or not
    out = {}
    for name, start, end in steps:
        ends = [float(e["ts"]) + float(e["dur"]) for e in members[name]]
        stop = max([end, *ends])
        if stop > recorded + 100_000:  # a step running past the profiler's recording stops there
            stop = max([start, recorded, *ends])
        for dev in devs:  # every device with work in any step, idle where this step had none
            mine = [e for e in members[name] if str(e["pid"]) == dev]
            busy = merged_length(
                [(max(float(e["ts"]), start), min(float(e["ts"]) + float(e["dur"]), stop)) for e in mine]
            )
            anyone = merged_length(
                [(max(float(e["ts"]), start), min(float(e["ts"]) + float(e["dur"]), stop))
                 for e in every if str(e["pid"]) == dev]
            )
            out[name, dev] = (stop - start, busy, sum(float(e["dur"]) for e in mine), anyone - busy)
    return out


@pytest.mark.parametrize("name", sorted(TRACES))
def test_per_step_busy_equals_an_independent_union(name):
    """Wall, busy and summed durations per step and device, and the other steps' work in its
    idle: the union of every event of the device in the window less the step's own."""
    path = TRACES[name]
    r = analyze_trace(load_for_analysis(path))
    expected = independent(path)
    got = {
        (s.name, d.device): (s.wall_ms * 1e3, d.busy_ms * 1e3, d.kernel_ms * 1e3, d.other_work_ms * 1e3)
        for s in r.steps
        for d in s.devices
    }
    assert got.keys() == expected.keys()
    for key, figures in expected.items():
        assert got[key] == pytest.approx(figures, rel=1e-9, abs=1e-6), key
    for s in r.steps:
        for d in s.devices:
            assert d.busy_ms <= s.wall_ms + 1e-9
            assert sum(d.categories.values()) == pytest.approx(d.kernel_ms, rel=1e-12)
            idle = d.other_work_ms + d.waiting_on_cpu_ms + d.queued_ms + d.nothing_launched_ms
            assert idle == pytest.approx(s.wall_ms - d.busy_ms, rel=1e-9, abs=1e-9)
            assert min(d.other_work_ms, d.waiting_on_cpu_ms, d.queued_ms, d.nothing_launched_ms) >= 0


@pytest.mark.parametrize("name", sorted(TRACES))
def test_kernels_add_up_to_the_steps(name):
    r = analyze_trace(load_for_analysis(TRACES[name]))
    steps_total = sum(d.kernel_ms for s in r.steps for d in s.devices)
    assert sum(k.total_ms for k in r.kernels) == pytest.approx(steps_total, rel=1e-9)
    assert all(sum(k.per_step_ms) == pytest.approx(k.total_ms) for k in r.kernels)


def test_idle_split_on_a_hand_built_timeline(tmp_path):
    """One step 0..100 µs. Kernel A launched at 10, runs 20..30; kernel B launched at 25
    (while A runs), runs 50..60 (queued 30..50); kernel C launched at 70, runs 75..80
    (waiting on the CPU 60..70, queued 70..75); nothing more: 80..100."""

    def x(name, cat, ts, dur, **args):
        return {
            "ph": "X",
            "name": name,
            "cat": cat,
            "ts": ts,
            "dur": dur,
            "pid": 0 if cat == "kernel" else 1,
            "tid": 7 if cat == "kernel" else 1,
            "args": args,
        }

    evs = [x("ProfilerStep#3", "user_annotation", 0, 100)]
    for k, (issue, start, dur) in enumerate([(10, 20, 10), (25, 50, 10), (70, 75, 5)]):
        evs += [
            x("cudaLaunchKernel", "cuda_runtime", issue, 2, correlation=k),
            x(f"k{k}", "kernel", start, dur, correlation=k),
        ]
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"traceEvents": evs}))
    (s,) = analyze_trace(load_for_analysis(f)).steps
    (d,) = s.devices
    assert (s.name, s.wall_ms * 1e3, d.busy_ms * 1e3) == ("ProfilerStep#3", 100.0, 25.0)
    # before A: 0..10 waiting on the CPU, 10..20 queued
    assert d.waiting_on_cpu_ms * 1e3 == pytest.approx(10 + 10)
    assert d.queued_ms * 1e3 == pytest.approx(10 + 20 + 5)
    assert d.nothing_launched_ms * 1e3 == pytest.approx(20)


def test_other_steps_work_and_a_step_without_work(tmp_path, capsys):
    """A pipelined loop, by hand (µs). Step 1 (0..100) launches A at 10; A runs 20..150, past
    the step, whose window it extends to 150. Step 2 (100..200) launches B at 110; B waits for
    A and runs 150..180. Step 3 (200..250) launches nothing. Step 2's idle before B is the
    device running step 1's A (100..150: other steps' work, none of it waiting or queued);
    180..200 nothing launched. Step 3 has a row: all 50 µs nothing launched."""
    evs = [{"ph": "X", "name": f"ProfilerStep#{k}", "cat": "user_annotation", "ts": a, "dur": b - a,
            "pid": 1, "tid": 1} for k, (a, b) in enumerate([(0, 100), (100, 200), (200, 250)], 1)]
    for k, (issue, start, dur) in enumerate([(10, 20, 130), (110, 150, 30)]):
        evs += [
            {"ph": "X", "name": "cudaLaunchKernel", "cat": "cuda_runtime", "ts": issue, "dur": 2,
             "pid": 1, "tid": 1, "args": {"correlation": k}},
            {"ph": "X", "name": f"k{k}", "cat": "kernel", "ts": start, "dur": dur, "pid": 0, "tid": 7,
             "args": {"correlation": k}},
        ]
    f = tmp_path / "pipelined.json"
    f.write_text(json.dumps({"traceEvents": evs}))
    steps = analyze_trace(load_for_analysis(f)).steps
    got = [(s.wall_ms * 1e3, d.busy_ms * 1e3, d.other_work_ms * 1e3, d.waiting_on_cpu_ms * 1e3,
            d.queued_ms * 1e3, d.nothing_launched_ms * 1e3) for s in steps for d in s.devices]
    expected = [(150, 130, 0, 10, 10, 0), (100, 30, 50, 0, 0, 20), (50, 0, 0, 0, 0, 50)]
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g == pytest.approx(e, abs=1e-9)
    # the typical step: steps 1 and 2 (step 3 holds nothing): wall 125, own busy 80 (64.0%),
    # other steps' work 25 (20.0%), busy with any step's work 84.0%
    code, out, _ = run_cli(capsys, str(f))
    assert code == 0 and "ProfilerStep#3 held nothing of its own" in out
    assert ("device 0 is pipelined: besides its own 64.0% it ran other steps' work 20.0% of the steady "
            "mean step's wall, busy with any step's work 84.0%") in out


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = 0
    try:
        main(["analyze", *argv])
    except SystemExit as e:
        code = e.code or 0
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name", sorted(TRACES))
def test_cli_prints_every_trace(capsys, name):
    code, out, err = run_cli(capsys, str(TRACES[name]))
    assert code == 0, err
    assert out.startswith(f"inductor-bench analyze: {name}")
    assert "Time by category" in out and "Top " in out


def test_cli_json_and_markdown(capsys, tmp_path):
    path = next(iter(TRACES.values()))
    code, out, _ = run_cli(capsys, str(path), "--format", "json")
    assert code == 0 and json.loads(out)["schema"] == "inductor-bench/analyze"
    code, out, _ = run_cli(capsys, str(path), "--format", "markdown")
    assert code == 0 and out.startswith("## inductor-bench analyze:") and "|:---" in out


def _no_ops(tmp_path: Path) -> Path:
    """Neither device events nor CPU ops: a step marker alone."""
    f = tmp_path / "no_ops.json"
    step = {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 1, "dur": 5, "pid": 1, "tid": 1}
    f.write_text(json.dumps({"traceEvents": [step]}))
    return f


def _truncated(tmp_path: Path) -> Path:
    text = json.dumps(
        {
            "traceEvents": [
                {"ph": "X", "cat": "kernel", "name": "k", "ts": i, "dur": 1, "pid": 0, "tid": 7}
                for i in range(100)
            ]
        }
    )
    f = tmp_path / "cut.json"
    f.write_text(text[: len(text) // 2])
    return f


BAD = {
    "garbage": (lambda t: _write(t / "g.json.gz", b"\x1f\x8b not really gzip"), "not readable"),
    "truncated": (_truncated, "cut.json"),
    "empty": (lambda t: _write(t / "e.json", b""), "e.json"),
    "not kineto": (lambda t: _write(t / "n.json", b'{"hello": [1, 2]}'), "n.json"),
    "no ops": (_no_ops, "no CPU ops"),
    "missing": (lambda t: t / "nope.json", "no such trace file"),
}


def _write(p: Path, data: bytes) -> Path:
    p.write_bytes(data)
    return p


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_traces_give_one_line_and_exit_2(capsys, tmp_path, case):
    make, words = BAD[case]
    code, out, err = run_cli(capsys, str(make(tmp_path)))
    assert code == 2
    assert out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("inductor-bench: error: ") and words in lines[0]


def test_covered_measures_a_union_inside_any_window():
    """Synthetic intervals 0..10, 5..15 (merged 0..15), 20..30, 30..35 (touching: 20..35)."""
    c = Covered([(5, 15), (0, 10), (30, 35), (20, 30), (40, 40)])
    cases = {(0, 100): 30, (-5, 0): 0, (15, 20): 0, (12, 22): 5, (3, 4): 1, (14, 31): 12, (35, 50): 0,
             (7, 7): 0, (34, 36): 1}
    for (a, b), length in cases.items():
        assert c.within(a, b) == length, (a, b)
    assert Covered([]).within(0, 10) == 0


def test_events_unfinished_when_the_profiler_stopped_are_left_out_and_counted(tmp_path, capsys):
    """Synthetic: kineto writes a duration of -1 for a CPU event still open when the profiler
    stopped. Step 2's marker (at 100, -1) and an op (at 300, -1) are such events: step 2 is no
    window (its wall read -0.001 ms before), the op no time; step 1 and its kernel stand. A
    trace whose only op is unfinished has nothing to analyse."""

    def x(name, cat, ts, dur, **args):
        dev = cat == "kernel"
        return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": 0 if dev else 1,
                "tid": 7 if dev else 1, "args": args}

    evs = [x("ProfilerStep#1", "user_annotation", 0, 100), x("cudaLaunchKernel", "cuda_runtime", 10, 2, correlation=1),
           x("k1", "kernel", 20, 30, correlation=1),
           x("ProfilerStep#2", "user_annotation", 100, -1), x("aten::add", "cpu_op", 300, -1)]
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"traceEvents": evs}))
    for r in (analyze_trace(load_for_analysis(f)), None):
        if r is None:  # the CLI reads the file straight into columns
            code, out, err = run_cli(capsys, str(f), "--format", "json")
            assert code == 0, err
            r = json.loads(out)
            steps, unfinished = [s["name"] for s in r["steps"]], r["unfinished"]
        else:
            steps, unfinished = [s.name for s in r.steps], r.unfinished
        assert steps == ["ProfilerStep#1"] and unfinished == {"ProfilerStep#2": 1, "aten::add": 1}
    code, out, _ = run_cli(capsys, str(f))
    assert code == 0 and ("2 event(s) with a negative duration were left out (unfinished when the profiler "
                          "stopped: their end is not known): ProfilerStep#2, aten::add") in out
    f.write_text(json.dumps({"traceEvents": [x("aten::mm", "cpu_op", 100, -5)]}))
    code, _, err = run_cli(capsys, str(f))
    assert code == 2 and err.strip().endswith("1 event(s) with a negative duration (unfinished) were left out")


def test_categories_above_the_wall_are_said_to_overlap(capsys, tmp_path):
    """Synthetic: two kernels on two streams, 80 and 70 µs, overlapping inside a 100 µs step: the
    categories sum 0.150 ms, 150% of the wall, and a line under the table says why, with busy,
    their union (10 to 90 µs: 0.080 ms). One kernel alone: no such line."""
    evs = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100, "pid": 1, "tid": 1},
           {"ph": "X", "cat": "kernel", "name": "a", "ts": 10, "dur": 80, "pid": 0, "tid": 7},
           {"ph": "X", "cat": "kernel", "name": "b", "ts": 20, "dur": 70, "pid": 0, "tid": 8}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": evs}))
    code, out, _ = run_cli(capsys, str(path))
    assert code == 0
    assert ("the categories sum the events' durations, 0.150 ms, more than the 0.100 ms wall: events on "
            "concurrent streams overlap (busy, their union, 0.080 ms, never exceeds the wall)") in " ".join(out.split())
    path.write_text(json.dumps({"traceEvents": evs[:2]}))
    code, out, _ = run_cli(capsys, str(path))
    assert code == 0 and "more than the" not in out
