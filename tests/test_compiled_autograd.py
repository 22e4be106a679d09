"""A backward compiled autograd captured (``torch._dynamo.config.compiled_autograd``): Inductor
compiles it as an inference graph of its own frame; the tool shows it as the backward it is, says
where it came from and why its kernels have no line. The unit tests hand-build results from the
figures of a real run (torch 2.13.0+cpu, 2026-12-01); the end-to-end test compiles
``tests/fixtures/models/compiled_autograd.py``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench.core import compiles
from inductor_bench.core.attribution import origin_of
from inductor_bench.core.compiled_from import AUTOGRAD_LABEL, origins_line
from inductor_bench.core.results import BreakdownResult, GraphResult
from inductor_bench.core.source_store import LOST
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.runner.sources import AUTOGRAD_NO_LINES, _no_lines_in_autograd

SCRIPT = Path(__file__).parent / "fixtures" / "models" / "compiled_autograd.py"
STEP = {"name": "step", "file": "/m/compiled_autograd.py", "line": 16}
GRAPH_MODULE = {"name": "forward", "file": "<eval_with_key>.7", "line": 4}


def _run() -> BreakdownResult:
    fwd = GraphResult("0-forward", "forward", aot_id="0_forward", frame_id=0, frame_compile_id=0,
                      compiled_from=STEP, iterations=4, wall_ms=0.33, kernel_ms=0.2)
    bwd = GraphResult("1-backward", "backward", aot_id="1_inference", frame_id=1, frame_compile_id=0,
                      compiled_from=GRAPH_MODULE, compiled_autograd=True, iterations=4, wall_ms=0.41,
                      kernel_ms=0.27)
    seconds = [{"frame": 16.370849, "inductor": 10.569576}, {"frame": 14.867547, "inductor": 13.7156},
               {"frame": 0.06441}]
    return BreakdownResult(model="compiled_autograd", script=True, graphs=[fwd, bwd],
                           compiles=[{"frame_id": i, "frame_compile_id": 0, "seconds": s}
                                     for i, s in enumerate(seconds)])


def test_the_captured_backward_is_named_as_such_not_as_the_graphmodule_it_is():
    assert origins_line(_run()) == (
        f"graph origins: 0-forward from step (compiled_autograd.py:16); 1-backward from {AUTOGRAD_LABEL}")


def test_its_compile_time_is_its_own_frames_whole_compile():
    """Its frame's compile (Dynamo tracing the captured graph, AOTAutograd, Inductor) is shown
    as a forward's is, with Inductor's part; the third frame compiled no graph."""
    line = compiles.time_line(_run())
    assert line is not None
    assert line.endswith("0-forward 16.37 s (Inductor 10.57 s); 1-backward 14.87 s (Inductor 13.72 s); "
                         f"{16.370849 + 14.867547 + 0.06441:.2f} s in all (3 compiles)")


def test_a_script_whose_backward_compiled_autograd_captured_trains():
    text = render_breakdown(_run())
    assert "training step (forward + backward)" in text
    table = next(ln for ln in text.splitlines() if ln.startswith("1-backward "))
    assert table.split()[1] == "backward"


def test_the_flag_is_saved_with_the_result_and_read_back():
    saved = json.loads(_run().to_json())
    assert [g.get("compiled_autograd") for g in saved["graphs"]] == [None, True]  # saved where set
    assert [g.compiled_autograd for g in BreakdownResult.from_dict(saved).graphs] == [False, True]


def test_its_compile_is_known_by_the_id_torch_gives_it():
    """torch 2.13's structured trace (recorded in the run above): the forward's metadata has no
    ``compiled_autograd_id``, the captured backward's has one; torch's ``CompileId`` carries the
    field here, so compiled autograd's region is not consulted."""
    import torch._dynamo.compiled_autograd  # noqa: F401  (as in a compile worker)

    from inductor_bench.runner.trace_log import of_compiled_autograd

    assert of_compiled_autograd({"compiled_autograd_id": 0, "frame_id": 1, "frame_compile_id": 0, "attempt": 0})
    assert not of_compiled_autograd({"frame_id": 0, "frame_compile_id": 0, "attempt": 1})


def test_in_a_torch_whose_compile_ids_lack_it_the_open_region_tells(monkeypatch):
    """torch 2.5's ``CompileId`` is a NamedTuple of ``frame_id`` and ``frame_compile_id``; its
    compiled autograd compiles the captured graph at the graph's first call, inside
    ``in_compiled_autograd_region`` (``torch/_dynamo/compiled_autograd.py``, 2.5.1). Stand-ins
    of both modules, as 2.5.1 has them."""
    import types
    from typing import NamedTuple

    from inductor_bench.runner.trace_log import of_compiled_autograd

    class CompileId(NamedTuple):
        frame_id: int
        frame_compile_id: int

    region = types.SimpleNamespace(in_compiled_autograd_region=True)
    monkeypatch.setitem(sys.modules, "torch._guards", types.SimpleNamespace(CompileId=CompileId))
    monkeypatch.setitem(sys.modules, "torch._dynamo.compiled_autograd", region)
    assert of_compiled_autograd({"frame_id": 1, "frame_compile_id": 0})
    region.in_compiled_autograd_region = False  # the forward, compiled before any backward
    assert not of_compiled_autograd({"frame_id": 0, "frame_compile_id": 0})


def test_its_nodes_without_a_line_say_why():
    """torch gives the captured graph's nodes no stack trace (torch 2.13): each says so, where a
    node with a line keeps it."""
    nodes = {"mm": {"op": "aten.mm.default"}, "sum_1": {"op": "aten.sum.dim_IntList"},
             "mul": {"op": "aten.mul.Tensor", "frame": ["/m/x.py", 3, "f", "y = x * 2"]}}
    _no_lines_in_autograd(nodes)
    assert nodes["mm"][LOST] == nodes["sum_1"][LOST] == AUTOGRAD_NO_LINES and LOST not in nodes["mul"]
    assert origin_of(["mm", "sum_1"], nodes).missing == AUTOGRAD_NO_LINES


def _breakdown(tmp_path: Path, name: str) -> dict:
    json_path = tmp_path / f"{name}.json"
    p = subprocess.run([sys.executable, "-m", "inductor_bench.cli", "breakdown", str(SCRIPT), "--runs-dir",
                        str(tmp_path / "runs"), "--iterations", "10", "--json", str(json_path)],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr
    return json.loads(json_path.read_text())


@pytest.mark.slow
@pytest.mark.e2e
def test_breakdown_of_a_compiled_autograd_script(tmp_path):
    """The forward graph and the captured backward, each called once per step of the script's
    loop (``STEPS``, read from the file); the backward's matmuls have the shapes its gradients
    need, worked out here from the model's sizes. The second run, from the cache the first
    filled, says the same."""
    first, again = _breakdown(tmp_path, "first"), _breakdown(tmp_path, "again")
    for r in (first, again):
        _check(r)


def _check(r: dict) -> None:
    steps = int(re.search(r"^STEPS = (\d+)$", SCRIPT.read_text(), re.M).group(1))
    # the captured graph's frame number differs between torch versions (1 in 2.13, 2 in 2.15)
    fwd, bwd = r["graphs"]
    assert (fwd["id"], fwd["role"], fwd["aot_id"], fwd.get("compiled_autograd", False), fwd["calls"]) == (
        "0-forward", "forward", "0_forward", False, steps)
    assert (bwd["id"], bwd["role"], bwd.get("compiled_autograd"), bwd["calls"]) == (
        f"{bwd['frame_id']}-backward", "backward", True, steps)
    assert bwd["aot_id"].endswith("_inference")  # as AOTAutograd compiled it
    report = (Path(r["run_dir"]) / "report.txt").read_text()
    assert "training step (forward + backward)" in report
    assert f"{bwd['id']} from {AUTOGRAD_LABEL}" in report
    backward_line = next(i for i, ln in enumerate(SCRIPT.read_text().splitlines(), 1) if ln.strip() == "loss.backward()")
    assert [(b["line"], b["count"]) for b in r["extras"]["graph_breaks"]] == [(backward_line, 1)]
    assert f"compiled_autograd.py:{backward_line}: " in report
    assert f"by design under compiled autograd: Dynamo leaves the call to it, and it compiled the backward as {bwd['id']}" in report
    batch, d_in, hidden, classes = 64, 128, 256, 10
    mms = sorted(tuple(s["shapes"]) for s in bwd["sites"] if s["kernel"] == "aten::mm")
    # a weight's grad multiplies its output's grad transposed: a view with the strides of one
    assert mms == sorted([(f"{classes}x{batch} (strides 1x{classes})", f"{batch}x{hidden}"),  # the last linear's
                          (f"{batch}x{classes}", f"{classes}x{hidden}"),  # its input's grad
                          (f"{hidden}x{batch} (strides 1x{hidden})", f"{batch}x{d_in}")])  # the first linear's
    assert all(k["origin"]["missing"] == AUTOGRAD_NO_LINES for k in bwd["kernels"])
    loss_line = next(i for i, ln in enumerate(SCRIPT.read_text().splitlines(), 1) if "cross_entropy" in ln)
    fwd_lines = {ln["line"] for k in fwd["kernels"] for ln in (k.get("origin") or {}).get("lines", [])}
    assert fwd_lines == {loss_line}  # the forward's kernels keep their line
