"""A script's own arguments: ``inductor-bench breakdown train.py -- --width 48`` runs the
script with that ``sys.argv``; the run keeps them, the report shows them, diff notes them, and
a factory model refuses them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench.core.diff import diff_results
from inductor_bench.core.errors import UsageError
from inductor_bench.core.results import BreakdownResult, GraphResult
from inductor_bench.core.workload import WorkloadOptions, script_line
from inductor_bench.render.breakdown import render_breakdown

MODELS = Path(__file__).parent.parent / "models"


def test_the_line_is_quoted_as_a_shell_needs_it():
    assert script_line("/a/train.py", ["--tag", "a b", "--x=1"]) == "train.py --tag 'a b' --x=1"
    assert script_line("/a/train.py", []) == "train.py"


def test_a_factory_model_refuses_a_scripts_arguments():
    opts = WorkloadOptions(path=str(MODELS / "mlp.py"), script_args=["--width", "3"])
    with pytest.raises(UsageError, match=r"defines make_workload\(\): the arguments after -- \(--width 3\)"):
        opts.validate()


def test_a_script_keeps_its_arguments():
    opts = WorkloadOptions(path=str(MODELS / "graph_break_script.py"), script_args=["--n", "2"]).validate()
    assert opts.file_and_args() == "graph_break_script.py --n 2"
    assert WorkloadOptions(**json.loads(json.dumps(opts.to_dict()))).script_args == ["--n", "2"]


def _result(args: list[str]) -> BreakdownResult:
    g = GraphResult(id="0-inference", role="inference", iterations=4, wall_ms=1.0, wall_samples_ms=[1.0] * 4)
    return BreakdownResult(model="train", model_path="/x/train.py", script=True, script_args=args, graphs=[g])


def test_the_header_shows_the_arguments_in_every_format():
    r = _result(["--tag", "a|b"])
    assert "ran as a script, train.py --tag 'a|b': every graph it compiled" in render_breakdown(r)
    assert "- ran as a script, `train.py --tag 'a|b'`: every graph it compiled" in render_breakdown(r, "markdown")
    assert "ran as a script: every graph it compiled" in render_breakdown(_result([]))
    assert BreakdownResult.from_dict(r.to_dict()).script_args == ["--tag", "a|b"]


def test_a_script_trains_only_where_a_backward_graph_was_called():
    def run(*calls: float | None) -> str:
        graphs = [GraphResult(id="0-forward", role="forward", iterations=4, wall_ms=1.0, calls=3)]
        graphs += [GraphResult(id=f"{i}-backward", role="backward", iterations=4, wall_ms=1.0, calls=c)
                   for i, c in enumerate(calls)]
        return render_breakdown(BreakdownResult(model="s", model_path="/x/s.py", script=True, graphs=graphs))

    # a dynamic-shape graph's backward is compiled with its forward, whether called or not
    assert "inference (a backward graph compiled, never called) · mode" in run(0)
    assert "training step (forward + backward) · mode" in run(0, 2)
    assert "training step (forward + backward) · mode" in run(None)  # not counted: maybe called
    assert "\ninference · mode" in run()


def test_a_result_saved_before_script_arguments_reads_as_none():
    d = _result(["--n", "1"]).to_dict()
    del d["script_args"]
    assert BreakdownResult.from_dict(d).script_args == []


def test_diff_notes_other_arguments():
    warnings = diff_results(_result(["--width", "48"]), _result([])).warnings
    assert "the script ran with other arguments: --width 48 in base, not in head" in warnings
    warnings = diff_results(_result(["--width", "48", "-v", "a b"]), _result(["-v", "a b", "--width", "64", "--fp16"])).warnings
    assert "the script ran with other arguments: --width 48 in base, 64 in head; --fp16 in head, not in base" in warnings
    assert not [w for w in diff_results(_result(["-v"]), _result(["-v"])).warnings if "arguments" in w]
    factory = _result([])
    factory.script = False  # a factory model takes no arguments: no note of the script's
    assert not [w for w in diff_results(_result(["--width", "48"]), factory).warnings if "arguments" in w]


ARGS_SCRIPT = '''
import argparse
import json
import sys

import torch

p = argparse.ArgumentParser()
p.add_argument("--width", type=int, default=32)
p.add_argument("--tag", default="")
a = p.parse_args()
with open(sys.argv[0] + ".argv.json", "w") as f:
    json.dump(sys.argv, f)
from widths_lib import layer  # beside the script: found as `python widths.py` finds it

torch.compile(layer)(torch.randn(16, a.width), torch.randn(a.width, a.width))
'''


LIB = '''
import torch


def layer(x, w):
    return torch.relu(x @ w)
'''


@pytest.mark.slow
@pytest.mark.e2e
def test_the_script_runs_with_its_arguments(tmp_path):
    """The arguments after -- reach the script's argparse: the graph it compiles has the width
    they ask for (the GEMM's FLOPs, 2*16*48*48, say so), and the run keeps them. Run from
    another directory, the script imports the module beside it, as under `python`."""
    script = tmp_path / "widths.py"
    script.write_text(ARGS_SCRIPT)
    (tmp_path / "widths_lib.py").write_text(LIB)
    (tmp_path / "elsewhere").mkdir()
    p = subprocess.run(
        [sys.executable, "-m", "inductor_bench.cli", "breakdown", str(script), "--device", "cpu",
         "--iterations", "5", "--windows", "1", "--processes", "1", "--out", str(tmp_path / "run"),
         "--json", str(tmp_path / "r.json"), "--", "--width", "48", "--tag", "a b"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path / "elsewhere")
    assert p.returncode == 0, p.stderr
    assert json.loads((tmp_path / "widths.py.argv.json").read_text()) == [
        str(script), "--width", "48", "--tag", "a b"]
    r = json.loads((tmp_path / "r.json").read_text())
    assert r["script_args"] == ["--width", "48", "--tag", "a b"]
    (gemm,) = [k for g in r["graphs"] for k in g["kernels"] if k["name"] == "aten::mm"]
    assert gemm["flops"] == 2.0 * 16 * 48 * 48
    report = (tmp_path / "run" / "report.txt").read_text()
    assert "ran as a script, widths.py --width 48 --tag 'a b': every graph it compiled" in report
    line = LIB.splitlines().index("def layer(x, w):") + 1
    assert f"graph origins: {r['graphs'][0]['id']} from layer (widths_lib.py:{line})" in report
    assert "compiling widths.py --width 48 --tag 'a b' (a script, device cpu, mode default) ..." in p.stderr


def test_a_factory_imports_the_modules_beside_it_from_any_directory(tmp_path):
    """``load_factory`` puts the model file's directory first on sys.path, as ``python
    model.py`` would; run in a fresh process from another directory (no torch needed)."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "net_parts.py").write_text("WIDTH = 48\n")
    (tmp_path / "pkg" / "model.py").write_text(
        "from net_parts import WIDTH\n\n\ndef make_workload():\n    return WIDTH, ()\n")
    code = "import sys; from inductor_bench.runner.workload import load_factory; print(load_factory(sys.argv[1])())"
    p = subprocess.run([sys.executable, "-c", code, str(tmp_path / "pkg" / "model.py")],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert (p.returncode, p.stdout.strip()) == (0, "(48, ())"), p.stderr


@pytest.mark.slow
@pytest.mark.e2e
def test_a_script_asked_for_its_help_says_it_exited_before_compiling(tmp_path):
    """``breakdown widths.py -- --help``: argparse prints its usage and calls sys.exit(0) before
    the script compiles anything; the one error line says so (before: "never ran a
    torch.compile'd function", and a hint at make_workload)."""
    script = tmp_path / "widths.py"
    script.write_text(ARGS_SCRIPT)
    (tmp_path / "widths_lib.py").write_text(LIB)
    p = subprocess.run(
        [sys.executable, "-m", "inductor_bench.cli", "breakdown", str(script), "--device", "cpu",
         "--out", str(tmp_path / "run"), "--", "--help"], capture_output=True, text=True, timeout=600)
    assert p.returncode == 3, p.stderr
    assert p.stderr.splitlines()[-1] == (
        f"inductor-bench: error: {script}: nothing was compiled — the script called sys.exit() before it ran a "
        "torch.compile'd function (argparse's --help does; what it printed is in the run directory's logs/)")
    assert "usage: widths.py [-h] [--width WIDTH] [--tag TAG]" in (tmp_path / "run" / "logs" / "compile-default.log"
                                                                   ).read_text()
