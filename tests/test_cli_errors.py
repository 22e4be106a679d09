"""Bad input and faults: one clear line, a non-zero exit, and what was measured is kept."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from inductor_bench.cli import main
from inductor_bench.core.errors import UsageError
from inductor_bench.runner.pipeline import new_run_dir
from inductor_bench.runner.presence import absent

from .conftest import MODELS, torch_minor
from .yardstick import seconds_to_import_torch


def cli(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "inductor_bench.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
    )


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("inductor-bench: error:")]
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def test_missing_file(tmp_path):
    p = cli("breakdown", str(tmp_path / "nope.py"))
    assert p.returncode == 2
    assert "no such file" in one_error_line(p)


def test_not_a_python_file(tmp_path):
    f = tmp_path / "model.txt"
    f.write_text("x")
    p = cli("breakdown", str(f))
    assert p.returncode == 2
    assert "not a Python file" in one_error_line(p)
    (tmp_path / "model.pt2").write_bytes(b"PK")  # what torch.export.save / aoti_compile_and_package write
    p = cli("breakdown", str(tmp_path / "model.pt2"))
    assert p.returncode == 2
    assert one_error_line(p) == (
        f"inductor-bench: error: {tmp_path / 'model.pt2'}: a torch.export or AOTInductor package, not a model "
        "file: breakdown compiles a model file (.py) with torch.compile; to see where the package's runs spend "
        "their time, profile them with torch.profiler and read the trace with `inductor-bench analyze`")
    (tmp_path / "train.ipynb").write_text('{"cells": []}')
    p = cli("breakdown", str(tmp_path / "train.ipynb"))
    assert p.returncode == 2
    assert one_error_line(p) == (
        f"inductor-bench: error: {tmp_path / 'train.ipynb'}: a Jupyter notebook, not a model file: export it as "
        f"a script (jupyter nbconvert --to script {tmp_path / 'train.ipynb'}) and break down the .py it writes")


def test_syntax_error(tmp_path):
    f = tmp_path / "bad.py"
    f.write_text("def make_workload(:\n")
    p = cli("breakdown", str(f))
    assert p.returncode == 2
    assert "syntax error" in one_error_line(p)


@pytest.mark.parametrize("text", ["import os\nreturn 1\n", "import os\nawait os.getpid()\n"])
def test_a_syntax_error_python_finds_past_the_parser_is_one_too(tmp_path, text):
    """Python refuses these files before they run (exit 1, SyntaxError), though they parse: refused
    so before any worker, as any syntax error is, not after a worker imported torch (exit 3)."""
    f = tmp_path / "bad.py"
    f.write_text(text)
    with pytest.raises(SyntaxError) as python:
        compile(text, str(f), "exec")
    msg = python.value.msg
    p = cli("breakdown", str(f), "--device", "cpu", "--runs-dir", str(tmp_path / "runs"))
    assert (p.returncode, one_error_line(p)) == (2, f"inductor-bench: error: {f}:2: syntax error: {msg}")
    assert not (tmp_path / "runs").exists()


def test_a_mode_the_installed_torch_lacks_is_refused_before_a_run_directory(tmp_path):
    runs = tmp_path / "runs"
    p = cli("breakdown", str(MODELS / "mlp.py"), "--mode", "bogus", "--device", "cpu",
            "--runs-dir", str(runs), cwd=tmp_path)
    assert p.returncode == 2
    assert one_error_line(p).startswith("inductor-bench: error: torch.compile mode 'bogus': torch ")
    assert not runs.exists()


def test_unknown_option_is_a_usage_error_not_an_internal_one(tmp_path):
    # typer 0.2x raises its own copy of click's exceptions: both must read as usage errors
    p = cli("breakdown", "--bogus", cwd=tmp_path)
    assert p.returncode == 2
    assert "No such option: --bogus" in p.stderr
    assert "internal error" not in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize("args, line", [
    (("analyze", "--format", "foo", "t.json"), "Invalid value for '--format' / '-f': 'foo' is not one of "
     "text, markdown, html, json (or md for markdown) (`inductor-bench analyze --help` shows the usage)"),
    (("analyze", "--top", "x", "t.json"), "Invalid value for '--top': "),
    (("report",), "Missing argument 'RUN_DIR'. (`inductor-bench report --help` shows the usage)"),
    (("breakdown", "--bogus"), "No such option: --bogus"),
    (("nosuchcommand",), "No such command 'nosuchcommand'. (`inductor-bench --help` shows the usage)"),
    (("report", "run", "-v"), "No such option: -v (-v/--verbose goes before the command: inductor-bench -v "
     "report ...) (`inductor-bench report --help` shows the usage)"),
    (("diff", "a", "b", "--verbose"), "No such option: --verbose (-v/--verbose goes before the command: "
     "inductor-bench --verbose diff ...) (`inductor-bench diff --help` shows the usage)"),
    (("analyze", "t.json", "--version"), "No such option: --version (the tool's version: inductor-bench "
     "--version, with no command) (`inductor-bench analyze --help` shows the usage)"),
])
def test_a_usage_error_is_one_line_naming_where_the_usage_is(tmp_path, args, line):
    """Click's message alone, on one line with the documented exit 2: not three lines of usage
    text, nor the parser's "Value error, " prefix."""
    p = cli(*args, cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.startswith(f"inductor-bench: error: {line}") and p.stderr.count("\n") == 1, p.stderr
    assert "Usage:" not in p.stderr and "Value error" not in p.stderr


def test_a_scripts_own_option_before_the_double_dash_says_where_it_goes(tmp_path):
    """``breakdown train.py --epochs 3``: click's guess of a near name alone (``Possible options:
    --processes``) does not say that the script's arguments go after ``--``."""
    p = cli("breakdown", "train.py", "--epochs", "3", cwd=tmp_path)
    line = one_error_line(p)
    assert p.returncode == 2 and line.startswith("inductor-bench: error: No such option: --epochs")
    assert line.endswith(" (a script's own arguments go after --: inductor-bench breakdown SCRIPT.py -- --epochs ...) "
                         "(`inductor-bench breakdown --help` shows the usage)")


def test_no_command_shows_the_help(tmp_path):
    p = cli(cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.startswith("Usage: ") and "Commands:" in p.stderr


@pytest.mark.parametrize("args", [
    ("analyze", ""), ("analyze", "t.json", "--json", ""), ("analyze", "t.json", "--html", ""),
    ("report", ""), ("diff", "", "."), ("diff", ".", ""), ("kernel", ""), ("breakdown", ""),
    ("breakdown", "m.py", "--out", ""), ("compare", "m.py", "--runs-dir", ""),
    ("sweep", "", "-o", "s"), ("sweep", "m.py", "-o", ""),
])
def test_an_empty_path_is_refused_not_read_as_the_current_directory(tmp_path, monkeypatch, capsys, args):
    """`analyze "$TRACE"` with TRACE unset: a Path of "" is ".", where a trace, a run or a
    kernel file may lie. It is a usage error naming the argument, before anything is read."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.json").write_text('{"traceEvents": []}')
    (tmp_path / "m.py").write_text("raise SystemExit('read')\n")
    with pytest.raises(SystemExit) as e:
        main(list(args))
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "an empty path" in err and "Traceback" not in err
    assert sorted(f.name for f in tmp_path.iterdir()) == ["m.py", "t.json"]  # nothing written

@pytest.mark.parametrize("args", [
    ("analyze", str(Path(__file__).parent / "fixtures" / "hta_small" / "event_sync_trace.json.gz")),
    ("report", str(Path(__file__).parent / "fixtures" / "runs" / "cpu_checkpoint_train")),
    ("breakdown", "m.py"),
])
def test_html_dash_is_refused_not_written_as_a_file_named_dash(tmp_path, monkeypatch, capsys, args):
    """`--json -` is stdout; `--html -` wrote a file named '-'. Refused in one line, before work."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text("raise SystemExit('read')\n")
    with pytest.raises(SystemExit) as e:
        main([*args, "--html", "-"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err == ("inductor-bench: error: --html -: the page is written to a file (give its path); "
                   "--format html prints it on stdout\n")
    assert sorted(f.name for f in tmp_path.iterdir()) == ["m.py"]


def test_malformed_mode_name(tmp_path):
    p = cli("breakdown", str(MODELS / "mlp.py"), "--mode", "Max_Autotune", cwd=tmp_path)
    assert p.returncode == 2
    assert one_error_line(p) == (
        "inductor-bench: error: --mode: 'Max_Autotune' is not a torch.compile mode name "
        "(common modes: default, reduce-overhead, max-autotune, max-autotune-no-cudagraphs)")
    assert not (tmp_path / "runs").exists()


def test_mode_the_installed_torch_lacks(tmp_path):
    """A well-formed name goes to the compile worker, which checks it against the installed
    torch's own table: one line naming the torch version and its modes."""
    p = cli("breakdown", str(MODELS / "mlp.py"), "--device", "cpu", "--mode", "fast",
            "--out", str(tmp_path / "run"))
    assert p.returncode == 2
    assert one_error_line(p) == no_such_mode("fast")


def no_such_mode(name: str) -> str:
    """The line for a mode the installed torch lacks, built from torch's own table."""
    torch = pytest.importorskip("torch")
    from torch._inductor import list_mode_options

    return (f"inductor-bench: error: torch.compile mode {name!r}: torch {torch.__version__} has no "
            f"such mode (its modes: {', '.join(list_mode_options())})")


def test_compare_checks_its_modes_before_timing_anything(tmp_path):
    """compare times eager first: a mode the installed torch lacks is refused before that,
    with no run directory made (before: eager was timed, then the mode failed)."""
    p = cli("compare", str(MODELS / "mlp.py"), "--device", "cpu", "--modes", "default,fast",
            "--out", str(tmp_path / "run"))
    assert p.returncode == 2
    assert one_error_line(p) == no_such_mode("fast")
    assert not (tmp_path / "run").exists()


def test_batch_size_for_script(tmp_path):
    p = cli("breakdown", str(MODELS / "graph_break_script.py"), "--batch-size", "4")
    assert p.returncode == 2
    assert "--batch-size needs the factory" in one_error_line(p)


def test_a_script_refuses_the_options_it_would_ignore():
    """A script makes its own inputs and picks its own dtype and whether it trains: the
    options that would change nothing are refused, all named, before anything runs."""
    p = cli("breakdown", str(MODELS / "graph_break_script.py"), "--train", "--dtype", "bfloat16", "--autocast")
    assert p.returncode == 2
    assert one_error_line(p).endswith(
        "runs as a script, which makes its own inputs and chooses whether it trains and in which dtype: "
        "--train, --dtype, --autocast needs the factory")


def test_out_dir_never_overwritten(tmp_path):
    d = tmp_path / "run"
    d.mkdir()
    (d / "breakdown.json").write_text("{}")
    with pytest.raises(UsageError, match="never overwritten"):
        new_run_dir("m", "default", out=d)
    assert (d / "breakdown.json").read_text() == "{}"


def test_new_run_dirs_are_distinct(tmp_path):
    a = new_run_dir("m", "default", root=tmp_path)
    b = new_run_dir("m", "default", root=tmp_path)
    assert a != b and a.is_dir() and b.is_dir()


def test_report_on_missing_run(tmp_path):
    p = cli("report", str(tmp_path / "nothing"))
    assert p.returncode == 2
    assert "no such run" in one_error_line(p)


def test_report_on_foreign_json(tmp_path):
    f = tmp_path / "x.json"
    f.write_text(json.dumps({"hello": 1}))
    p = cli("report", str(f))
    assert p.returncode == 2
    assert "not an inductor-bench breakdown or compare result" in one_error_line(p)


@pytest.mark.parametrize("command", ["breakdown", "compare"])
def test_device_cuda_without_cuda(tmp_path, capsys, monkeypatch, command):
    """Refused before any worker starts or any run directory is made: no process is started
    at all, and the answer comes in well under the seconds importing torch takes."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    why = absent("cuda")
    assert why is not None  # how this machine lacks CUDA: tests/test_presence.py
    importing = seconds_to_import_torch()  # here, now, as loaded as the machine is
    started: list[tuple] = []

    def no_process(*args, **kwargs):
        started.append(args)
        raise OSError("no process may start")

    monkeypatch.setattr(subprocess, "Popen", no_process)
    runs = tmp_path / "runs"
    runs.mkdir()
    t0 = time.perf_counter()
    with pytest.raises(SystemExit) as exited:
        main([command, str(MODELS / "mlp.py"), "--device", "cuda", "--runs-dir", str(runs)])
    took = time.perf_counter() - t0
    assert exited.value.code == 2
    assert capsys.readouterr().err == (
        f"inductor-bench: error: --device cuda: CUDA is not available here ({why}); "
        "use --device cpu or run on a CUDA machine\n")
    assert started == [] and list(runs.iterdir()) == []
    assert took < importing / 2, (took, importing)


@pytest.mark.e2e
def test_script_that_compiles_nothing(tmp_path):
    f = tmp_path / "plain.py"
    f.write_text("import torch\nprint(torch.ones(2).sum())\n")
    p = cli("breakdown", str(f), "--runs-dir", str(tmp_path / "runs"))
    assert p.returncode == 3
    assert "nothing was compiled" in one_error_line(p)
    (run,) = (tmp_path / "runs").iterdir()
    assert json.loads((run / "meta.json").read_text())["status"] == "failed"


@pytest.mark.slow
@pytest.mark.e2e
def test_a_factory_whose_model_compiles_to_no_graph_is_told_why(tmp_path):
    """Dynamo skips a forward that calls a GRU (torch 2.13): the model runs, eagerly, and no
    Inductor graph is written. The error says so and names the break, not a missing factory.
    (Torch 2.15 compiles what follows the break, the relu, as a graph of its own: the run is
    then profiled, and the report names the break and the graph it resumed in.)"""
    f = tmp_path / "rnn.py"
    f.write_text(
        "import torch\n\n\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.rnn = torch.nn.GRU(8, 8, batch_first=True)\n\n    def forward(self, x):\n"
        "        y, _ = self.rnn(x)\n        return y.relu()\n\n\n"
        "def make_workload(device):\n    return M().to(device), (torch.randn(2, 5, 8, device=device),)\n"
    )
    p = cli("breakdown", str(f), "--device", "cpu", "--runs-dir", str(tmp_path / "runs"))
    if torch_minor() >= (2, 15):
        assert p.returncode == 0, p.stderr[-2000:]
        assert "graph origins: 1-inference from forward after its graph break at line 10 (rnn.py:10)" in p.stdout
        assert "graph breaks: 1 — rnn.py:10: Dynamo does not support RNN, GRU, or LSTM." in p.stdout
        return
    assert p.returncode == 3
    line = one_error_line(p)
    assert "nothing was compiled — make_workload()'s model ran without a single Inductor graph" in line
    assert "no make_workload" not in line
    if torch_minor() < (2, 8):  # its own words, and no hint
        assert line.endswith("graph breaks: 1 — rnn.py:10: TorchDynamo purposely graph breaks on RNN, GRU, "
                             "LSTMs (its function ran eagerly, outside any compiled graph)"), line
        return
    assert "graph breaks: 1 — rnn.py:10: Dynamo does not support RNN, GRU, or LSTM." in line, line
    # the hint torch gives: up to 2.10 its generic one, from 2.11 the config that allows RNNs
    hint = ("Set torch._dynamo.config.allow_rnn=True" if torch_minor() >= (2, 11)
            else "It may be possible to write Dynamo tracing rules for this code.")
    assert f"(Dynamo's hint: {hint}" in line, line


@pytest.mark.e2e
def test_factory_raises(tmp_path):
    f = tmp_path / "boom.py"
    f.write_text("def make_workload(device):\n    raise ValueError('no weights here')\n")
    p = cli("breakdown", str(f), "--device", "cpu", "--runs-dir", str(tmp_path / "runs"))
    assert p.returncode == 3
    assert "make_workload() raised ValueError: no weights here" in one_error_line(p)


ARGPARSE_SCRIPT = """
import argparse

p = argparse.ArgumentParser()
p.add_argument("--hidden", type=int, default=64)
p.parse_args()
print("never reached: torch.compile would follow")
"""


@pytest.mark.e2e
def test_a_script_that_exits_failing_is_quoted_with_its_log(tmp_path):
    """A script's own failure before it compiles (argparse refusing an argument: status 2) is
    the line it wrote last on stderr, with the log that keeps the rest; exit 3, status failed."""
    (tmp_path / "args.py").write_text(ARGPARSE_SCRIPT)
    p = cli("breakdown", str(tmp_path / "args.py"), "--runs-dir", str(tmp_path / "runs"),
            "--json", str(tmp_path / "r.json"), "--", "--hidden", "abc")
    assert p.returncode == 3
    r = json.loads((tmp_path / "r.json").read_text())
    log = Path(r["run_dir"]) / "logs" / "compile-default.log"
    said = "args.py: error: argument --hidden: invalid int value: 'abc'"
    assert one_error_line(p) == (
        f"inductor-bench: error: the script exited with status 2, its last line on stderr: {said} (log: {log})")
    assert (r["status"], r["errors"]) == ("failed", [one_error_line(p).removeprefix("inductor-bench: error: ")])
    assert said in log.read_text()


@pytest.mark.slow
@pytest.mark.e2e
def test_crash_after_a_graph_keeps_it(tmp_path):
    """The script compiles one graph, then crashes: that graph is still profiled and reported."""
    f = tmp_path / "half.py"
    f.write_text(
        textwrap.dedent("""
        import torch

        @torch.compile
        def good(x):
            return torch.nn.functional.gelu(x) * 2 + 1

        good(torch.randn(64, 64))
        raise RuntimeError("model exploded after the first graph")
    """)
    )
    p = cli("breakdown", str(f), "--runs-dir", str(tmp_path / "runs"), "--iterations", "10")
    assert p.returncode == 3
    assert "model exploded after the first graph" in one_error_line(p)
    assert "STATUS: PARTIAL" in p.stdout
    (run,) = (tmp_path / "runs").iterdir()
    saved = json.loads((run / "breakdown.json").read_text())
    assert saved["status"] == "partial"
    assert [g["role"] for g in saved["graphs"]] == ["inference"]
    assert saved["graphs"][0]["kernel_ms"] > 0


@pytest.mark.e2e
def test_worker_timeout(tmp_path):
    f = tmp_path / "hang.py"
    f.write_text("import time\nimport torch\ndef make_workload():\n    time.sleep(600)\n")
    p = cli("breakdown", str(f), "--device", "cpu", "--timeout", "8", "--runs-dir", str(tmp_path / "runs"))
    assert p.returncode == 4
    assert "exceeded --timeout 8s" in one_error_line(p)
    (run,) = (tmp_path / "runs").iterdir()
    assert json.loads((run / "meta.json").read_text())["status"] == "failed"


@pytest.mark.e2e
@pytest.mark.slow  # compiles a script: tens of seconds (the quick suite's 15 minutes)
def test_script_with_graph_break(tmp_path):
    p = cli(
        "breakdown",
        str(MODELS / "graph_break_script.py"),
        "--runs-dir",
        str(tmp_path / "runs"),
        "--iterations",
        "10",
        "--json",
        str(tmp_path / "r.json"),
    )
    assert p.returncode == 0, p.stderr
    r = json.loads((tmp_path / "r.json").read_text())
    assert r["script"] is True
    assert len(r["graphs"]) == 2
    assert len({g["frame_id"] for g in r["graphs"]}) == 2
    assert all(g["status"] == "ok" for g in r["graphs"])
    # the break itself: where (the print's line, counted here) and why, in the JSON and the report
    line = next(i for i, ln in enumerate((MODELS / "graph_break_script.py").read_text().splitlines(), 1)
                if "print(" in ln)
    (brk,) = r["extras"]["graph_breaks"]
    assert (Path(brk["file"]).name, brk["line"], brk["skipped"]) == ("graph_break_script.py", line, False)
    assert "print" in brk["reason"]
    report = (Path(r["run_dir"]) / "report.txt").read_text()
    assert f"graph breaks: 1 — graph_break_script.py:{line}: " in report
    # each graph's function: f from its decorator's line (co_firstlineno), then f resumed
    first = next(i for i, ln in enumerate((MODELS / "graph_break_script.py").read_text().splitlines(), 1)
                 if ln.startswith("@torch.compile"))
    assert [(g["compiled_from"]["name"], g["compiled_from"]["line"]) for g in r["graphs"]] == [
        ("f", first), (f"torch_dynamo_resume_in_f_at_{line}", line)]
    assert (f"graph origins: {r['graphs'][0]['id']} from f (graph_break_script.py:{first}); "
            f"{r['graphs'][1]['id']} from f after its graph break at line {line} (graph_break_script.py:{line})"
            ) in report


def test_freezing_needs_inference():
    p = cli("breakdown", str(MODELS / "mlp.py"), "--train", "--freezing")
    assert p.returncode == 2
    assert "--freezing is for inference" in one_error_line(p)


OTHER_BACKEND = """
import torch

torch.compile(lambda x: x.sin() + 1, backend="aot_eager")(torch.randn(8))
"""
FAILS_AT_THE_END = """
import torch

torch.compile(lambda x: x.sin() + 1)(torch.randn(8))
raise RuntimeError("dataset missing at the end")
"""


@pytest.mark.slow
@pytest.mark.e2e
def test_a_script_compiled_by_another_backend_or_failing_at_its_end(tmp_path):
    """A script whose graphs another backend compiled is told so (Dynamo's count), not "never
    ran a torch.compile'd function"; one that raises after compiling keeps what it compiled,
    profiled, under "the script raised" (exit 3, status partial)."""
    (tmp_path / "other.py").write_text(OTHER_BACKEND)
    p = cli("breakdown", str(tmp_path / "other.py"), "--runs-dir", str(tmp_path / "runs"))
    assert p.returncode == 3
    assert "nothing was compiled by Inductor — Dynamo captured 1 graph(s), and another backend" in one_error_line(p)
    (tmp_path / "late.py").write_text(FAILS_AT_THE_END)
    p = cli("breakdown", str(tmp_path / "late.py"), "--runs-dir", str(tmp_path / "runs"), "--iterations", "5",
            "--windows", "1", "--processes", "1", "--json", str(tmp_path / "r.json"))
    assert p.returncode == 3
    r = json.loads((tmp_path / "r.json").read_text())
    assert one_error_line(p) == ("inductor-bench: error: the script raised: RuntimeError: dataset missing at the "
                                 f"end (log: {r['run_dir']}/logs/compile-default.log)")
    assert (r["status"], r["script"], [g["status"] for g in r["graphs"]]) == ("partial", True, ["ok"])


def test_a_compile_failure_whose_first_line_only_introduces_its_cause_names_the_cause():
    """torch 2.5.1 compiling flex attention for the CPU, as it failed: Dynamo's
    ``BackendCompilerFailed`` says ``backend='inductor' raised:`` on its first line and the
    cause on the next, which the one error line now carries."""
    from inductor_bench.runner.capture import _describe

    class BackendCompilerFailed(Exception):
        __module__ = "torch._dynamo.exc"

    text = ("backend='inductor' raised:\nLoweringException: RuntimeError: Found no NVIDIA driver on your "
            "system.\n  target: flex_attention\n")
    assert _describe(BackendCompilerFailed(text)) == (
        "torch.compile failed: BackendCompilerFailed: backend='inductor' raised: LoweringException: "
        "RuntimeError: Found no NVIDIA driver on your system.")
    assert _describe(ValueError("bad shape\nmore")) == "the model raised: ValueError: bad shape"
    assert _describe(ValueError("")) == "the model raised: ValueError: "


# Dynamo's error at a break under fullgraph=True, as torch raised it for `print("value",
# y.sum().item())` at line 6 of a function compiled with fullgraph=True (recorded on this
# project's CPU machine, 2026-12-02; the texts cut after their first hint).
FULLGRAPH_2_5_1 = ('Tensor.item\n\nfrom user code:\n   File "/tmp/ex/fg.py", line 6, in f\n    print("value", '
                   'y.sum().item())\n\nSet TORCH_LOGS="+dynamo" and TORCHDYNAMO_VERBOSE=1 for more information\n')
FULLGRAPH_2_15_0 = ("Failed to trace builtin operator\n  Explanation: Dynamo does not know how to trace builtin "
                    "operator `print` with argument types ['str', 'float'] (has_kwargs False)\n  Hint: Avoid "
                    "calling builtin `print` with argument types ['str', 'float']. Consider using an equivalent "
                    "alternative function/method to `print`.\n\nfrom user code:\n   File \"/tmp/ex/fg.py\", line 6, "
                    "in f\n    print(\"value\", y.sum().item())\n")


def test_a_break_under_fullgraph_names_its_line_and_what_dynamo_could_not_trace():
    """It said `torch.compile failed: Unsupported: Failed to trace builtin operator`: neither
    where nor what."""
    from inductor_bench.runner.capture import _describe

    class Unsupported(Exception):
        __module__ = "torch._dynamo.exc"

    assert _describe(Unsupported(FULLGRAPH_2_15_0)) == (
        "torch.compile failed: a graph break, an error under fullgraph=True (or error_on_graph_break), at fg.py:6: Dynamo does not "
        "know how to trace builtin operator `print` with argument types ['str', 'float'] (has_kwargs False) "
        "(Dynamo's hint: Avoid calling builtin `print` with argument types ['str', 'float']. Consider using an "
        "equivalent alternative function/method to `print`.)")
    assert _describe(Unsupported(FULLGRAPH_2_5_1)) == (
        "torch.compile failed: a graph break, an error under fullgraph=True (or error_on_graph_break), at fg.py:6: Tensor.item")
    assert _describe(Unsupported("no place named")) == "torch.compile failed: Unsupported: no place named"


@pytest.mark.slow
@pytest.mark.e2e
def test_a_script_breaking_under_fullgraph_is_told_where(tmp_path):
    f = tmp_path / "fg.py"
    f.write_text("import torch\n\n\n@torch.compile(fullgraph=True)\ndef f(x):\n    y = x.sin()\n"
                 "    print('value', y.sum().item())\n    return y.cos()\n\n\nf(torch.randn(8))\n")
    p = cli("breakdown", str(f), "--device", "cpu", "--runs-dir", str(tmp_path / "runs"))
    assert p.returncode == 3
    line = one_error_line(p)
    assert line.startswith("inductor-bench: error: torch.compile failed: a graph break, an error under "
                           "fullgraph=True (or error_on_graph_break), at fg.py:7: "), line


def test_autocast_alone_on_a_script_says_it_needs_the_factory():
    """A script has no --dtype to give: --autocast alone is refused for the factory it lacks,
    not for a --dtype it could not take; a factory's --autocast alone still needs --dtype."""
    from inductor_bench.core.workload import WorkloadOptions

    with pytest.raises(UsageError) as e:
        WorkloadOptions(str(MODELS / "graph_break_script.py"), autocast=True).validate()
    assert str(e.value).endswith("which makes its own inputs and chooses whether it trains and in which dtype: "
                                 "--autocast needs the factory")
    with pytest.raises(UsageError, match=r"^--autocast needs --dtype bfloat16 or float16$"):
        WorkloadOptions(str(MODELS / "mlp.py"), autocast=True).validate()
