"""`analyze DIR` of one process's profiler cycles (torch.profiler's schedule with
tensorboard_trace_handler: one file per cycle, and an empty one when the profiler exits between
cycles), and of ranks beside a trace with nothing profiled."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from inductor_bench.core.analyze_ranks import analyze_ranks
from inductor_bench.core.trace_sets import Origin, analyze_cycles, one_process, origin_of

from .conftest import HALF_NS
from .test_analyze import merged_length, raw_events, run_cli
from .test_analyze_ranks import RANK_FILES


def x(name, ts, dur, pid, cat="cpu_op"):
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": 1}


def handler_file(folder: Path, pid: int, began_ns: int, events: list[dict], host="box") -> Path:
    """A synthetic trace laid out as tensorboard_trace_handler writes one: header, then the
    process's metadata event first, in a file named <host>_<pid>.<ns>.pt.trace.json."""
    meta = {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}}
    trace = {"schemaVersion": 1, "deviceProperties": [], "host_name": host,
             "baseTimeNanoseconds": began_ns, "traceEvents": [meta, *events]}
    path = folder / f"{host}_{pid}.{began_ns}.pt.trace.json"
    path.write_text(json.dumps(trace))
    return path


# cycle A: two steps of ops; cycle B: one step, ops 30 µs; the exit's cycle: its step marker alone
CYCLE_A = [x("ProfilerStep#2", 0, 100, 7, "user_annotation"), x("aten::mm", 10, 40, 7),
           x("ProfilerStep#3", 100, 100, 7, "user_annotation"), x("aten::add", 120, 20, 7)]
CYCLE_B = [x("ProfilerStep#6", 0, 50, 7, "user_annotation"), x("aten::mm", 5, 30, 7)]
EXIT_CYCLE = [x("ProfilerStep#9", 0, 10, 7, "user_annotation")]


@pytest.fixture
def cycles_dir(tmp_path):
    # file names sort against the order the cycles began: the time in them orders them
    handler_file(tmp_path, 7, 3_000, CYCLE_B)
    handler_file(tmp_path, 7, 20_000, CYCLE_A)  # "box_7.20000..." sorts before "box_7.3000..."
    handler_file(tmp_path, 7, 9_000, EXIT_CYCLE)
    return tmp_path


def test_one_process_is_told_from_ranks_and_from_other_processes(tmp_path):
    a = handler_file(tmp_path, 7, 1, CYCLE_A)
    b = handler_file(tmp_path, 7, 2, CYCLE_B)
    other = handler_file(tmp_path, 8, 3, CYCLE_B)
    other_host = handler_file(tmp_path, 7, 4, CYCLE_B, host="node2")
    assert origin_of(a).pid == 7 and origin_of(a).host == "box" and origin_of(a).began_ns == 1
    assert one_process([a, b])
    assert not one_process([a]) and not one_process([a, other]) and not one_process([a, other_host])
    assert not one_process(RANK_FILES[:2])  # they name their ranks


def test_cycles_in_the_order_they_began_the_empty_one_skipped(cycles_dir):
    r = analyze_cycles(sorted(cycles_dir.iterdir()))
    assert [Path(c.trace).name for c in r.cycles] == ["box_7.3000.pt.trace.json", "box_7.20000.pt.trace.json"]
    assert [Path(s).name for s in r.skipped] == ["box_7.9000.pt.trace.json"]
    b, a = r.cycles
    assert [(s.name, s.wall_ms, s.devices[0].busy_ms) for s in b.steps] == [("ProfilerStep#6", 0.050, 0.030)]
    assert [(s.name, s.wall_ms, s.devices[0].busy_ms) for s in a.steps] == [
        ("ProfilerStep#2", 0.100, 0.040), ("ProfilerStep#3", 0.100, 0.020)]


def test_cli_on_a_cycles_directory(capsys, cycles_dir):
    code, out, err = run_cli(capsys, str(cycles_dir))
    assert code == 0, err
    assert out.startswith("inductor-bench analyze: 2 profiler cycles of one process\n")
    assert "cycle 1: box_7.3000.pt.trace.json, ProfilerStep#6" in out
    assert "cycle 2: box_7.20000.pt.trace.json, 2 steps, ProfilerStep#2 to ProfilerStep#3" in out
    assert "box_7.9000.pt.trace.json: skipped, nothing profiled in it" in out
    assert out.index("Profiler cycle 1 of 2: box_7.3000") < out.index("Profiler cycle 2 of 2: box_7.20000")
    assert "rank" not in out  # not read as ranks
    code, out, _ = run_cli(capsys, str(cycles_dir), "--format", "json")
    doc = json.loads(out)
    assert doc["schema"] == "inductor-bench/analyze-cycles"
    assert [len(c["steps"]) for c in doc["cycles"]] == [1, 2]
    assert [Path(s).name for s in doc["skipped"]] == ["box_7.9000.pt.trace.json"]


def test_a_copy_of_a_cycle_is_refused_not_read_as_another_cycle(capsys, cycles_dir):
    """A cycle's file copied under another name shares its process and its header's time:
    only its bytes tell it apart from another cycle of the process."""
    shutil.copy(cycles_dir / "box_7.20000.pt.trace.json", cycles_dir / "copy.json")
    code, out, err = run_cli(capsys, str(cycles_dir))
    assert (code, out) == (2, "") and len(err.strip().splitlines()) == 1
    assert "the same trace as" in err and "copy.json" in err and "box_7.20000.pt.trace.json" in err


def test_one_cycle_beside_the_exits_empty_one_reads_as_that_trace(capsys, tmp_path):
    handler_file(tmp_path, 7, 1, CYCLE_A)
    handler_file(tmp_path, 7, 2, EXIT_CYCLE)
    code, out, err = run_cli(capsys, str(tmp_path))
    assert code == 0, err
    assert out.startswith("inductor-bench analyze: box_7.1.pt.trace.json\n")
    assert "box_7.2.pt.trace.json: skipped, nothing profiled in it" in out
    assert "ProfilerStep#2" in out and "ProfilerStep#9" not in out


def test_nothing_profiled_anywhere_is_one_line_exit_2(capsys, tmp_path):
    handler_file(tmp_path, 7, 1, EXIT_CYCLE)
    handler_file(tmp_path, 7, 2, EXIT_CYCLE)
    code, out, err = run_cli(capsys, str(tmp_path))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "none of the 2 traces holds GPU activity or CPU ops" in err
    code, _, err = run_cli(capsys, str(tmp_path / "box_7.1.pt.trace.json"))
    assert code == 2 and "a profiler cycle that stopped before its active steps holds none" in err


def test_ranks_beside_a_trace_with_nothing_profiled(capsys, tmp_path):
    for f in RANK_FILES[:2]:
        shutil.copy(f, tmp_path / f.name)
    (tmp_path / "rank-2.json").write_text(json.dumps({"traceEvents": EXIT_CYCLE}))
    r = analyze_ranks(sorted(tmp_path.iterdir()), workers=1)
    assert [k.rank for k in r.ranks] == [0, 1] and [Path(s).name for s in r.skipped] == ["rank-2.json"]
    alone = analyze_ranks(RANK_FILES[:2], workers=1)
    assert [(k.device, k.steps) for k in r.ranks] == [(k.device, k.steps) for k in alone.ranks]
    assert r.stragglers == alone.stragglers
    code, out, err = run_cli(capsys, str(tmp_path))
    assert code == 0, err
    assert "inductor-bench analyze: 2 ranks" in out and "rank-2.json: skipped, nothing profiled" in out


@pytest.mark.filterwarnings("ignore:Warning. Profiler clears events")
def test_a_real_tensorboard_trace_handler_directory(capsys, tmp_path):
    """A real loop under torch.profiler's schedule (wait 1, warmup 1, active 2, repeat 2),
    stopped in its third cycle's warmup: the handler writes two cycles and the exit's empty
    one (torch 2.13.0 on CPU); each cycle's steps and busy time equal a reading of its file."""
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
    x = torch.randn(16, 64)
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
                 on_trace_ready=tensorboard_trace_handler(str(tmp_path))) as prof:
        for _ in range(10):
            model(x).sum().backward()
            prof.step()
    files = sorted(tmp_path.iterdir())
    with_ops = [f for f in files if any(e.get("cat") == "cpu_op" for e in raw_events(f))]
    assert len(with_ops) == 2 and one_process(files)
    code, out, err = run_cli(capsys, str(tmp_path), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert [c["trace"] for c in doc["cycles"]] == [str(f) for f in with_ops]  # handler's names sort by time
    assert sorted(doc["skipped"]) == sorted(str(f) for f in files if f not in with_ops)
    for cycle, f in zip(doc["cycles"], with_ops, strict=True):
        events = raw_events(f)
        steps = sorted((e for e in events if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
        assert [s["name"] for s in cycle["steps"]] == [s["name"] for s in steps]
        ops = [e for e in events if e.get("cat") == "cpu_op"]
        for got, step in zip(cycle["steps"], steps, strict=True):
            expected: dict[str, list[tuple[float, float]]] = {}
            for e in ops:
                if step["ts"] <= e["ts"] < step["ts"] + step["dur"]:
                    expected.setdefault(f"CPU thread {e['tid']}", []).append((e["ts"], e["ts"] + e["dur"]))
            busy = {d["device"]: d["busy_ms"] for d in got["devices"]}
            assert busy.keys() == expected.keys()
            for thread, intervals in expected.items():  # each thread's ops' union (children inside parents)
                assert busy[thread] == pytest.approx(merged_length(intervals) / 1000, abs=HALF_NS)  # JSON: to the ns


def test_a_directory_of_one_trace_reads_as_that_trace(capsys, tmp_path):
    handler_file(tmp_path, 7, 1, CYCLE_A)
    code, out, err = run_cli(capsys, str(tmp_path))
    assert code == 0, err
    assert out.startswith("inductor-bench analyze: box_7.1.pt.trace.json\n") and "rank" not in out
    code, out, _ = run_cli(capsys, str(tmp_path), "--format", "json")
    assert json.loads(out)["schema"] == "inductor-bench/analyze"


def test_without_a_header_the_handlers_file_name_says_the_process_and_time(tmp_path):
    bare = tmp_path / "node1_42.1764700000123456789.pt.trace.json.gz"
    bare.write_bytes(b"")  # unreadable as gzip: nothing from the header
    assert origin_of(bare) == Origin(host="node1", pid=42, began_ns=1764700000123456789)
    # a date and a pid in a name are not the handler's host_pid.time
    other = tmp_path / "trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json"
    other.write_text("{}")
    assert origin_of(other) == Origin(host=None, pid=None, began_ns=None)


def test_a_cycle_whose_device_times_were_lost_is_skipped_and_named(capsys, tmp_path):
    """Synthetic: three cycles of one process, the second's kernels all at ts 0 with dur 0 (the
    profiler lost their times, as a real H200 recording did: tests/fixtures/cuda_h200_mlp_zeroed).
    The other two are reported; that one is named with why, in the text and the JSON. Alone,
    it is refused with one line and exit 2."""
    lost = [x("ProfilerStep#4", 0, 50, 7, "user_annotation"), x("aten::mm", 5, 30, 7),
            {"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": 0, "pid": 0, "tid": 7}]
    handler_file(tmp_path, 7, 3_000, CYCLE_A)
    gone = handler_file(tmp_path, 7, 9_000, lost)
    handler_file(tmp_path, 7, 20_000, CYCLE_B)
    code, out, err = run_cli(capsys, str(tmp_path), "--format", "json")
    doc = json.loads(out)
    assert code == 0, err
    assert len(doc["cycles"]) == 2 and doc["times_lost"] == [str(gone)]
    code, out, _ = run_cli(capsys, str(tmp_path))
    assert (f"{gone.name}: skipped, its device events all carry no times (ts 0, dur 0): the profiler lost "
            "them, as when a session is exported after another has started") in out.splitlines()
    code, _, err = run_cli(capsys, str(gone))
    assert code == 2 and "carries no time (ts 0, dur 0)" in err and err.count("\n") == 1
