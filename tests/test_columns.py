"""The compact columns `analyze` reads a trace into (core/columns.py) and the launch links
made over them (core/launches.py): exact contents on hand-built events, links equal to
`timeline.launch_stacks` (the Event-based reading) on every real trace, odd correlation
values matched as a dict of them would match, and the memory taken per event."""

from __future__ import annotations

import json
import tracemalloc
from array import array
from pathlib import Path

import pytest

from inductor_bench.core.analyze import analyze_file, analyze_trace
from inductor_bench.core.columns import MISSING, columns_of_events, load_columns
from inductor_bench.core.launches import link_launches
from inductor_bench.core.timeline import launch_stacks
from inductor_bench.core.trace import (
    ANALYSIS_ARGS,
    COLUMN_CATEGORIES,
    DEVICE_CATEGORIES,
    load_for_analysis,
    load_trace,
)

from .conftest import FIXTURES

REAL = sorted((FIXTURES / "hta").glob("*.json.gz")) + sorted((FIXTURES / "ranks").glob("*.json.gz"))
ALL_TRACES = sorted(p for p in FIXTURES.rglob("*.json*") if p.suffix in (".json", ".gz"))


def x(name, cat, ts, dur, pid=1, tid=1, **args):
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": pid, "tid": tid, "args": args}


def write(tmp_path: Path, events: list[dict]) -> Path:
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"traceEvents": events}))
    return f


def hand_built() -> list[dict]:
    """Step 0..100 on thread (1, 1); an op on (1, 2) launching a memcpy; device "0" written
    both as 0 and "0"; a Python event (dropped), a flow (dropped)."""
    return [
        x("ProfilerStep#4", "user_annotation", 0, 100),
        x("python_fn", "python_function", 1, 90),
        x("aten::mm", "cpu_op", 5, 20, **{"External id": 11}),
        x("cudaLaunchKernel", "cuda_runtime", 10, 2, correlation=21, **{"External id": 11}),
        x("gemm", "kernel", 30, 8, pid=0, tid=7, correlation=21, **{"External id": 11}),
        x("aten::copy_", "cpu_op", 40, 10, tid=2, **{"External id": 12}),
        x("cudaMemcpyAsync", "cuda_runtime", 42, 3, tid=2, correlation=22),
        x("Memcpy HtoD", "gpu_memcpy", 50, 4, pid="0", tid=8, correlation=22),
        {"ph": "s", "id": 21, "pid": 1, "tid": 1, "ts": 10, "cat": "ac2g", "name": "ac2g"},
    ]


def test_columns_of_hand_built_events(tmp_path):
    c = load_columns(write(tmp_path, hand_built()))
    name = c.names.values
    assert [name[i] for i in c.device.name] == ["gemm", "Memcpy HtoD"]
    assert (c.device.ts, c.device.dur) == (array("d", [30, 50]), array("d", [8, 4]))
    assert [c.devices.values[i] for i in c.device.where] == ["0", "0"]  # 0 and "0": one device
    assert c.device.corr.ids == array("q", [21, 22])
    assert c.device.ext.ids == array("q", [11, MISSING])
    assert [name[i] for i in c.op.name] == ["aten::mm", "aten::copy_"]
    assert [c.threads.values[t] for t in c.op.where] == [(1, 1), (1, 2)]
    assert c.op.ext.ids == array("q", [11, 12])
    assert (c.launch.ts, c.launch.dur) == (array("d", [10, 42]), array("d", [2, 3]))
    assert c.launch.corr.ids == array("q", [21, 22])
    assert [(*m[:3], c.threads.values[m[3]]) for m in c.markers] == [("ProfilerStep#4", 0.0, 100.0, (1, 1))]
    assert c.span() == (0.0, 100.0)  # the Python event is not in the span
    assert [name[i] for i in c.python.name] == ["python_fn"]  # a Python call (with_stack)
    assert (c.python.ts, c.python.dur) == (array("d", [1]), array("d", [90]))
    assert [c.threads.values[t] for t in c.python.where] == [(1, 1)]
    assert c.kept == 8
    links = link_launches(c)
    assert links.issued == array("d", [10, 42])
    assert [links.stacks.values[s] for s in links.stack] == [("aten::mm",), ("aten::copy_",)]


def test_odd_correlations_match_as_dict_keys(tmp_path):
    """5.0 finds 5, "9" finds "9" (not 9), a kernel without a correlation finds the launch
    whose correlation is null, and a kernel no launch knows falls back to its External id."""
    events = [
        x("aten::a", "cpu_op", 0, 10, **{"External id": 1}),
        x("launch", "cuda_runtime", 1, 1, correlation=5),
        x("aten::b", "cpu_op", 20, 10),
        x("launch", "cuda_runtime", 21, 1, correlation="9"),
        x("launch", "cuda_runtime", 23, 1, correlation=9.5),
        x("aten::c", "cpu_op", 40, 10),
        x("launch", "cuda_runtime", 41, 1, correlation=None),
        x("k1", "kernel", 60, 1, pid=0, correlation=5.0),
        x("k2", "kernel", 62, 1, pid=0, correlation="9"),
        x("k3", "kernel", 64, 1, pid=0),
        x("k4", "kernel", 66, 1, pid=0, correlation=-(1 << 63), **{"External id": 1}),
        x("k5", "kernel", 68, 1, pid=0, correlation=9.5),
    ]
    c = load_columns(write(tmp_path, events))
    # not int64s, or the value that stands for absent: kept aside; 5.0 is the id 5
    assert c.device.corr.odd == {1: "9", 3: -(1 << 63), 4: 9.5} and c.device.corr.ids[0] == 5
    links = link_launches(c)
    assert links.issued == array("d", [1, 21, 41, 66, 23])
    stacks = [links.stacks.values[s] for s in links.stack]
    assert stacks == [("aten::a",), ("aten::b",), ("aten::c",), ("aten::a",), ("aten::b",)]


def test_a_correlation_launched_twice_takes_the_last_launch(tmp_path):
    """The launch time is the last launch in the file; the stack the last one met thread by
    thread (threads in the order they first appear), as dicts filled that way would."""
    events = [
        x("aten::late", "cpu_op", 100, 10, tid=1),
        x("launch", "cuda_runtime", 101, 1, tid=1, correlation=3),
        x("aten::early", "cpu_op", 0, 10, tid=2),
        x("launch", "cuda_runtime", 1, 1, tid=2, correlation=3),
        x("k", "kernel", 200, 5, pid=0, correlation=3),
    ]
    links = link_launches(load_columns(write(tmp_path, events)))
    assert links.issued == array("d", [1])
    assert links.stacks.values[links.stack[0]] == ("aten::early",)


def test_runtime_calls_no_device_event_names_change_nothing(tmp_path):
    """Launches whose correlation no device event has (``cudaGetDevice`` and the like, here
    one correlation written twice) are passed over; a device event still finds its own
    launch, the last of two where its correlation was launched twice."""
    events = [
        x("aten::a", "cpu_op", 0, 10),
        x("cudaGetDevice", "cuda_runtime", 1, 1, correlation=7),
        x("launch", "cuda_runtime", 2, 1, correlation=8),
        x("aten::b", "cpu_op", 20, 10),
        x("cudaGetDevice", "cuda_runtime", 21, 1, correlation=7),
        x("aten::c", "cpu_op", 40, 10, tid=2),
        x("launch", "cuda_runtime", 41, 1, tid=2, correlation=9),
        x("launch", "cuda_runtime", 22, 1, correlation=9),
        x("k8", "kernel", 60, 1, pid=0, correlation=8),
        x("k9", "kernel", 62, 1, pid=0, correlation=9),
    ]
    # correlation 9 launched twice: the time of the last launch in the file, the stack of
    # the last met thread by thread (as test_a_correlation_launched_twice_takes_the_last_launch)
    links = link_launches(load_columns(write(tmp_path, events)))
    assert links.issued == array("d", [2, 22])
    assert [links.stacks.values[s] for s in links.stack] == [("aten::a",), ("aten::c",)]
    del events[5:7]  # correlation 9 launched once: 7 alone is written twice
    links = link_launches(load_columns(write(tmp_path, events)))
    assert links.issued == array("d", [2, 22])
    assert [links.stacks.values[s] for s in links.stack] == [("aten::a",), ("aten::b",)]


def test_ops_starting_together_nest_the_longer_outside(tmp_path):
    """Two ops starting at one time: the longer encloses the shorter whatever the file order;
    ops with equal starts and lengths keep the file's order (the later one innermost)."""
    events = [
        x("aten::inner", "cpu_op", 5, 4),
        x("aten::outer", "cpu_op", 5, 20),
        x("launch", "cuda_runtime", 6, 1, correlation=1),
        x("aten::first", "cpu_op", 30, 10),
        x("aten::second", "cpu_op", 30, 10),
        x("launch", "cuda_runtime", 31, 1, correlation=2),
        x("launch", "cuda_runtime", 12, 1, correlation=3),
        x("k1", "kernel", 50, 1, pid=0, correlation=1),
        x("k2", "kernel", 52, 1, pid=0, correlation=2),
        x("k3", "kernel", 54, 1, pid=0, correlation=3),
    ]
    links = link_launches(load_columns(write(tmp_path, events)))
    assert [links.stacks.values[s] for s in links.stack] == [
        ("aten::inner", "aten::outer"), ("aten::second", "aten::first"), ("aten::outer",)]


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_links_equal_the_event_reading(path):
    """Every device event's stack equals ``timeline.launch_stacks`` of the loaded trace, and
    its launch time the dict of launch times the analysis used to build."""
    trace = load_for_analysis(path)
    c = columns_of_events(trace.events)
    links = link_launches(c)
    device = [(i, ev) for i, ev in enumerate(trace.events) if ev.cat in DEVICE_CATEGORIES]
    expected_stacks = launch_stacks(trace)
    launched = {ev.args["correlation"]: ev.ts for ev in trace.events
                if ev.cat in ("cuda_runtime", "cuda_driver") and "correlation" in ev.args}
    first = min((k for k in launched if isinstance(k, int) and k > 0), default=None)
    assert len(device) == len(c.device) > 0
    for k, (i, ev) in enumerate(device):
        assert links.stacks.values[links.stack[k]] == expected_stacks.get(i, ())
        corr = ev.args.get("correlation")
        before = corr not in launched and first is not None and isinstance(corr, int) and 0 < corr < first
        # launched before the profiler started: before every step
        assert links.issued[k] == (float("-inf") if before else launched.get(corr, ev.ts))


@pytest.mark.parametrize("path", ALL_TRACES, ids=lambda p: p.name)
def test_reading_into_columns_equals_reading_events(path):
    """The trace read straight into columns and the same trace's Events (those the columns
    read: with_stack's Python calls too) give one result, but for profile_memory's instant
    events: a ``Trace`` holds complete events only."""
    try:
        expected = analyze_trace(load_trace(path, categories=COLUMN_CATEGORIES, args=ANALYSIS_ARGS)).to_dict()
    except Exception as e:  # noqa: BLE001 - the same error either way
        with pytest.raises(type(e), match=None):
            analyze_file(path)
        return
    got = analyze_file(path).to_dict()
    assert expected.pop("memory") == []
    got.pop("memory")
    assert got == expected


def launch_groups(n: int) -> list[dict]:
    out = [x("ProfilerStep#1", "user_annotation", 0, 20.0 * n)]
    for i in range(n):
        t = 20.0 * i
        out += [
            x("python_fn", "python_function", t, 9),
            x(f"aten::op{i % 7}", "cpu_op", t + 1, 6, **{"External id": i, "Ev Idx": i}),
            x("cuLaunchKernelEx", "cuda_driver", t + 2, 3, correlation=10_000 + i, **{"External id": i}),
            x(f"triton_poi_{i % 50}", "kernel", t + 8, 5, pid=0, tid=7, correlation=10_000 + i,
              **{"External id": i, "grid": [1, 1, 1], "stream": 7}),
        ]
    return out


def test_columns_take_under_48_bytes_per_event(tmp_path):
    """What stays in memory after reading is the columns: under 48 bytes per event kept
    (four kinds of 24-40 bytes each, names interned), where the Event objects take over
    four times as much."""
    path = write(tmp_path, launch_groups(20_000))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        c = load_columns(path)
        columns = tracemalloc.get_traced_memory()[0] - before
        trace = load_trace(path, categories=COLUMN_CATEGORIES, args=ANALYSIS_ARGS)
        events = tracemalloc.get_traced_memory()[0] - before - columns
    finally:
        tracemalloc.stop()
    assert c.kept == len(trace.events) == 80_001
    assert columns < 48 * c.kept
    assert events > 4 * columns
