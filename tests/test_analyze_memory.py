"""`analyze` of a trace recorded with ``profile_memory=True``: per device and step, the memory
allocated at the step's start, its peak and its end, and a warning where it grew in every step.
Checked on a hand-built trace worked out by hand (synthetic), on two recorded CPU training loops
(``tests/fixtures/cpu_memory/record.py``) against an independent reading of the raw JSON, and on
the bytes a leak holds computed from its tensors' shapes."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from inductor_bench.core.analyze import analyze_file
from inductor_bench.core.analyze_ranks import analyze_ranks
from inductor_bench.core.memory import StepMemory, device_label
from inductor_bench.render.analyze import render_analyze
from inductor_bench.render.ranks import render_ranks

from .conftest import FIXTURES
from .test_analyze import run_cli
from .test_analyze_regions import _x

MIB = 1 << 20
MEMORY = FIXTURES / "cpu_memory"


def _mem(ts: float, nbytes: int, total: int, kind: int = 1, index: int = 0) -> dict:
    return {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 9, "tid": 1,
            "ts": ts, "args": {"Total Reserved": 0, "Total Allocated": total, "Bytes": nbytes,
                               "Device Id": index, "Device Type": kind, "Addr": 1}}


def synthetic_trace(tmp_path: Path, shrink: bool = False) -> Path:
    """Synthetic: two steps of one op each; cuda:0 holds 100 MiB before the first step, rises to
    160 MiB and ends it at 110; the second rises to 150 and ends at 120 (or at 100: ``shrink``).
    The CPU's one allocation is in step 2 only; an allocation after the steps counts in none."""
    events = [
        _mem(5, 100 * MIB, 100 * MIB),
        _x("user_annotation", "ProfilerStep#1", 10, 100), _x("cpu_op", "aten::mm", 20, 10),
        _mem(30, 60 * MIB, 160 * MIB), _mem(50, -50 * MIB, 110 * MIB),
        _x("user_annotation", "ProfilerStep#2", 200, 100), _x("cpu_op", "aten::mm", 220, 10),
        _mem(210, 40 * MIB, 150 * MIB), _mem(260, -30 * MIB if not shrink else -50 * MIB,
                                            (120 if not shrink else 100) * MIB),
        _mem(230, 4096, 4096, kind=0, index=-1),
        _mem(400, 1 * MIB, 121 * MIB),  # after every step
    ]
    path = tmp_path / "synthetic.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def test_memory_worked_out_by_hand(tmp_path, capsys):
    r = analyze_file(synthetic_trace(tmp_path))
    got = {d.device: d.steps for d in r.memory}
    assert got == {"cuda:0": [StepMemory(100 * MIB, 160 * MIB, 110 * MIB), StepMemory(110 * MIB, 150 * MIB, 120 * MIB)],
                   "cpu": [None, StepMemory(0, 4096, 4096)]}
    code, out, _ = run_cli(capsys, str(tmp_path / "synthetic.json"))
    assert code == 0
    # at start 100, peak 160 in step 1, own rise max(60, 40), at end 120, change (10 + 10) / 2
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.startswith(("cuda:0 ", "cpu "))}
    assert rows["cuda:0"] == ["cuda:0", "100.0", "160.0", "ProfilerStep#1", "60.0", "120.0", "+10.0"]
    assert rows["cpu"] == ["cpu", "0", "0.00391", "ProfilerStep#2", "0.00391", "0.00391", "+0.00391"]
    assert "WARNING: cuda:0: the memory allocated grew in every one of the 2 steps, +10.0 MiB a step" in out
    assert "WARNING: cpu" not in out  # one step only
    shrunk = analyze_file(synthetic_trace(tmp_path, shrink=True))
    assert "WARNING: cuda:0" not in render_analyze(shrunk, "text")  # step 2 gave back what step 1 held


def test_a_few_bytes_read_in_decimals_not_in_exponent_form(tmp_path, capsys):
    """A CPU loop that leaves 4 bytes allocated (a scalar loss) read 3.81e-06 MiB at its end and
    +9.54e-07 a step; to 3 decimals: 0.000 and +0.000 (4 bytes / 1 MiB, and 4 / 4 steps)."""
    events = [_mem(102, 131072, 131072, kind=0, index=-1)]  # in the first step, from nothing
    for k in range(4):
        t0 = 100 * (k + 1)
        events += [_x("user_annotation", f"ProfilerStep#{k}", t0, 50), _x("cpu_op", "aten::mm", t0 + 5, 10),
                   _mem(t0 + 10, 1182728 - 131072 * (k == 0), 1182728, kind=0, index=-1),
                   _mem(t0 + 20, 4 - 1182728, 4, kind=0, index=-1)]
    path = tmp_path / "bytes.json"
    path.write_text(json.dumps({"traceEvents": events}))
    code, out, _ = run_cli(capsys, str(path))
    assert code == 0
    row = next(line.split() for line in out.splitlines() if line.startswith("cpu "))
    # at start 0; peak 1182728 B = 1.128 MiB, first in step 0, and its own rise from 0; at end 4 B;
    # a step's change (4 + 0 + 0 + 0) / 4 = 1 B
    assert row == ["cpu", "0", "1.13", "ProfilerStep#0", "1.13", "0.000", "+0.000"]
    assert "e-0" not in out


def test_a_trace_without_memory_events_has_no_memory_section(tmp_path):
    path = tmp_path / "plain.json"
    path.write_text(json.dumps({"traceEvents": [_x("cpu_op", "aten::mm", 0, 10)]}))
    r = analyze_file(path)
    assert r.memory == [] and "Memory (profile_memory" not in render_analyze(r, "text")


def test_device_labels():
    assert [device_label(0, -1), device_label(1, 3), device_label(9, 1), device_label(None, 0)] == [
        "cpu", "cuda:3", "device type 9:1", "device ?"]


def expected(path: Path) -> list[tuple[float, float, float]]:
    """Per ProfilerStep: (start, peak, end) of the CPU's total, read from the raw events."""
    with gzip.open(path, "rt") as f:
        evs = json.load(f)["traceEvents"]
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in evs
                   if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#"))
    mem = sorted((e["ts"], e["args"]["Bytes"], e["args"]["Total Allocated"]) for e in evs
                 if e.get("ph") == "i" and e.get("name") == "[memory]")
    out = []
    for a, b in steps:
        before = [m for m in mem if m[0] < a]
        inside = [m for m in mem if a <= m[0] <= b]
        start = before[-1][2] if before else inside[0][2] - inside[0][1]
        out.append((start, max([start] + [m[2] for m in inside]), inside[-1][2] if inside else start))
    return out


@pytest.mark.parametrize("name", ["train-torch-2.13.0.json.gz", "held-torch-2.13.0.json.gz"])
def test_recorded_loops_against_the_raw_events(name):
    r = analyze_file(MEMORY / name)
    (cpu,) = r.memory
    assert cpu.device == "cpu"
    assert [(s.start, s.peak, s.end) for s in cpu.steps] == expected(MEMORY / name)
    text = render_analyze(r, "text")
    assert ("WARNING: cpu: the memory allocated grew in every one of the 4 steps" in text) == name.startswith("held")


def test_the_held_loop_keeps_what_its_validation_graph_saved():
    """Each step keeps a validation output (128 x 256 fp32) whose graph saved GELU's input and
    the second Linear's input (128 x 1024 fp32 each): exactly that much more a step."""
    held = analyze_file(MEMORY / "held-torch-2.13.0.json.gz").memory[0].steps
    train = analyze_file(MEMORY / "train-torch-2.13.0.json.gz").memory[0].steps
    kept = (128 * 256 + 2 * 128 * 1024) * 4
    assert [s.end - s.start for s in held] == [kept] * 4
    assert [s.end - s.start for s in train] == [0] * 4


def test_events_the_typed_decoder_refuses_are_still_read(tmp_path):
    """A [memory] event with a null category, or with a ts the decoder cannot type, is read
    alone, as json.loads reads it; one whose total is not a number is left out."""
    path = synthetic_trace(tmp_path)
    doc = json.loads(path.read_text())
    evs = doc["traceEvents"]
    evs[3]["cat"] = None  # the 60 MiB allocation of step 1
    evs.append(_mem(40, 0, "lots") | {"cat": None})  # not a number: left out
    path.write_text(json.dumps(doc))
    r = analyze_file(path)
    assert {d.device: d.steps for d in r.memory}["cuda:0"] == [
        StepMemory(100 * MIB, 160 * MIB, 110 * MIB), StepMemory(110 * MIB, 150 * MIB, 120 * MIB)]
    assert json.loads(r.to_json())["memory"][0]["steps"][0] == {"start": 100 * MIB, "peak": 160 * MIB,
                                                                 "end": 110 * MIB}


def test_a_run_with_an_absent_or_odd_field_is_read_event_by_event(tmp_path):
    """An event without Bytes reads 0 bytes; a Device Type that is a list, "device ?"; the
    other events of the same run are read as before."""
    path = synthetic_trace(tmp_path)
    doc = json.loads(path.read_text())
    evs = doc["traceEvents"]
    del evs[0]["args"]["Bytes"]  # the 100 MiB before step 1: its start is then its total
    evs.append(_mem(20, 8, 8) | {"args": {"Total Allocated": 8, "Bytes": 8, "Device Type": [1], "Device Id": 0}})
    path.write_text(json.dumps(doc))
    got = {d.device: d.steps for d in analyze_file(path).memory}
    assert got["cuda:0"][0] == StepMemory(100 * MIB, 160 * MIB, 110 * MIB)
    assert got["device ?"] == [StepMemory(0, 8, 8), StepMemory(8, 8, 8)]


def test_ranks_each_have_their_memory(tmp_path):
    """Two ranks of the synthetic trace, rank 1 allocating twice what rank 0 does: a row per rank
    and device, and each rank's own warning."""
    doc = json.loads(synthetic_trace(tmp_path).read_text())
    paths = []
    for rank in (0, 1):
        for e in doc["traceEvents"]:
            if e.get("name") == "[memory]" and rank == 1:
                e["args"]["Total Allocated"] *= 2
                e["args"]["Bytes"] *= 2
        paths.append(tmp_path / f"rank{rank}.json")
        paths[-1].write_text(json.dumps(doc | {"distributedInfo": {"rank": rank}}))
    result = analyze_ranks(paths, workers=1)
    assert [(r.rank, {d.device: d.steps[0] for d in r.memory}["cuda:0"]) for r in result.ranks] == [
        (0, StepMemory(100 * MIB, 160 * MIB, 110 * MIB)), (1, StepMemory(200 * MIB, 320 * MIB, 220 * MIB))]
    text = render_ranks(result)
    rows = [line.split() for line in text.splitlines() if line.startswith("rank ") and "cuda:0" in line]
    assert [row[:5] for row in rows] == [["rank", "0", "cuda:0", "100.0", "160.0"],
                                         ["rank", "1", "cuda:0", "200.0", "320.0"]]
    assert "WARNING: rank 1 cuda:0: the memory allocated grew in every one of the 2 steps, +20.0 MiB" in text
