"""analyze's by-shape rows say how many device kernels a call ran, its time being all of theirs:
in HTA's A100 trace (tests/fixtures/hta, a real trace) each ``aten::mm`` launched a copy and its
GEMM, one of them a split-K GEMM and its reduction too, and an ``addmm`` a memset before its
GEMM. Counted here from the trace with json alone: the device events whose launch is on the op's
thread while it was open."""

from __future__ import annotations

import gzip
import json
import math

import pytest

from inductor_bench.core.analyze import analyze_file
from inductor_bench.core.typical_step import steady_shaped_ops
from inductor_bench.render.analyze import render_analyze

from .conftest import FIXTURES

A100 = FIXTURES / "hta" / "negative_queue_length_values_check_rank0.json.gz"
DEVICE = ("kernel", "gpu_memcpy", "gpu_memset")


def _by_shape() -> dict[tuple[str, str], list[tuple[int, float]]]:
    """(op, shapes as analyze writes them) -> each call's (device events launched, their µs)."""
    with gzip.open(A100) as f:
        evs = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    dev = {e["args"]["correlation"]: e for e in evs if e.get("cat") in DEVICE and "correlation" in e.get("args", {})}
    launches = [e for e in evs if e.get("cat") == "cuda_runtime" and e.get("args", {}).get("correlation") in dev]
    out: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for o in (e for e in evs if e.get("cat") == "cpu_op" and e["name"] in ("aten::mm", "aten::addmm")):
        dims = o["args"]["Input Dims"][1:3] if o["name"] == "aten::addmm" else o["args"]["Input Dims"]
        shapes = " @ ".join("x".join(map(str, d)) for d in dims)
        mine = [dev[la["args"]["correlation"]] for la in launches
                if la["tid"] == o["tid"] and o["ts"] <= la["ts"] <= o["ts"] + o["dur"]]
        out.setdefault((o["name"], shapes), []).append((len(mine), math.fsum(e["dur"] for e in mine)))
    return out


def test_each_row_says_how_many_kernels_a_call_ran():
    want = _by_shape()
    r = analyze_file(A100)
    typical = steady_shaped_ops(r)
    assert {(t.row.op, t.row.shapes) for t in typical} == set(want)
    got = {(t.row.op, t.row.shapes): t.kernels_a_call for t in typical}
    counts = {key: {n for n, _ in calls} for key, calls in want.items()}
    assert all(len(c) == 1 for c in counts.values())  # every call of a shape ran the same
    assert got == {key: float(c.pop()) for key, c in counts.items()}
    assert sorted(got.values()) == [1.0, 2.0, 2.0, 2.0, 3.0]
    shown = {(x["op"], x["shapes"]): x["kernels_a_call"] for x in r.to_dict()["shaped_ops"]}
    assert shown == got
    # the row's time is all of them: one call of each shape a step, in step order
    names = [s.name for s in r.steps]
    kept = [names.index(n) for n in r.to_dict()["steady_steps"]]
    for t in typical:
        calls = want[(t.row.op, t.row.shapes)]
        assert len(calls) == len(names) and t.calls == 1.0
        assert t.ms_per_call == pytest.approx(math.fsum(calls[i][1] for i in kept) / len(kept) / 1e3, rel=1e-12)


def test_the_table_has_the_column():
    text = render_analyze(analyze_file(A100))
    section = text[text.index("GEMMs by shape: record_shapes"):]
    assert "kernels a call" in section and "kernels a call: the device kernels a call launched" in section
    line = next(x for x in section.splitlines() if "64x4096 @ 4096x100" in x)
    assert line.split()[-2] == "3"  # an elementwise copy, the GEMM, its split-K reduction
