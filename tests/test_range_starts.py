"""Ranges a trace recorded with ``with_stack=True`` wrote at their end (core/range_starts.py):
on torch 2.5.1's recorded traces each restored start equals the opening built-in found from the
raw JSON's ``Python parent id``s under the call that opened the range; the same loop recorded by
torch 2.13.0 (written right) and every range written right are left as they are; synthetic
traces check nesting, threads and what is not such a range, each figure worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inductor_bench.core.analyze import analyze_file
from inductor_bench.core.analyze_ranks import analyze_ranks
from inductor_bench.core.columns import load_columns
from inductor_bench.render.analyze import render_analyze
from inductor_bench.render.ranks import render_ranks

from .conftest import FIXTURES
from .test_gpu_analyze_stack import ACTIVE, _raw, check_loop

LOOP = FIXTURES / "cpu_loop"
STEPS = FIXTURES / "cpu_step_python"
OPENER = {"step": "step", "__exit__": "__enter__"}  # the call that closes a range -> the one that opened it


def _opened_at(events: list[dict], ann: dict) -> float:
    """The start of the built-in that opened ``ann``, from the raw JSON alone: the profiler's
    call that holds the range's end (the outermost ``step`` or ``__exit__``), its latest earlier sibling of
    the opening kind, and the ``_record_function_enter`` built-in under that sibling."""
    py = [e for e in events if e.get("cat") == "python_function"]
    by_id = {e["args"]["Python id"]: e for e in py}
    end = ann["ts"] + ann["dur"]
    closer = max((e for e in py if "profiler" in e["name"] and e["name"].rsplit(": ", 1)[-1] in OPENER
                  and e["ts"] <= end <= e["ts"] + e["dur"]), key=lambda e: e["dur"])  # the outermost
    kind = OPENER[closer["name"].rsplit(": ", 1)[-1]]
    parent = closer["args"]["Python parent id"]
    opener = max((e for e in py if e["args"]["Python parent id"] == parent and e["ts"] < closer["ts"]
                  and "profiler" in e["name"] and e["name"].endswith(f": {kind}")), key=lambda e: e["ts"])

    def under(e: dict) -> bool:
        while e is not None:
            if e is opener:
                return True
            e = by_id.get(e["args"].get("Python parent id"))
        return False

    (built_in,) = [e for e in py if "_record_function_enter" in e["name"] and under(e)]
    return built_in["ts"]


@pytest.mark.parametrize("path", [LOOP / "stack-torch-2.5.1.json.gz", STEPS / "torch-2.5.1" / "steps_python.json.gz"])
def test_torch_25_steps_start_where_their_opening_call_did(path):
    events = _raw(path)
    steps = sorted((e for e in events if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
    assert steps and all(e["dur"] < 200 for e in steps)  # as written: the closing call alone
    want = [(e["name"], _opened_at(events, e), e["ts"] + e["dur"]) for e in steps]
    c = load_columns(path)
    assert sorted(m[:3] for m in c.markers) == want
    assert c.restarted_ranges == [e["name"] for e in steps]
    regions = {(c.names.values[r[0]], r[1], r[2]) for r in c.regions}
    assert regions == {(e["name"], e["ts"], e["ts"] + e["dur"]) for e in events
                       if e.get("cat") == "user_annotation" and not e["name"].startswith(("ProfilerStep#", "## "))}
    r = analyze_file(path)
    assert [s.name for s in r.steps] == [w[0] for w in want]
    assert all(s.wall_ms >= (end - start) / 1e3 for s, (_, start, end) in zip(r.steps, want, strict=True))
    text = render_analyze(r, "text")
    assert f"{len(steps)} ranges were written with the start of the Python call that closed them" in text


def test_the_loop_recorded_by_torch_213_is_left_as_written():
    path = LOOP / "stack-torch-2.13.0.json.gz"
    events = _raw(path)
    c = load_columns(path)
    assert c.restarted_ranges == []
    assert sorted(m[:3] for m in c.markers) == sorted(
        (e["name"], e["ts"], e["ts"] + e["dur"]) for e in events if e["name"].startswith("ProfilerStep#"))
    assert "written with the start" not in render_analyze(analyze_file(path), "text")


def _x(name, cat, ts, dur, tid=1):
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": 1, "tid": tid, "args": {}}


ENTER = "<built-in method _record_function_enter_new of PyCapsule object at 0x1>"
STEP_CALL = "torch/profiler/profiler.py(766): step"
EXIT_CALL = "torch/autograd/profiler.py(738): __exit__"


def _load(tmp_path: Path, events: list[dict]):
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"traceEvents": events}))
    return load_columns(f)


def test_synthetic_nested_ranges_pair_latest_opened_first(tmp_path):
    """Synthetic: "outer" opened at 10 (its built-in 10-14), "inner" at 20 (20-23), "ok" opened
    inside its own built-in (30-34, range 31-40), then inner closed in a step() call 50-60
    (written 50-55) and outer in an __exit__ 70-80 (written 70-79; its file an absolute path):
    inner starts at 20, outer at 10, ok as written."""
    c = _load(tmp_path, [
        _x(ENTER, "python_function", 10, 4), _x(ENTER, "python_function", 20, 3),
        _x(ENTER, "python_function", 30, 4), _x("ok", "user_annotation", 31, 9),
        _x(STEP_CALL, "python_function", 50, 10), _x("ProfilerStep#1", "user_annotation", 50.001, 5),
        _x("/venv/lib/python3.11/site-packages/" + EXIT_CALL, "python_function", 70, 10),
        _x("outer", "user_annotation", 70, 9),
    ])
    assert [m[:3] for m in c.markers] == [("ProfilerStep#1", 20, 55.001)]
    assert sorted((c.names.values[r[0]], r[1], r[2]) for r in c.regions) == [("ok", 31, 40), ("outer", 10, 79)]
    assert c.restarted_ranges == ["outer", "ProfilerStep#1"]


def test_synthetic_what_is_not_a_range_written_at_its_end(tmp_path):
    """Synthetic: a range 10 ns after the profiler's call starts; one at the start of a call of
    the model's own Python; one that outlasts the call it starts with; one whose holding call
    is on another thread: none is touched, though a free built-in waits before each."""
    c = _load(tmp_path, [
        _x(ENTER, "python_function", 1, 2), _x(ENTER, "python_function", 2, 2, tid=2),
        _x(STEP_CALL, "python_function", 10, 10), _x("late_by_10ns", "user_annotation", 10.01, 5),
        _x("model.py(3): step", "python_function", 30, 10), _x("models_call", "user_annotation", 30, 5),
        _x(EXIT_CALL, "python_function", 50, 10), _x("outlasts", "user_annotation", 50, 20),
        _x(EXIT_CALL, "python_function", 90, 10, tid=2), _x("other_thread", "user_annotation", 90, 5),
    ])
    assert sorted((c.names.values[r[0]], r[1], r[2]) for r in c.regions) == [
        ("late_by_10ns", 10.01, 15.01), ("models_call", 30, 35), ("other_thread", 90, 95), ("outlasts", 50, 70)]
    assert c.restarted_ranges == []


def test_synthetic_each_thread_pairs_its_own_built_ins(tmp_path):
    """Synthetic: thread 1 opens at 10, thread 2 at 15; thread 2's range closes first (its
    __exit__ 40-50) and thread 1's after (60-70): each takes its own thread's built-in. A
    range written at its end with no free built-in left (thread 1's second) stays as written."""
    c = _load(tmp_path, [
        _x(ENTER, "python_function", 10, 2), _x(ENTER, "python_function", 15, 2, tid=2),
        _x(EXIT_CALL, "python_function", 40, 10, tid=2), _x("b", "user_annotation", 40, 5, tid=2),
        _x(EXIT_CALL, "python_function", 60, 10), _x("a", "user_annotation", 60, 5),
        _x(EXIT_CALL, "python_function", 80, 10), _x("unpaired", "user_annotation", 80, 5),
    ])
    assert sorted((c.names.values[r[0]], r[1], r[2]) for r in c.regions) == [
        ("a", 10, 65), ("b", 15, 45), ("unpaired", 80, 85)]
    assert c.restarted_ranges == ["a", "b"]


def test_each_rank_of_torch_25_restores_its_steps(tmp_path):
    """Two ranks, each the 2.5.1 loop: each rank's steps are the restored ones, and its line
    says how many ranges were restored."""
    src = LOOP / "stack-torch-2.5.1.json.gz"
    for rank in (0, 1):
        (tmp_path / f"rank{rank}.json.gz").write_bytes(src.read_bytes())
    r = analyze_ranks(sorted(tmp_path.glob("*.json.gz")), workers=1)
    want = [(e["name"], e["ts"] + e["dur"]) for e in sorted(_raw(src), key=lambda e: e["ts"])
            if e["name"].startswith("ProfilerStep#")]
    single = analyze_file(src)
    for rank in r.ranks:
        assert rank.restarted_ranges == single.restarted_ranges and len(rank.restarted_ranges) == len(want) == 3
        assert [(s.step, s.wall_ms) for s in rank.steps] == [(s.name, s.wall_ms) for s in single.steps]
    assert render_ranks(r, "text").count("; 3 ranges written with the start of the Python call that closed them") == 2


def test_steps_that_hold_nothing_say_so(tmp_path):
    """Synthetic: one step 0-10 µs and an op at 20 µs, outside it: the header says the steps
    hold nothing rather than listing no device."""
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"traceEvents": [_x("ProfilerStep#0", "user_annotation", 0, 10),
                                             _x("aten::mm", "cpu_op", 20, 5)]}))
    text = render_analyze(analyze_file(f), "text")
    assert "1 profiler step (ProfilerStep#)" in text
    assert "devices: none: no op, runtime call or device event is inside a step" in text


def test_the_cuda_loop_recorded_on_an_h200_reads_as_the_loops_steps():
    """The trace ``tests/test_gpu_analyze_stack.py`` recorded on an H200 (torch 2.11, written
    right): the same checks on CPU; nothing restored."""
    r, restarted = check_loop(FIXTURES / "cuda_h200_stack_loop" / "stack-loop.pt.trace.json.gz")
    assert restarted == [] and len(r.steps) == ACTIVE
