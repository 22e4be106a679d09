"""A model file imported for its factory is a module of its own, kept in ``sys.modules``: code
that finds a function's globals by importing its ``__module__`` (Dynamo tracing a
``flex_attention`` score_mod from torch's own frame, as eager flex attention does) finds them.
Each load in a process has a name of its own (compare loads a file once per column)."""

from __future__ import annotations

import importlib
import sys

import pytest

from inductor_bench.runner.workload import LOADED_NAME, load_factory

from .conftest import FIXTURES

MODEL = '''
import math

SCALE = 3


def helper(x):
    return x * SCALE


def make_workload():
    return helper, (math.pi,)
'''


def test_a_factorys_module_is_importable_by_its_name_and_each_load_is_its_own(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    first, second = load_factory(str(path)), load_factory(str(path))
    fn1, fn2 = first()[0], second()[0]
    assert fn1.__module__.startswith(LOADED_NAME) and fn1.__module__ != fn2.__module__
    for fn in (fn1, fn2):
        module = importlib.import_module(fn.__module__)
        assert module.__dict__ is fn.__globals__ and module.__file__ == str(path)
    sys.modules[fn1.__module__].SCALE = 5  # a module's globals are the functions' own
    assert fn1(2) == 10 and fn2(2) == 6


def test_a_model_file_that_fails_to_import_leaves_no_module_behind(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("raise RuntimeError('no')\n")
    before = set(sys.modules)
    with pytest.raises(Exception, match="RuntimeError: no"):
        load_factory(str(path))
    assert {m for m in set(sys.modules) - before if m.startswith(LOADED_NAME)} == set()


@pytest.mark.parametrize(("text", "said"), [
    ("import sys\nsys.exit(2)\n", "{path}: importing the model file raised SystemExit: 2"),
    ("import argparse\nargparse.ArgumentParser().parse_args(['--x'])\n",
     "{path}: importing the model file raised SystemExit: 2"),
    ("import sys\ndef make_workload():\n    sys.exit('no weights')\n", "make_workload() raised SystemExit: no weights"),
])
def test_a_model_file_that_calls_sys_exit_is_the_models_failure(tmp_path, text, said):
    """sys.exit (or argparse) in a model file or its factory left the worker as a crash (exit 4,
    'SystemExit: 2'); it is the model's failure (exit 3), said as an exception is."""
    from inductor_bench.core.errors import WorkloadError
    from inductor_bench.core.workload import WorkloadOptions
    from inductor_bench.runner.workload import call_factory

    path = tmp_path / "exits.py"
    path.write_text(text)
    with pytest.raises(WorkloadError) as e:
        call_factory(load_factory(str(path)), WorkloadOptions(path=str(path)), "cpu")
    assert str(e.value) == said.format(path=path)
    assert WorkloadError.exit_code == 3


def test_eager_flex_attention_with_a_score_mod_defined_in_the_model_file_runs():
    """Eager ``flex_attention`` compiles its higher-order op with the eager backend; Dynamo
    then imports the score_mod's module by name. Under ``runpy.run_path`` that module was gone:
    ``ModuleNotFoundError: No module named 'inductor_bench_workload'`` in compare's eager column."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("torch.nn.attention.flex_attention")
    model, (x,) = load_factory(str(FIXTURES / "models" / "flex_attn.py"))("cpu", torch.float32, 2)
    with torch.no_grad():
        assert model(x).shape == x.shape
