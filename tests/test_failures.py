"""The one line a failure in the user's model becomes (``runner/failures.py``), on the
exceptions torch raises (built here with the message torch 2.13.0 wrote for a Linear(4, 4)
given a (2, 5) input, recorded 2026-12-04 on the CPU machine)."""

from __future__ import annotations

import sys

import pytest

from inductor_bench.core.errors import WorkloadError
from inductor_bench.core.workload import WorkloadOptions
from inductor_bench.runner.failures import describe
from inductor_bench.runner.workload import call_factory, load_factory

torch_exc = pytest.importorskip("torch._dynamo.exc")

FAKE_RUN = (
    "RuntimeError when making fake tensor call\n  Explanation: Dynamo failed to run FX node with fake "
    "tensors: call_function <built-in function linear>(*(FakeTensor(..., size=(2, 5)), Parameter("
    "FakeTensor(..., size=(4, 4), requires_grad=True)), Parameter(FakeTensor(..., size=(4,), "
    "requires_grad=True))), **{}): got RuntimeError('a and b must have same reduction dim, but got "
    "[2, 5] X [4, 4].')\n  Hint: Your code may result in an error when running in eager.\n\nfrom user "
    "code:\n   File \"linear.py\", line 134, in forward\n    return F.linear(input, self.weight, self.bias)\n"
)


def test_a_shape_error_met_by_the_fake_tensors_is_the_ops_own_error():
    e = torch_exc.TorchRuntimeError(FAKE_RUN)
    assert describe(e) == ("the model failed as torch.compile traced it: RuntimeError: a and b must have "
                           "same reduction dim, but got [2, 5] X [4, 4].")


def test_other_failures_keep_their_first_line():
    assert describe(ValueError("bad input\nmore")) == "the model raised: ValueError: bad input"
    assert describe(torch_exc.TorchRuntimeError("something else\nx"), "the script") == (
        "torch.compile failed: TorchRuntimeError: something else")


LIBRARY = "ib_lib_needing_a_module"  # a package beside the model file, as timm is in site-packages
MISSING_FROM_LIBRARY = (  # its layers.py:3 imports the missing module; the model's line 2 imports it
    f"ModuleNotFoundError: No module named 'ib_module_not_installed' (imported at {LIBRARY}/layers.py:3, "
    f"reached from model.py:2; not installed for {sys.executable}, the Python inductor-bench runs it with)")


@pytest.fixture
def model_beside_a_library(tmp_path, monkeypatch):
    """A model file importing a library that imports a module no Python here has, as timm imports
    torchvision: the bare 'No module named' said neither who imported it nor for which Python."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    lib = tmp_path / LIBRARY
    lib.mkdir()
    (lib / "__init__.py").write_text("")
    (lib / "layers.py").write_text("import os\n\nimport ib_module_not_installed  # noqa\n")
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith(LIBRARY)]:
        del sys.modules[name]


def test_a_module_a_library_imports_is_named_with_the_line_that_imports_it(model_beside_a_library):
    path = model_beside_a_library / "model.py"
    path.write_text(f"import torch\nimport {LIBRARY}.layers\n")
    with pytest.raises(WorkloadError) as e:
        load_factory(str(path))
    assert str(e.value) == f"{path}: importing the model file raised {MISSING_FROM_LIBRARY}"


def test_a_factory_that_imports_a_library_lazily_is_told_the_same(model_beside_a_library):
    path = model_beside_a_library / "model.py"
    path.write_text(f"def make_workload():\n    import {LIBRARY}.layers\n")
    with pytest.raises(WorkloadError) as e:
        call_factory(load_factory(str(path)), WorkloadOptions(path=str(path)), "cpu")
    assert str(e.value) == f"make_workload() raised {MISSING_FROM_LIBRARY}"


def test_a_module_the_script_imports_itself_is_said_without_a_site(tmp_path):
    path = tmp_path / "train.py"
    path.write_text("import ib_module_not_installed\n")
    with pytest.raises(ModuleNotFoundError) as e:
        exec(compile(path.read_text(), str(path), "exec"), {})
    assert describe(e.value, "the script", str(path)) == (
        "the script raised: ModuleNotFoundError: No module named 'ib_module_not_installed' "
        f"(not installed for {sys.executable}, the Python inductor-bench runs it with)")
