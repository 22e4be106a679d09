"""A rank's device events launched outside every step (or before its profiler started) are
counted on its line of the per-rank report and in its JSON, as one trace's header counts them:
on HTA's A100 rank-0 trace they are the other steps' work of its first step."""

from __future__ import annotations

import gzip
import json
import re

from inductor_bench.cli import main
from inductor_bench.core.ranks import rank_summary

from .conftest import FIXTURES

HTA = FIXTURES / "hta"
RANK0 = HTA / "negative_queue_length_values_check_rank0.json.gz"
NO_RANK = HTA / "triton_example_triton_example.json.gz"  # its header names no rank
DEVICE = {"kernel", "gpu_memcpy", "gpu_memset"}


def outside_every_step(path) -> int:
    """From the raw JSON: device events whose launch is in no ProfilerStep#N range, or with no
    launch and a correlation below every launch's (queued before the profiler started)."""
    with gzip.open(path, "rt") as f:
        evs = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in evs
             if re.fullmatch(r"ProfilerStep#\d+", e["name"]) and e.get("cat") != "gpu_user_annotation"]
    launched = {e["args"]["correlation"]: e["ts"] for e in evs
                if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    first = min(launched)
    n = 0
    for e in evs:
        if e.get("cat") not in DEVICE:
            continue
        corr = e["args"]["correlation"]
        t = launched.get(corr)
        if t is None:
            n += corr < first or not any(a <= e["ts"] <= b for a, b in steps)
        else:
            n += not any(a <= t <= b for a, b in steps)
    return n


def test_a_ranks_work_outside_every_step_is_counted(capsys, tmp_path):
    expected = outside_every_step(RANK0)
    assert expected == 872  # all of them queued before the profiler started
    assert rank_summary(RANK0, 0).outside_steps == expected
    assert rank_summary(NO_RANK, 1).outside_steps == outside_every_step(NO_RANK) == 0
    out = tmp_path / "ranks.json"
    assert main(["analyze", str(RANK0), str(NO_RANK), "--json", str(out)]) in (None, 0)
    text = capsys.readouterr().out
    line = next(s for s in text.splitlines() if s.startswith("rank 0: "))
    assert "; 872 device event(s) launched outside every step (or before the profiler started)" in line
    assert "outside every step" not in next(s for s in text.splitlines() if s.startswith("rank 1: "))
    assert [r["outside_steps"] for r in json.loads(out.read_text())["ranks"]] == [872, 0]
