"""A script that asked to compile and got no graph is told why: what it gave torch.compile, an
nn.Module.compile() that torch before 2.14 leaves eager, an AOTInductor package
(runner/script_compiles.py; the lines themselves: tests/test_graph_breaks.py)."""
from __future__ import annotations

import pytest

from .conftest import torch_minor
from .test_cli_errors import cli, one_error_line

torch = pytest.importorskip("torch")

import json  # noqa: E402

from inductor_bench.core.modes import of_script  # noqa: E402
from inductor_bench.runner.script_compiles import describe, with_mode  # noqa: E402


class Own(torch.nn.Module):
    def forward(self, x):
        return x + 1


class Stack(torch.nn.Sequential):  # no forward of its own: torch's runs
    pass


def step(x):
    return x


def test_what_torch_compile_was_given_is_named_and_a_torch_forward_under_module_compile_is_eager():
    seq = torch.nn.Sequential(torch.nn.Linear(2, 2))
    assert describe(seq._call_impl, "2.13.0+cpu") == ("Sequential (nn.Module.compile())", True)
    assert describe(Stack()._call_impl, "2.5.1+cu124") == ("Stack (nn.Module.compile())", True)
    assert describe(torch.nn.Linear(2, 2)._call_impl, "2.12.0") == ("Linear (nn.Module.compile())", True)
    # fixed in 2.14; a module's own forward was always compiled; torch.compile(model) is not Module.compile
    assert describe(seq._call_impl, "2.14.1+cu130") == ("Sequential (nn.Module.compile())", False)
    assert describe(seq._call_impl, "2.15.0") == ("Sequential (nn.Module.compile())", False)
    assert describe(Own()._call_impl, "2.13.0") == ("Own (nn.Module.compile())", False)
    assert describe(seq, "2.13.0") == ("Sequential", False)
    assert describe(step, "2.13.0") == ("step", False)
    assert describe(seq._call_impl, "nightly") == ("Sequential (nn.Module.compile())", False)


MODULE_COMPILE = """
import torch

head = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU())
head.compile()
torch.compile(lambda x: x * 2)  # compiled, never called
with torch.no_grad():
    head(torch.randn(4, 16))
"""
NEVER_CALLED = """
import torch

def forward(x):
    return x.sin()

fast = torch.compile(forward)
print(forward(torch.randn(3)))
"""


@pytest.mark.e2e
@pytest.mark.slow  # compiles a script: tens of seconds (the quick suite's 15 minutes)
def test_a_script_whose_compiles_made_no_graph_is_told_what_it_asked_for(tmp_path):
    (tmp_path / "never.py").write_text(NEVER_CALLED)
    p = cli("breakdown", str(tmp_path / "never.py"), "--runs-dir", str(tmp_path / "runs"))
    assert p.returncode == 3
    assert one_error_line(p) == (
        f"inductor-bench: error: {tmp_path / 'never.py'}: nothing was compiled — the script called "
        "torch.compile 1 time(s) (forward), but Dynamo compiled no frame: the compiled function never ran, "
        "or Dynamo skipped it (TORCH_LOGS=+dynamo says why)")
    (tmp_path / "seq.py").write_text(MODULE_COMPILE)
    p = cli("breakdown", str(tmp_path / "seq.py"), "--runs-dir", str(tmp_path / "runs"), "--iterations", "5",
            "--windows", "1", "--processes", "1")
    if torch_minor() >= (2, 14):  # torch compiles it: a graph, profiled
        assert p.returncode == 0, p.stderr[-2000:]
        assert "graph origins: 0-inference from" in p.stdout and "compiled nothing" not in p.stdout
        return
    assert p.returncode == 3
    assert one_error_line(p).startswith(
        f"inductor-bench: error: {tmp_path / 'seq.py'}: nothing was compiled — the script compiled Sequential "
        "(nn.Module.compile()), which this torch leaves eager: before torch 2.14 Dynamo skips")


AOT = """
import pathlib
import torch

model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.GELU()).eval()
x = torch.randn(4, 16)
if hasattr(torch._inductor, "aoti_compile_and_package"):  # torch 2.6+
    path = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)),
                                                   package_path=str(pathlib.Path(__file__).with_suffix(".pt2")))
    print(torch._inductor.aoti_load_package(path)(x).shape)
else:  # torch 2.5: a shared library
    path = torch._export.aot_compile(model, (x,))
    print(torch._export.aot_load(path, "cpu")(x).shape)
"""


@pytest.mark.slow
@pytest.mark.e2e
def test_a_script_that_compiled_an_aotinductor_package_is_pointed_to_analyze(tmp_path):
    (tmp_path / "aot.py").write_text(AOT)
    p = cli("breakdown", str(tmp_path / "aot.py"), "--runs-dir", str(tmp_path / "runs"))
    assert p.returncode == 3
    assert one_error_line(p).startswith(
        f"inductor-bench: error: {tmp_path / 'aot.py'}: nothing for breakdown to profile — the script compiled "
        "with AOTInductor (1 ahead-of-time compile(s)")
    assert "torch.Size([4, 16])" in (next((tmp_path / "runs").iterdir()) / "logs" / "compile-default.log").read_text()


def test_a_call_naming_no_mode_gets_the_runs_and_one_with_options_gets_its_options_under_its_own():
    """torch.compile takes a mode or options, never both: a call with options of its own gets the
    run's mode as options, its own applied over them, as torch applies a mode's then a call's."""
    from torch._inductor import list_mode_options

    kw: dict = {}
    assert with_mode(kw, "max-autotune-no-cudagraphs") == "max-autotune-no-cudagraphs"
    assert kw == {"mode": "max-autotune-no-cudagraphs"}
    kw = {"mode": "reduce-overhead"}
    assert with_mode(kw, "max-autotune") == "reduce-overhead" and kw == {"mode": "reduce-overhead"}
    kw = {"options": {"coordinate_descent_tuning": False, "epilogue_fusion": True}}
    assert with_mode(kw, "max-autotune-no-cudagraphs") == "max-autotune-no-cudagraphs"
    assert kw == {"options": {**list_mode_options("max-autotune-no-cudagraphs"),
                              "coordinate_descent_tuning": False, "epilogue_fusion": True}}
    assert kw["options"]["max_autotune"] is True and "mode" not in kw
    kw = {"options": {"epilogue_fusion": True}}
    assert with_mode(kw, None) == "default" and kw == {"options": {"epilogue_fusion": True}}


def test_a_scripts_mode_is_the_mode_its_calls_compiled_in():
    assert of_script({"modes": ["max-autotune", "default", "max-autotune"]}, "default") == "max-autotune + default"
    assert of_script({"modes": ["default"]}, "max-autotune") == "default"
    assert of_script({"modes": []}, "max-autotune") == of_script(None, "max-autotune") == "max-autotune"


OWN_MODES = """
import torch

lin = torch.nn.Linear(32, 32)
with_options = torch.compile(lambda x: torch.relu(lin(x)), options={"epilogue_fusion": True})
own_mode = torch.compile(lambda x: torch.sigmoid(lin(x)), mode="default")
with torch.no_grad():
    for _ in range(3):
        with_options(torch.randn(8, 32))
        own_mode(torch.randn(8, 32))
"""


@pytest.mark.e2e
@pytest.mark.slow  # compiles a script: tens of seconds (the quick suite's 15 minutes)
def test_a_scripts_own_options_and_mode_under_mode(tmp_path):
    """Under --mode, a call with options of its own compiles (before: torch's RuntimeError, the
    run failed), a call naming its own mode keeps it, and the run says in what mode its graphs
    compiled: in the report, the JSON, and a note that --mode did not reach every call."""
    (tmp_path / "own.py").write_text(OWN_MODES)
    p = cli("breakdown", str(tmp_path / "own.py"), "--mode", "max-autotune-no-cudagraphs", "--runs-dir",
            str(tmp_path / "runs"), "--iterations", "5", "--windows", "1", "--processes", "1", "--summary",
            "--json", str(tmp_path / "own.json"))
    assert p.returncode == 0, p.stderr[-2000:]
    r = json.loads((tmp_path / "own.json").read_text())
    assert r["mode"] == "max-autotune-no-cudagraphs + default" and len(r["graphs"]) == 2
    assert "inference · mode max-autotune-no-cudagraphs + default" in p.stdout
    assert ("note: the script's torch.compile calls compiled in mode max-autotune-no-cudagraphs + default; "
            "--mode max-autotune-no-cudagraphs applies only to a call that names no mode") in p.stderr


OWN_MAX_AUTOTUNE = """
import torch

lin = torch.nn.Linear(32, 32)
f = torch.compile(lambda x: torch.relu(lin(x)), mode="max-autotune")
with torch.no_grad():
    for _ in range(3):
        f(torch.randn(8, 32))
"""


@pytest.mark.e2e
@pytest.mark.slow  # compiles a script: tens of seconds (the quick suite's 15 minutes)
def test_autotune_top_on_cpu_refuses_a_script_that_compiled_in_max_autotune_itself(tmp_path):
    """On CPU --autotune-top recompiles in mode max-autotune; a script whose calls name it
    already compiled so (before: a second run of the same code, every kernel "same kernel")."""
    (tmp_path / "mat.py").write_text(OWN_MAX_AUTOTUNE)
    p = cli("breakdown", str(tmp_path / "mat.py"), "--autotune-top", "1", "--runs-dir", str(tmp_path / "runs"),
            "--iterations", "5", "--windows", "1", "--processes", "1", "--summary")
    assert p.returncode == 2, p.stderr[-2000:]
    assert one_error_line(p) == ("inductor-bench: error: --autotune-top on CPU recompiles with mode max-autotune: "
                                 "this run already uses it")
    assert "inference · mode max-autotune" in p.stdout  # the run itself is reported
