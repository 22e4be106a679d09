"""The traces of graphs inductor-bench profiled (a run directory's ``graphs/<graph>/trace.json.gz``,
each graph profiled in a session of its own) are no ranks of one run: given together, each is analysed
alone, in the order given, each its own section, and the report points at ``report RUN_DIR``.
Before, a forward and its backward read as "2 ranks" with a straggler in every iteration."""

from __future__ import annotations

import json
import shutil

from .conftest import FIXTURES
from .test_analyze import raw_events, run_cli

RUN = FIXTURES / "runs" / "cpu_checkpoint_train"
FORWARD, BACKWARD = (RUN / "graphs" / g / "trace.json.gz" for g in ("0-forward", "0-backward"))
MARKER = "inductor_bench::iteration"


def _iterations(path) -> int:
    return sum(e["name"] == MARKER for e in raw_events(path))


def test_graph_traces_are_each_analysed_alone_in_the_order_given(capsys):
    assert (_iterations(FORWARD), _iterations(BACKWARD)) == (34, 20)
    code, out, err = run_cli(capsys, str(BACKWARD), str(FORWARD), "--format", "json")
    doc = json.loads(out)
    assert (code, err) == (0, "") and doc["schema"] == "inductor-bench/analyze-graph-traces"
    assert "ranks" not in doc and doc["run_dirs"] == [str(RUN)]
    assert [t["trace"] for t in doc["traces"]] == [str(BACKWARD), str(FORWARD)]
    assert [len(t["steps"]) for t in doc["traces"]] == [20, 34]
    for t, path in zip(doc["traces"], (BACKWARD, FORWARD), strict=True):  # as each alone reads
        code, alone, _ = run_cli(capsys, str(path), "--format", "json")
        assert code == 0 and t == json.loads(alone)
    code, out, _ = run_cli(capsys, str(FORWARD), str(BACKWARD))
    lines = out.splitlines()
    assert code == 0 and lines[0] == "inductor-bench analyze: 2 graph traces, each alone"
    assert "trace 1: 0-forward/trace.json.gz, 34 iterations" in lines
    assert "trace 2: 0-backward/trace.json.gz, 20 iterations" in lines
    assert "Trace 1 of 2: 0-forward/trace.json.gz" in lines and "Trace 2 of 2: 0-backward/trace.json.gz" in lines
    assert f"inductor-bench report {RUN} shows a run's graphs" in out
    assert "straggler" not in out.lower() and "2 ranks" not in out and "rank 0" not in out


def test_graph_traces_outside_their_run_and_beside_another_trace(capsys, tmp_path):
    """Copied out of their run, the line names no run (RUN_DIR); beside a trace of a real loop
    (ProfilerStep#), each is still analysed alone; markdown names the command as code."""
    (tmp_path / "fw").mkdir()
    copy = shutil.copy(FORWARD, tmp_path / "fw" / "trace.json.gz")
    loop = FIXTURES / "cpu_loop" / "stack-torch-2.13.0.json.gz"
    code, out, _ = run_cli(capsys, str(copy), str(loop), "--format", "markdown")
    assert code == 0 and "`inductor-bench report RUN_DIR`" in out
    assert "Trace 1 of 2: `fw/trace.json.gz`" in out and "Trace 2 of 2: `cpu_loop/stack-torch-2.13.0.json.gz`" in out
    code, out, _ = run_cli(capsys, str(loop), str(copy), "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["run_dirs"] == [] and [t["trace"] for t in doc["traces"]] == [str(loop), str(copy)]
