"""`analyze`: a top kernel's (a CPU-only trace's top op's) share, "% kernel", is of its own
device's (host thread's) kernel time, as the category table above it gives each device's: on a
trace of one process driving two GPUs, or of a CPU loop with two threads, it was of every
device's time together. Synthetic traces built here (times in µs); each expected share is
worked out from the events in the test."""

from __future__ import annotations

import json
import re

from .test_analyze import run_cli


def x(name, cat, ts, dur, pid, tid, **args):
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": pid, "tid": tid, "args": args}


# one step of 1000 µs: device 0 runs a (300 µs) and b (100 µs), device 1 runs c (600 µs)
KERNELS = [("a", 0, 100, 300), ("b", 0, 450, 100), ("c", 1, 100, 600)]


def _two_gpus(path):
    evs = [x("ProfilerStep#1", "user_annotation", 0, 1000, 1, 1)]
    for corr, (name, device, start, dur) in enumerate(KERNELS, 1):
        evs.append(x("cudaLaunchKernel", "cuda_runtime", start - 50, 5, 1, 1, correlation=corr))
        evs.append(x(name, "kernel", start, dur, device, 7, device=device, correlation=corr))
    path.write_text(json.dumps({"traceEvents": evs}))
    return path, evs


def _expected_shares(evs, cat, row_of):
    """Each event's duration over the summed durations of the events of its row (device or
    thread), in %, one decimal, from the raw events."""
    rows = {}
    for e in evs:
        if e["cat"] == cat:
            rows.setdefault(row_of(e), []).append(e)
    return {e["name"]: f"{100 * e['dur'] / sum(o['dur'] for o in rows[row_of(e)]):.1f}%"
            for es in rows.values() for e in es}


def _text_shares(out):
    """name -> the % kernel cell of the top table's row."""
    table = out[out.index("Top "):]
    return {m.group(1): m.group(2) for m in re.finditer(r"^\s+\d+\s+\S+(?: thread \d+)?\s+(\w+)\s.*?(\d+\.\d%)", table, re.M)}


def test_a_kernels_share_is_of_its_own_devices_kernel_time(tmp_path, capsys):
    f, evs = _two_gpus(tmp_path / "t.json")
    want = _expected_shares(evs, "kernel", lambda e: e["args"]["device"])
    assert want == {"a": "75.0%", "b": "25.0%", "c": "100.0%"}  # of all three together: 30, 10, 60
    code, out, err = run_cli(capsys, str(f))
    assert code == 0, err
    assert _text_shares(out) == want
    # the base: each device's total in its category table (0.400 and 0.600 ms)
    assert re.search(r"device 0 \(ProfilerStep#1\)[^=]*?total\s+0\.400\s", out)
    assert re.search(r"device 1 \(ProfilerStep#1\)[^=]*?total\s+0\.600\s", out)

    code, md, _ = run_cli(capsys, str(f), "--format", "markdown")
    rows = {r.split("|")[3].strip().strip("`"): r.split("|")[7].strip() for r in md.splitlines()
            if r.startswith("|") and re.match(r"\|\s+\d+ \|", r)}
    assert code == 0 and rows == want

    code, page, _ = run_cli(capsys, str(f), "--format", "html")
    assert code == 0 and "% of its device&#x27;s kernel time" in page.replace("'", "&#x27;")
    chart = page[page.index("Top 3 kernels"):]
    for share in want.values():  # each bar's note
        assert share in chart


def test_a_host_ops_share_is_of_its_own_threads_time(tmp_path, capsys):
    """CPU only: thread 1 runs aten::mm (30 µs) and aten::add (10 µs), thread 2 aten::relu
    (60 µs), one step."""
    evs = [x("ProfilerStep#1", "user_annotation", 0, 100, 1, 1), x("aten::mm", "cpu_op", 0, 30, 1, 1),
           x("aten::add", "cpu_op", 40, 10, 1, 1), x("aten::relu", "cpu_op", 10, 60, 1, 2)]
    f = tmp_path / "cpu.json"
    f.write_text(json.dumps({"traceEvents": evs}))
    want = _expected_shares(evs, "cpu_op", lambda e: e["tid"])
    assert want == {"aten::mm": "75.0%", "aten::add": "25.0%", "aten::relu": "100.0%"}
    code, out, err = run_cli(capsys, str(f))
    assert code == 0, err
    table = out[out.index("Top "):]
    got = {m.group(1): m.group(2) for m in re.finditer(r"(aten::\w+)\s.*?(\d+\.\d%)", table)}
    assert got == want
