"""`analyze` of a CPU trace of TorchScript: a scripted function's record (``both``) and a forked
task's (``<forked function>``) wrap the ATen ops they run. They gave each step's whole time to
"other ATen" (100% on every thread) while the GEMMs by shape of the same trace counted 5 GEMMs
a step in them; now they keep only their time outside their ops, as framework."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path

import pytest

from tests.test_analyze import run_cli

# recorded on CPU, torch 2.13.0, 2026-12-07, by tests/fixtures/cpu_torchscript/record.py
TRACE = Path(__file__).parent / "fixtures" / "cpu_torchscript" / "torchscript-fork-torch-2.13.0.json.gz"
WRAPPERS = {"both", "<forked function>"}
CATEGORY = {"aten::matmul": "extern_gemm", "aten::relu": "extern_other", "aten::add": "extern_other"}


def _expected() -> dict[tuple[str, int], dict[str, float]]:
    """(step, thread) -> category -> µs, from the raw JSON: the top-level ops on each thread
    that start in the step; a wrapper's own time is its duration less its direct children's."""
    events = [e for e in json.loads(gzip.decompress(TRACE.read_bytes()))["traceEvents"] if e.get("ph") == "X"]
    steps = [e for e in events if e["name"].startswith("ProfilerStep#")]
    ops = sorted((e for e in events if e.get("cat") == "cpu_op"), key=lambda e: (e["tid"], e["ts"], -e["dur"]))
    out: dict[tuple[str, int], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    open_ops: list[dict] = []
    for op in ops:
        while open_ops and (open_ops[-1]["tid"] != op["tid"] or op["ts"] >= open_ops[-1]["ts"] + open_ops[-1]["dur"]):
            open_ops.pop()
        parent = open_ops[-1] if open_ops else None
        open_ops.append(op)
        top = parent if parent is not None and parent["name"] in WRAPPERS else None
        if parent is not None and top is None:
            continue  # inside an ATen op: its time is that op's
        anchor = top or op
        step = next((s["name"] for s in steps if s["ts"] <= anchor["ts"] <= s["ts"] + s["dur"]), None)
        if step is None:
            continue
        cell = out[(step, op["tid"])]
        if op["name"] in WRAPPERS:
            cell["host_framework"] += op["dur"]
        else:
            cell[CATEGORY[op["name"]]] += op["dur"]
        if top is not None:
            cell["host_framework"] -= op["dur"]
    return out


def test_torchscript_records_give_their_time_to_the_ops_inside(capsys):
    code, out, err = run_cli(capsys, str(TRACE), "--format", "json")
    assert code == 0, err
    expected = _expected()
    got = {(s["name"], int(d["device"].rsplit(" ", 1)[1])): d["categories"]
           for s in json.loads(out)["steps"] for d in s["devices"] if d["categories"]}
    assert set(got) == set(expected)
    for key, cats in expected.items():
        assert got[key] == pytest.approx({c: us / 1e3 for c, us in cats.items()}, abs=2e-6), key
        assert got[key]["extern_gemm"] > got[key]["host_framework"]
