"""A real trace rewritten the ways some writers write it reads as the original: ids written as
integer-valued floats are the same ids; device events that lost their ``dur`` are left out
of every time figure and counted."""

from __future__ import annotations

import gzip
import json
from array import array
from pathlib import Path

from inductor_bench.core.analyze import analyze_file
from inductor_bench.core.column_types import MISSING, Column

from .test_analyze import run_cli

HTA = Path(__file__).resolve().parent / "fixtures" / "hta"
# a real rank's trace whose steps hold device events launched before the first step
QUEUE = HTA / "negative_queue_length_values_check_rank0.json.gz"


def _figures(path: Path) -> dict:
    out = analyze_file(path).to_dict()
    out.pop("trace")
    return out


def _rewritten(src: Path, dst: Path, change) -> int:
    """``src`` with ``change`` applied to each event, written to ``dst``; the events it changed."""
    doc = json.loads(gzip.decompress(src.read_bytes()))
    changed = sum(bool(change(ev)) for ev in doc["traceEvents"])
    dst.write_text(json.dumps(doc))
    return changed


def _float_ids(ev: dict) -> bool:
    args, changed = ev.get("args"), False
    for key in ("correlation", "External id"):
        if isinstance(args, dict) and type(args.get(key)) is int:
            args[key], changed = float(args[key]), True
    return changed


def test_ids_written_as_integer_valued_floats_are_the_same_ids(tmp_path):
    floats = tmp_path / "floats.json"
    assert _rewritten(QUEUE, floats, _float_ids) > 10_000
    original = _figures(QUEUE)
    assert original["outside_steps"] == 872  # the launches before the first step, as read
    assert _figures(floats) == original


def test_a_float_id_with_a_fraction_matches_only_itself():
    col = Column()
    col.extend([5.0, 5.5, 7, MISSING])
    assert col.ids == array("q", [5, MISSING, 7, MISSING]) and col.odd == {1: 5.5}
    assert col.index() == {5: 0, 5.5: 1, 7: 2}


NCCL = HTA / "nccl_parser_config_nccl_data.json.gz"  # a real rank's trace with NCCL kernels


def _nccl_kernel(ev: dict) -> bool:
    return ev.get("ph") == "X" and ev.get("cat") == "kernel" and "nccl" in ev.get("name", "").lower()


def test_device_events_with_no_dur_are_left_out_of_every_figure_and_counted(tmp_path):
    def drop_dur(ev: dict) -> bool:
        return _nccl_kernel(ev) and ev.pop("dur", None) is not None

    def delete(ev: dict) -> bool:  # the event made into one the reader skips
        if _nccl_kernel(ev):
            ev["ph"] = "M"
            return True
        return False

    no_dur, without = tmp_path / "no_dur.json", tmp_path / "without.json"
    n = _rewritten(NCCL, no_dur, drop_dur)
    assert n == _rewritten(NCCL, without, delete) == 21
    expected = _figures(without)
    got = _figures(no_dur)
    assert sum(got.pop("no_dur").values()) == n and expected.pop("no_dur") == {}
    assert got == expected
    # the busy time of the steps is that of the other events (the NCCL kernels' own time unknown)
    assert [d["busy_ms"] for s in got["steps"] for d in s["devices"]] != \
        [d["busy_ms"] for s in _figures(NCCL)["steps"] for d in s["devices"]]


def test_the_report_says_how_many_device_events_have_no_dur(tmp_path, capsys):
    from inductor_bench.cli import main

    no_dur = tmp_path / "no_dur.json"
    _rewritten(NCCL, no_dur, lambda ev: _nccl_kernel(ev) and ev.pop("dur"))
    main(["analyze", str(no_dur)])  # returns: exit status 0
    line = [x for x in capsys.readouterr().out.splitlines() if "with no dur" in x]
    assert len(line) == 1 and line[0].startswith("21 device events (kernel, memcpy, memset) with no dur are left")


def test_a_rank_line_says_how_many_device_events_have_no_dur(tmp_path, capsys):
    from inductor_bench.cli import main

    for rank in (0, 1):
        def mutate(ev: dict, rank=rank) -> bool:  # a rank of two, its NCCL kernels' dur removed
            return _nccl_kernel(ev) and ev.pop("dur") is not None
        path = tmp_path / f"rank{rank}.json"
        _rewritten(NCCL, path, mutate)
        doc = json.loads(path.read_text())
        doc["distributedInfo"] = {"rank": rank, "world_size": 2}
        path.write_text(json.dumps(doc))
    main(["analyze", str(tmp_path)])
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("rank ") and "json" in x]
    assert len(lines) == 2
    assert all("; 21 device event(s) with no dur left out of every time figure" in x for x in lines)


SYNC = Path(__file__).resolve().parent / "fixtures" / "hta_small" / "event_sync_trace.json.gz"  # 4 kernels, 1 memcpy
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def _drop_device_dur(ev: dict) -> bool:
    return ev.get("ph") == "X" and ev.get("cat") in DEVICE_CATS and ev.pop("dur", None) is not None


def test_a_trace_whose_device_events_all_write_no_dur_is_refused_in_one_line(tmp_path, capsys):
    """Not read as a trace of the CPU alone whose device side went unrecorded (it was recorded,
    without times): one line, exit 2. With one device event's dur left, the trace analyses."""
    all_gone, one_kept = tmp_path / "all_gone.json", tmp_path / "one_kept.json"
    assert _rewritten(SYNC, all_gone, _drop_device_dur) == 5
    code, out, err = run_cli(capsys, str(all_gone))
    assert code == 2 and out == "" and err == (f"inductor-bench: error: {all_gone}: its 5 device events (kernel, memcpy, "
                                 "memset) all write no dur: their times are not known\n")
    kept = []

    def all_but_one(ev: dict) -> bool:
        if ev.get("ph") == "X" and ev.get("cat") == "gpu_memcpy" and not kept:
            kept.append(ev["dur"])
            return False
        return _drop_device_dur(ev)

    assert _rewritten(SYNC, one_kept, all_but_one) == 4
    code, out, err = run_cli(capsys, str(one_kept), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert sum(doc["no_dur"].values()) == 4
    assert [(d["events"], d["kernel_ms"]) for s in doc["steps"] for d in s["devices"]] == [(1, kept[0] / 1e3)]


def test_a_cycle_whose_device_events_all_write_no_dur_is_skipped_with_that_reason(tmp_path, capsys):
    """Three cycles of one process (the handler's file names), the second's device events with
    no dur: the others are reported, that one named with its own reason, not the profiler's
    loss of times (ts 0, dur 0)."""
    names = [tmp_path / f"box_7.{ns}.pt.trace.json" for ns in (3_000, 9_000, 20_000)]
    for p in names:
        _rewritten(SYNC, p, _drop_device_dur if p == names[1] else lambda ev: False)
        doc = json.loads(p.read_text())
        del doc["distributedInfo"]  # a rank named by each would read as one rank given thrice
        doc["traceName"] = p.name  # its own bytes: a copy would read as one trace given twice
        p.write_text(json.dumps(doc))
    code, out, err = run_cli(capsys, str(tmp_path))
    assert code == 0, err
    lines = out.splitlines()
    assert f"{names[1].name}: skipped, its 5 device events (kernel, memcpy, memset) all write no dur: their " \
        "times are not known" in lines
    code, out, _ = run_cli(capsys, str(tmp_path), "--format", "json")
    doc = json.loads(out)
    assert len(doc["cycles"]) == 2 and doc["times_lost"] == [str(names[1])]
    assert doc["times_lost_why"] == {str(names[1]): "its 5 device events (kernel, memcpy, memset) all write "
                                     "no dur: their times are not known"}


def test_ranks_one_of_which_writes_no_dur_on_any_device_event_leave_it_out_with_its_reason(tmp_path, capsys):
    """Among ranks, as a trace whose device times were lost (tests/test_ranks_times_lost.py): the
    other rank is analysed, the one left out named with why, not read as CPU-only."""
    paths = [tmp_path / f"rank{rank}.json" for rank in (0, 1)]
    for rank, p in enumerate(paths):
        _rewritten(SYNC, p, _drop_device_dur if rank else lambda ev: False)
        doc = json.loads(p.read_text())
        doc["distributedInfo"] = {"rank": rank, "world_size": 2}
        p.write_text(json.dumps(doc))
    code, out, err = run_cli(capsys, *map(str, paths))
    text = " ".join(out.split())
    assert code == 0 and err == "" and text.startswith("inductor-bench analyze: 1 rank, rank 1 left out ")
    assert (f"WARNING: rank 1 left out ({paths[1]}): its 5 device events (kernel, memcpy, memset) all write no "
            "dur: their times are not known; every figure below, the straggler and median rank of each step "
            "among them, is of rank 0 alone") in text
