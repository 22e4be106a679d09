"""`analyze` of a CPU-only trace says what each compiled graph's call record ran as: torch
2.9+ names it by its FX graph cache key (``## Call CompiledFxGraph <key> ##``), and the ops
around it tell a forward (``CompiledFunction``) from a backward (``CompiledFunctionBackward``)
and name Dynamo's frame (``Torch-Compiled Region: 0/0``). Checked on a hand-built trace
(synthetic) and on recorded CPU loops against an independent reading of the raw JSON."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from inductor_bench.core.analyze import analyze_file
from inductor_bench.render.analyze import render_analyze

from .conftest import FIXTURES
from .test_analyze import raw_events
from .test_analyze_regions import _x

CALL = re.compile(r"^## Call CompiledFxGraph \S+ ##$")
LOOPS = [FIXTURES / "cpu_loop" / f for f in ("torch-2.13.0.json.gz", "inference-torch-2.13.0.json.gz",
                                             "inference-torch-2.15.0.json.gz")]


def _op(name: str, ts: float, dur: float, tid: int = 1) -> dict:
    return _x("cpu_op", name, ts, dur, tid=tid)


def synthetic_trace(tmp_path: Path) -> Path:
    """Synthetic: one step; a frame holding a forward's call, its backward's call on autograd's
    thread, a second frame's inference call, and a call with nothing around it."""
    events = [
        _x("user_annotation", "ProfilerStep#1", 0, 1000),
        _op("Torch-Compiled Region: 0/0", 10, 100),
        _op("CompiledFunction", 20, 80),
        _op("## Call CompiledFxGraph fwdkey ##", 30, 60),
        _op("aten::mm", 40, 20),
        _op("CompiledFunctionBackward", 200, 100, tid=2),
        _op("## Call CompiledFxGraph bwdkey ##", 210, 80, tid=2),
        _op("Torch-Compiled Region: 1/0", 400, 50),
        _op("## Call CompiledFxGraph inferkey ##", 410, 30),
        _op("## Call CompiledFxGraph barekey ##", 500, 10),
        _op("CompiledFunction", 600, 10),  # after the forward: no call inside it
    ]
    path = tmp_path / "synthetic.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def test_each_call_says_what_it_ran_as(tmp_path):
    r = analyze_file(synthetic_trace(tmp_path))
    got = {k.name: k.launched_by for k in r.kernels if CALL.match(k.name)}
    assert got == {"## Call CompiledFxGraph fwdkey ##": "forward, frame 0/0",
                   "## Call CompiledFxGraph bwdkey ##": "backward",
                   "## Call CompiledFxGraph inferkey ##": "frame 1/0",
                   "## Call CompiledFxGraph barekey ##": None}
    assert all(k.launched_by is None for k in r.kernels if not CALL.match(k.name))
    text = render_analyze(r, "text")
    assert "## Call CompiledFxGraph fwdkey ## (forward, frame 0/0)" in text
    assert "## Call CompiledFxGraph bwdkey ## (backward)" in text
    assert "## Call CompiledFxGraph barekey ##  " in text


def expected_contexts(path: Path) -> dict[str, str]:
    """Each call's name -> the innermost CompiledFunction[Backward] and Torch-Compiled Region
    holding it on its thread, read from the raw events."""
    evs = [e for e in raw_events(path) if e.get("cat") in ("cpu_op", "user_annotation")]
    out = {}
    for c in (e for e in evs if CALL.match(e["name"])):
        around = sorted((e for e in evs if e["tid"] == c["tid"] and e is not c and e["ts"] <= c["ts"]
                         and e["ts"] + e["dur"] >= c["ts"] + c["dur"]), key=lambda e: e["dur"])
        role = [e["name"] for e in around if e["name"] in ("CompiledFunction", "CompiledFunctionBackward")]
        frame = [e["name"].split(": ")[1] for e in around if e["name"].startswith("Torch-Compiled Region: ")]
        words = ([{"CompiledFunction": "forward"}.get(role[0], "backward")] if role else []) + (
            [f"frame {frame[0]}"] if frame else [])
        out.setdefault(c["name"], ", ".join(words))
    return out


@pytest.mark.parametrize("path", LOOPS, ids=lambda p: p.name)
def test_recorded_loops_name_their_calls(path):
    want = expected_contexts(path)
    assert want  # torch 2.13 and 2.15 record the calls
    r = analyze_file(path)
    got = {k.name: k.launched_by for k in r.kernels if CALL.match(k.name)}
    assert got == want
    if "inference" not in path.name:
        assert sorted(want.values()) == ["backward", "forward, frame 0/0"]
