"""The harness's random inputs are the same in every process (``runner/harness_inputs.py``):
a kernel whose time depends on its data must not change speed from one process to the next.
The modules here are synthetic: written by hand in the shape Inductor gives its harness
(torch 2.11+: ``get_args()``; before: ``benchmark_compiled_module()`` handing
``print_performance`` a closure)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

MODULE_2_11 = textwrap.dedent('''
    import torch
    from torch._dynamo.testing import rand_strided

    def call(args):
        x, y = args
        args.clear()
        return (torch.relu(x) + y,)

    def get_args():
        return [rand_strided((64, 24), (24, 1), device="cpu", dtype=torch.float32),
                rand_strided((64, 24), (24, 1), device="cpu", dtype=torch.float32)]
''')

MODULE_2_5 = textwrap.dedent('''
    import torch
    from torch._dynamo.testing import rand_strided

    def call(args):
        x, = args
        args.clear()
        return (torch.relu(x),)

    def benchmark_compiled_module(times=10, repeat=10):
        from torch._inductor.utils import print_performance
        x = rand_strided((64, 24), (24, 1), device="cpu", dtype=torch.float32)
        fn = lambda: call([x])
        return print_performance(fn, times=times, repeat=repeat)
''')


def _write(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return str(path)


def _first_output(tmp_path, name, text) -> list[float]:
    from inductor_bench.runner.profile import harness, load_module

    torch.randn(1000)  # the generator moved on, as a profiled process's own work moves it
    out = harness(load_module(_write(tmp_path, name, text)))()
    return out[0].flatten().tolist()


@pytest.mark.parametrize("text", [MODULE_2_11, MODULE_2_5], ids=["get_args", "2.5-harness"])
def test_the_harness_draws_the_same_inputs_whatever_the_generator_did_before(tmp_path, text):
    first = _first_output(tmp_path, "a", text)
    torch.manual_seed(1234)
    torch.rand(77)
    second = _first_output(tmp_path, "b", text)
    assert first == second
    assert len(set(first)) > 100  # random data, not zeros: the seed is what makes them equal


def test_a_fresh_process_draws_the_same_inputs(tmp_path):
    from inductor_bench.runner.harness_inputs import harness_args
    from inductor_bench.runner.profile import load_module

    path = _write(tmp_path, "m", MODULE_2_11)
    here = [t.sum().item() for t in harness_args(load_module(path))]
    code = ("import sys, torch; from inductor_bench.runner.profile import load_module; "
            "from inductor_bench.runner.harness_inputs import harness_args; "
            "print(repr([t.sum().item() for t in harness_args(load_module(sys.argv[1]))]))")
    out = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True,
                         timeout=120, check=True)
    assert eval(out.stdout.strip()) == here
    unseeded = [t.sum().item() for t in load_module(path).get_args()]
    assert unseeded != here  # without the seed the draw differs
