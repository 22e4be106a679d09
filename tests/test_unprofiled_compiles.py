"""Compiles that left no graph to profile: a graph another backend compiled, a compile that failed
and that Dynamo ran eagerly (``torch._dynamo.config.suppress_errors``); the report names both,
and a run with nothing else says why it has nothing."""

from __future__ import annotations

import json
import logging

import pytest

from inductor_bench.core import compiles
from inductor_bench.core import graph_breaks as gb
from inductor_bench.core.results import BreakdownResult, GraphResult

# synthetic: compilation_metrics records as torch 2.13 writes them (fields printed from a run
# of the scripts below, the rest of each record left out)
AOT_EAGER = {"co_name": "f", "co_filename": "/m/s.py", "co_firstlineno": 4, "graph_op_count": 3,
             "entire_frame_compile_time_s": 0.39, "inductor_compile_time_s": None, "fail_type": None}
INDUCTOR = {"co_name": "<lambda>", "co_filename": "/m/s.py", "co_firstlineno": 9, "graph_op_count": 1,
            "entire_frame_compile_time_s": 5.6, "inductor_compile_time_s": 3.4, "fail_type": None}
FAILED = {"co_name": "h", "co_filename": "/m/s.py", "co_firstlineno": 12, "graph_op_count": None,
          "entire_frame_compile_time_s": 2.3, "inductor_compile_time_s": 0.19, "fail_type": "InductorError",
          "fail_reason": "InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: "
                         "('/nonexistent/g++',)"}
NO_GRAPH = {"co_name": "torch_dynamo_resume_in_g_at_14", "co_filename": "/m/s.py", "co_firstlineno": 14,
            "graph_op_count": None, "entire_frame_compile_time_s": 0.01, "fail_type": None}
CXX = "InductorError: InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: ('/nonexistent/g++',)"


def _merged(*metrics: dict) -> list[dict]:
    timed = [(n, 0, compiles.seconds("compilation_metrics", m)) for n, m in enumerate(metrics)]
    facts = [(n, 0, compiles.frame_facts("compilation_metrics", m)) for n, m in enumerate(metrics)]
    return compiles.merge([], [], timed, facts)


def test_each_compile_keeps_its_function_op_count_and_failure():
    assert compiles.frame_facts("compilation_metrics", AOT_EAGER) == {
        "code": {"name": "f", "file": "/m/s.py", "line": 4}, "ops": 3}
    assert compiles.frame_facts("compilation_metrics", FAILED)["failed"] == CXX
    assert compiles.frame_facts("compilation_metrics", {**FAILED, "fail_reason": None})["failed"] == "InductorError"
    assert compiles.frame_facts("bwd_compilation_metrics", INDUCTOR) == {}
    assert compiles.frame_facts("compilation_metrics", None) == {}
    found = _merged(AOT_EAGER, INDUCTOR)
    assert found[0] == {"frame_id": 0, "frame_compile_id": 0, "seconds": {"frame": 0.39},
                        "code": {"name": "f", "file": "/m/s.py", "line": 4}, "ops": 3}
    assert found[1]["seconds"] == {"frame": 5.6, "inductor": 3.4}


def _run(*graph_frames: int | None) -> BreakdownResult:
    graphs = [GraphResult(id=f"{n}-inference", role="inference", frame_id=n, frame_compile_id=0)
              for n in graph_frames]
    return BreakdownResult(model="s", script=True, graphs=graphs,
                           compiles=_merged(AOT_EAGER, INDUCTOR, FAILED, NO_GRAPH))


def test_the_report_names_the_graphs_another_backend_compiled_and_the_compile_that_failed():
    r = _run(1)
    assert [x["frame_id"] for x in compiles.unprofiled(r)] == [0, 2]  # not 1 (profiled), not 3 (no ops)
    assert compiles.lines(r) == [
        f"WARNING: the compile of h (s.py:12) failed: {CXX}; Dynamo went on "
        "(torch._dynamo.config.suppress_errors) and ran its calls eagerly, outside any compiled graph",
        "not profiled: 1 graph that a backend other than Inductor compiled (torch.compile(..., backend=...)), "
        "whose calls are in no table here: f (s.py:4), 3 ops"]
    # a graph the run cannot match to a compile: nothing claimed
    assert compiles.unprofiled(_run(1, None)) == []
    # an Inductor graph whose module came from the AOTAutograd cache has no Inductor time, but its graph
    assert [x["frame_id"] for x in compiles.unprofiled(_run(0, 1))] == [2]


def test_a_run_whose_only_compile_failed_says_so():
    found = _merged(FAILED)
    assert compiles.first_failure(found) == f"h (s.py:12) failed: {CXX}"
    assert compiles.first_failure(_merged(INDUCTOR)) is None
    line = gb.nothing_compiled("s.py", True, [], 0, [], {"torch_compile": ["h"]}, None, compiles.first_failure(found))
    assert line == (f"s.py: nothing was compiled — the compile of h (s.py:12) failed: {CXX}; Dynamo went on "
                    "(torch._dynamo.config.suppress_errors) and ran its calls eagerly")


def _recorded(run) -> list[dict]:
    import torch

    from inductor_bench.runner import dynamo_counts, trace_log

    torch._dynamo.reset()
    rec = dynamo_counts.attach_compile_recorder()
    try:
        run(torch)
    finally:
        logging.getLogger(trace_log.TRACE_LOGGER).removeHandler(rec)
        logging.getLogger(dynamo_counts.LIMIT_LOGGER).removeHandler(rec)
        torch._dynamo.reset()
    return rec.found()


def _broken_backend(gm, inputs):
    raise RuntimeError("this backend cannot compile")


def test_the_recorder_keeps_a_failed_compile_and_not_a_frame_dynamo_skipped():
    from inductor_bench.runner.dynamo_counts import _graph_break

    def run(torch):
        def f(x):
            return x.sin() + 1

        with torch._dynamo.config.patch(suppress_errors=True):
            torch.compile(f, backend="eager")(torch.randn(4))
            torch.compile(lambda x: x.cos() * 2, backend=_broken_backend)(torch.randn(4))

    ok, broken = _recorded(run)
    assert ok["code"]["name"] == "f" and ok["code"]["file"] == __file__ and ok["ops"] == 2 and "failed" not in ok
    assert broken["code"]["name"] == "<lambda>"
    assert broken["failed"].startswith("BackendCompilerFailed: ") and "this backend cannot compile" in broken["failed"]
    assert _graph_break("Unsupported") and _graph_break("SkipFrame")  # Dynamo's breaks, already reported as such
    assert not _graph_break("BackendCompilerFailed") and not _graph_break("InductorError")


SCRIPT = """\
import torch

torch._dynamo.config.suppress_errors = True


def broken(gm, inputs):
    raise RuntimeError("this backend cannot compile")


def f(x):
    return torch.relu(x) * 2 + 1


def g(x):
    return x.sin().cos()


def h(x):
    return x.exp() - 1


{calls}
print("done")
"""
MIXED = ("torch.compile(f, backend='aot_eager')(torch.randn(64, 64))\n"
         "torch.compile(g)(torch.randn(128))\n"
         "torch.compile(h, backend=broken)(torch.randn(8))")


@pytest.mark.slow
@pytest.mark.e2e
def test_a_script_with_other_backends_and_a_failed_compile_is_told_what_was_not_profiled(tmp_path):
    from .test_cli_errors import cli

    f = tmp_path / "mixed.py"
    f.write_text(SCRIPT.format(calls=MIXED))
    p = cli("breakdown", str(f), "--device", "cpu", "--out", str(tmp_path / "run"), "--windows", "1",
            "--processes", "1", "--iterations", "10")
    assert p.returncode == 0, p.stderr
    assert [g["id"] for g in json.loads((tmp_path / "run" / "breakdown.json").read_text())["graphs"]] == ["1-inference"]
    assert "graph origins: 1-inference from g (mixed.py:14)" in p.stdout
    assert ("not profiled: 1 graph that a backend other than Inductor compiled (torch.compile(..., backend=...)), "
            "whose calls are in no table here: f (mixed.py:10), 3 ops") in p.stdout
    assert "WARNING: the compile of h (mixed.py:18) failed: BackendCompilerFailed: " in p.stdout

    only = tmp_path / "only.py"
    only.write_text(SCRIPT.format(calls="torch.compile(h, backend=broken)(torch.randn(8))"))
    p = cli("breakdown", str(only), "--device", "cpu", "--out", str(tmp_path / "run2"))
    assert p.returncode == 3
    (line,) = [ln for ln in p.stderr.splitlines() if ln.startswith("inductor-bench: error:")]
    assert line.startswith(f"inductor-bench: error: {only}: nothing was compiled — the compile of h (only.py:18) "
                           "failed: BackendCompilerFailed: "), line
    assert line.endswith("; Dynamo went on (torch._dynamo.config.suppress_errors) and ran its calls eagerly")
