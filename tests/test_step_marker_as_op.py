"""`analyze`: a ``ProfilerStep#N`` written as a ``cpu_op`` (the column reader takes step markers
of either category) is the step, not an op that launched the step's kernels. Before, a kernel
launched in no op read "launched by ProfilerStep#1" (HTA's A100 rank-0 trace with its markers
as cpu_op: FusedAdam's kernel "ProfilerStep#552, ProfilerStep#554 (+3 more)" where the trace
as written reads "no op, in Optimizer.step#FusedAdam.step"), while the Event reader and the
same trace with user_annotation markers read none. Synthetic trace built here (µs)."""

from __future__ import annotations

import json

import pytest

from inductor_bench.core.analyze import analyze_trace
from inductor_bench.core.trace import load_for_analysis

from .test_analyze import run_cli

RANGE = "Optimizer.step#FusedAdam.step"


def x(name, cat, ts, dur, **args):
    dev = cat == "kernel"
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": 0 if dev else 1,
            "tid": 7 if dev else 1, "args": args}


def _events(step_cat):
    """One step 0..100; k1 launched at 20 inside the range (no op), k2 at 60 in nothing but the
    step, k3 at 75 inside aten::relu."""
    evs = [x("ProfilerStep#1", step_cat, 0, 100), x(RANGE, "user_annotation", 10, 30),
           x("aten::relu", "cpu_op", 70, 10)]
    for corr, (name, at) in enumerate([("k1", 20), ("k2", 60), ("k3", 75)], 1):
        evs += [x("cudaLaunchKernel", "cuda_runtime", at, 2, correlation=corr),
                x(name, "kernel", at + 5, 3, correlation=corr)]
    return evs


def _expected(evs):
    """Each kernel's launcher from the raw events: the innermost cpu_op around its launch that
    is no step marker; else 'no op, in' the innermost user_annotation range that is none; else
    None."""
    launches = {e["args"]["correlation"]: e["ts"] for e in evs if e["cat"] == "cuda_runtime"}
    out = {}
    for k in (e for e in evs if e["cat"] == "kernel"):
        t = launches[k["args"]["correlation"]]

        def around(cat, t=t):
            inside = [e for e in evs if e["cat"] == cat and e["ts"] <= t < e["ts"] + e["dur"]
                      and not e["name"].startswith("ProfilerStep#")]
            return max(inside, key=lambda e: e["ts"])["name"] if inside else None

        op, rng = around("cpu_op"), around("user_annotation")
        out[k["name"]] = op or (f"no op, in {rng}" if rng else None)
    return out


@pytest.mark.parametrize("step_cat", ["cpu_op", "user_annotation"])
def test_a_step_marker_is_no_launching_op(tmp_path, capsys, step_cat):
    evs = _events(step_cat)
    want = _expected(evs)
    assert want == {"k1": f"no op, in {RANGE}", "k2": None, "k3": "aten::relu"}
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"traceEvents": evs}))
    code, out, err = run_cli(capsys, str(f), "--format", "json")
    assert code == 0, err
    r = json.loads(out)
    assert [s["name"] for s in r["steps"]] == ["ProfilerStep#1"]
    assert {k["name"]: k["launched_by"] for k in r["kernels"]} == want
    library = json.loads(analyze_trace(load_for_analysis(f)).to_json())
    assert {k["name"]: k["launched_by"] for k in library["kernels"]} == want
