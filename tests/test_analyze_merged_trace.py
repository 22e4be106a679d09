"""A trace holding several processes' events (ranks' traces joined into one file) is refused in
one line naming each process with its ops, launches and steps, counted here from the raw JSON;
before, its steps read twice each (one copy empty) and one process's launches matched the
other's kernels by their correlation ids. The merged trace is synthetic: HTA's real A100 NCCL
trace (``tests/fixtures/hta``, rank 0 of a DDP run) joined with a copy of itself as a second
process (another pid, GPU 1, 0.3 ms later, the same correlation ids, as a second rank counts
its own). A single trace whose other pids run no op or launch still reads."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from .test_analyze import run_cli

FIXTURES = Path(__file__).resolve().parent / "fixtures"
NCCL = FIXTURES / "hta" / "nccl_parser_config_nccl_data.json.gz"
HOST_PID, SECOND_PID = 2910249, 2910250


def _merged(path: Path, rank: int = 0) -> dict:
    """The NCCL trace and its copy as a second process: host pid and device 0 moved."""
    doc = json.loads(gzip.decompress(NCCL.read_bytes()))
    doc["distributedInfo"]["rank"] = rank
    copies = []
    for ev in doc["traceEvents"]:
        if ev.get("pid") not in (HOST_PID, 0) or ev.get("ph") == "M":
            continue
        copy = json.loads(json.dumps(ev))
        copy["pid"] = SECOND_PID if ev["pid"] == HOST_PID else 1
        copy["ts"] = float(copy["ts"]) + 300.0
        copies.append(copy)
    doc["traceEvents"] += copies
    path.write_text(json.dumps(doc))
    return doc


def _counted(doc: dict, pid: int) -> str:
    """A process as the line names it, from the raw events."""
    evs = [e for e in doc["traceEvents"] if e.get("pid") == pid and e.get("ph") == "X"]
    ops = sum(e.get("cat") == "cpu_op" for e in evs)
    launches = sum(e.get("cat") in ("cuda_runtime", "cuda_driver") for e in evs)
    steps = sum(str(e.get("name")).startswith("ProfilerStep#") for e in evs)
    return f"pid {pid}: {ops:,} ops, {launches:,} launches, {steps} steps"


def test_merged_trace_is_refused_naming_its_processes(capsys, tmp_path):
    doc = _merged(tmp_path / "merged.json")
    code, out, err = run_cli(capsys, str(tmp_path / "merged.json"))
    assert code == 2 and not out and err.count("\n") == 1 and "Traceback" not in err
    assert _counted(doc, HOST_PID) == "pid 2910249: 14,346 ops, 8,740 launches, 3 steps"
    assert f"holds the events of 2 processes ({_counted(doc, HOST_PID)}; {_counted(doc, SECOND_PID)})" in err
    assert "a merged trace" in err and "inductor-bench analyze rank0.json rank1.json" in err


def test_merged_trace_among_ranks_is_refused(capsys, tmp_path):
    shutil.copy(FIXTURES / "ranks" / "rank-0.json.gz", tmp_path)
    _merged(tmp_path / "rank-1.json", rank=1)
    code, out, err = run_cli(capsys, str(tmp_path))
    assert code == 2 and not out and err.count("\n") == 1
    assert "rank-1.json: holds the events of 2 processes" in err


@pytest.mark.parametrize("trace", [FIXTURES / "hta" / "triton_example_triton_example.json.gz",
                                   FIXTURES / "cpu_loop" / "stack-torch-2.5.1.json.gz"])
def test_one_process_with_other_pids_reads(capsys, trace):
    """HTA's triton example writes one range under a second pid; torch 2.5.1's Python tracer
    writes thread 0 under pid 0: neither runs an op or a launch there."""
    doc = json.loads(gzip.decompress(trace.read_bytes()))
    host = {e["pid"] for e in doc["traceEvents"] if e.get("cat") in ("cpu_op", "cuda_runtime", "cuda_driver")}
    others = {e["pid"] for e in doc["traceEvents"] if e.get("ph") == "X" and isinstance(e.get("pid"), int)
              and e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset")} - host
    assert len(host) == 1 and others
    code, _, err = run_cli(capsys, str(trace))
    assert code == 0, err
