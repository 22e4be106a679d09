"""Dynamic shapes: the sizes a module's harness holds resolve its symbols, so its buffers'
shapes and the FLOPs and bytes of its extern calls are those of the measured run, and the
report says which sizes were measured.

The modules are real: ``tests/fixtures/dynamic/record.py`` compiled a two-layer MLP's training
step with ``torch.compile(dynamic=True)`` on CPU with torch 2.5.1, 2.13.0 and 2.14.1 on
2026-11-27, first called with a batch of 24 (the symbol: ``s0`` in 2.5, ``s77`` since)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench.core.diff import diff_results
from inductor_bench.core.graph_work import call_work
from inductor_bench.core.modparse import parse_module
from inductor_bench.core.module_calls import module_calls
from inductor_bench.core.results import BreakdownResult, GraphResult
from inductor_bench.core.symbols import (
    dynamic_sizes,
    eval_shape,
    eval_size,
    free_symbols,
    shapes_at,
    sizes,
)
from inductor_bench.render.breakdown import render_breakdown

FIXTURES = Path(__file__).parent / "fixtures" / "dynamic"
VERSIONS = ["2.5.1", "2.13.0", "2.14.1"]
BATCH = 24  # record.py's first call
SYMBOL = {"2.5.1": "s0", "2.13.0": "s77", "2.14.1": "s77"}


def module(version: str, role: str) -> str:
    return (FIXTURES / f"{version}-{role}.py").read_text()


@pytest.mark.parametrize("expr, value", [
    ("8", 8), ("256*s77", 2048), ("(s77 + 1) // 2", 4), ("-1 + s77", 7), ("max(1, s77 - 10)", 1),
    ("s77 % 3", 2), ("2**s77", 256),
])
def test_size_expressions(expr, value):
    assert eval_size(expr, {"s77": 8}) == value


@pytest.mark.parametrize("expr", ["s1", "buf0", "x.shape[0]", "True", "8.0", "f(s77)", "2**s77", "'a'", "s77 /"])
def test_what_is_not_a_size_is_none(expr):
    assert eval_size(expr, {"s77": 100}) is None


def test_shapes_at_the_sizes():
    env = {"s77": 8}
    assert eval_shape("(s77, 128)", env) == (8, 128)
    assert eval_shape("[64, 2*s77]", env) == (64, 16)
    assert eval_shape("(512, )", env) == (512,)
    assert eval_shape("(s5, 128)", env) is None


def test_a_call_sites_shapes_are_shown_at_the_sizes_profiled():
    shapes = ["s77x16x32x32", "10xs77", "16", "", "2*s77x8", "s5x3"]
    assert shapes_at(shapes, {"s77": 32}) == ["32x16x32x32", "10x32", "16", "", "64x8", "s5x3"]
    assert shapes_at(shapes, {}) == shapes


def test_a_name_two_harnesses_disagree_on_is_left_out():
    text = "def a():\n    arg0_1 = 8\n    s0 = arg0_1\n\ndef b():\n    arg0_1 = 9\n    n = 3\n"
    assert sizes(text) == {"n": 3}
    assert free_symbols(text) == ["s0"]


def test_a_triple_quoted_kernel_harness_does_not_count():
    text = "    s0 = arg0_1\n    k = '''\n    arg0_1 = 99\n'''\n    arg0_1 = 24\n"
    assert dynamic_sizes(text) == {"s0": 24}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("role", ["forward", "backward"])
def test_each_recorded_module_is_measured_at_its_first_batch(version, role):
    assert dynamic_sizes(module(version, role)) == {SYMBOL[version]: BATCH}


def test_a_static_module_has_no_dynamic_sizes():
    static = sorted((Path(__file__).parent / "fixtures" / "cpu_mlp_train").rglob("module.py"))
    assert len(static) == 2  # the recorded forward and backward of models/mlp.py
    assert [dynamic_sizes(p.read_text()) for p in static] == [{}, {}]


def _gemm_flops(version: str, role: str) -> list[float | None]:
    text = module(version, role)
    return [w.flops for c, w in call_work(parse_module(text), text) if c.extern]


@pytest.mark.parametrize("version", VERSIONS)
def test_gemm_flops_at_the_measured_batch(version):
    b = BATCH
    # forward: x(b,128)·W1ᵀ(128,256) and relu(b,256)·W2ᵀ(256,64)
    assert _gemm_flops(version, "forward") == [2.0 * b * 256 * 128, 2.0 * b * 64 * 256]
    # backward (torch 2.5 orders the two gradients of the second layer the other way round):
    # dY(b,64)·W2(64,256), dYᵀ(64,b)·relu(b,256), dHᵀ(256,b)·x(b,128)
    flops = _gemm_flops(version, "backward")
    assert sorted(flops) == sorted([2.0 * b * 256 * 64, 2.0 * 64 * 256 * b, 2.0 * 256 * 128 * b])


@pytest.mark.parametrize("version", VERSIONS)
def test_every_buffer_of_every_call_has_its_shape(version):
    for role in ("forward", "backward"):
        text = module(version, role)
        for c in module_calls(text, parse_module(text)):
            tensors = [t for t in c.tensors if t is not None]
            assert tensors and all(t.shape is not None for t in tensors), (role, c.name)


@pytest.mark.parametrize("version", VERSIONS)
def test_generated_kernel_bytes_at_the_measured_batch(version):
    text = module(version, "forward")
    relu = [w for c, w in call_work(parse_module(text), text) if "relu" in c.name and not c.extern]
    # the ReLU in place on the first layer's (b, 256) float32 output: read and written
    assert [w.bytes for w in relu] == [2.0 * BATCH * 256 * 4]


def test_the_report_and_json_say_which_sizes_were_measured():
    r = BreakdownResult(model="m.py", mode="default", device="cpu", train=False, dtype="float32",
                        graphs=[
                            GraphResult(id="0-inference", role="inference", iterations=10, wall_ms=1.0,
                                        wall_samples_ms=[1.0] * 10),
                            GraphResult(id="0.1-inference", role="inference", iterations=10, wall_ms=1.0,
                                        wall_samples_ms=[1.0] * 10, sizes={"s77": 24, "s27": 3}),
                        ])
    text = render_breakdown(r)
    assert "dynamic shapes: profiled 0.1-inference at s77=24, s27=3: the size hints" in text
    back = BreakdownResult.from_dict(r.to_dict())
    assert [g.sizes for g in back.graphs] == [{}, {"s77": 24, "s27": 3}]
    assert "sizes" not in r.to_dict()["graphs"][0]
    assert "counts every call of a dynamic graph" not in text  # calls not counted
    r.script = True
    r.graphs[0].calls, r.graphs[1].calls = 1.0, 3.0  # the dynamic graph ran 3 times, at other sizes too
    assert ("the all-graphs row counts every call of a dynamic graph at the size profiled: 0.1-inference 3 "
            "calls") in render_breakdown(r)


DYNAMIC_SCRIPT = '''
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 64))
f = torch.compile(model, dynamic=True)
with torch.no_grad():
    for batch in (24, 40, 40, 7):
        f(torch.randn(batch, 128))
'''


@pytest.mark.slow
@pytest.mark.e2e
def test_a_dynamic_script_end_to_end(tmp_path):
    """A script compiled with dynamic shapes, in a cold cache, that calls the graph at batches
    of 24 (the call that compiled it: its harness's size), 40 twice and 7: it is profiled at
    40, the size most calls ran at, on the inputs the first call at 40 had, and the GEMMs'
    FLOPs are counted at that batch."""
    script = tmp_path / "dyn.py"
    script.write_text(DYNAMIC_SCRIPT)
    p = breakdown(script, tmp_path, "run", "--fresh-cache")
    assert p.returncode == 0, p.stderr
    r = json.loads((tmp_path / "run.json").read_text())
    (g,) = r["graphs"]
    ((symbol, batch),) = g["sizes"].items()
    assert (batch, g["size_hints"]) == (40, {symbol: 24})
    assert g["call_sizes"] == [{"sizes": {symbol: b}, "calls": n} for b, n in ((24, 1), (40, 2), (7, 1))]
    report = (tmp_path / "run" / "report.txt").read_text()
    assert (f"dynamic shapes: profiled {g['id']} at {symbol}=40 (2 of its 4 calls; its harness's: {symbol}=24): "
            "the sizes most of its calls ran at") in report
    assert f"calls by size: {g['id']} {symbol}=24 x1, {symbol}=40 x2, {symbol}=7 x1" in report
    assert "40x128" in report and f"{symbol}x128" not in report  # the GEMM's input at the size profiled
    # every input the model's: the four weights from the first call, x from the first call at 40
    assert (tmp_path / "run" / Path(g["module"]).parent / f"inputs.{symbol}-40.pt").exists()
    assert g["first_call_inputs"][:3] == [5, 0, 5]
    (gemm,) = [k for k in g["kernels"] if k["name"] == "aten::addmm"]
    assert gemm["flops"] == 2.0 * 40 * 256 * 128 + 2.0 * 40 * 64 * 256
    # the same graph (from the cache now) profiled at a size of the user's choosing
    p = breakdown(script, tmp_path, "sized", "--size", f"{symbol}=7")
    assert p.returncode == 0, p.stderr
    (g,) = json.loads((tmp_path / "sized.json").read_text())["graphs"]
    assert (g["sizes"], g["size_hints"]) == ({symbol: 7}, {symbol: 24})
    assert (f"dynamic shapes: profiled {g['id']} at {symbol}=7 (1 of its 4 calls; its harness's: {symbol}=24), "
            "as --size asked") in (tmp_path / "sized" / "report.txt").read_text()
    (gemm,) = [k for k in g["kernels"] if k["name"] == "aten::addmm"]
    assert gemm["flops"] == 2.0 * 7 * 256 * 128 + 2.0 * 7 * 64 * 256
    # a symbol no graph has: one line, exit 2, nothing profiled
    p = breakdown(script, tmp_path, "unknown", "--size", "s12345=40")
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("inductor-bench: error:")]
    assert p.returncode == 2 and errors == [
        f"inductor-bench: error: --size s12345: no compiled graph has such a size symbol (the graphs' size "
        f"symbols: {g['id']}: {symbol})"], p.stderr


def breakdown(script: Path, tmp_path: Path, name: str, *more: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "inductor_bench.cli", "breakdown", str(script), "--device", "cpu",
         "--iterations", "10", "--windows", "1", "--processes", "1", "--out", str(tmp_path / name),
         "--json", str(tmp_path / f"{name}.json"), *more],
        capture_output=True, text=True, timeout=600)


def _run(sizes: dict[str, int]) -> BreakdownResult:
    g = GraphResult(id="0-forward", role="forward", iterations=10, wall_ms=1.0, wall_samples_ms=[1.0] * 10,
                    sizes=sizes)
    return BreakdownResult(model="m.py", graphs=[g])


def test_diff_notes_a_graph_profiled_at_other_sizes():
    notes = diff_results(_run({"s0": 24}), _run({"s77": 40})).warnings
    assert "0-forward was profiled at other sizes: base s0=24, head s77=40 (dynamic shapes: " \
        "the sizes most of its calls ran at, or its module's size hints)" in notes
    # the same sizes under another torch's symbol name, and static shapes on both sides: no note
    assert not [n for n in diff_results(_run({"s0": 24}), _run({"s77": 24})).warnings if "sizes" in n]
    assert not [n for n in diff_results(_run({}), _run({})).warnings if "sizes" in n]
    static = diff_results(_run({}), _run({"s77": 24})).warnings
    assert "0-forward was profiled at other sizes: base static shapes, head s77=24 (dynamic shapes: " \
        "the sizes most of its calls ran at, or its module's size hints)" in static


# -- breakdown --size: the inputs at other sizes ------------------------------------------------

def test_resize_works_out_every_input_that_depends_on_the_size():
    from inductor_bench.core.resize import call_inputs, resize

    for version in VERSIONS:
        sym = SYMBOL[version]
        text = module(version, "backward")
        sizes, changed = resize(text, {sym: 64, "s999": 3})  # a symbol it does not have: ignored
        assert sizes == {sym: 64}
        by_name = {r.name: r for r in changed.values()}
        # the batch input, and every (batch, n) tensor: the input x, ReLU's output, the softmax
        # output and the incoming gradient, each at (64, n), row-major
        assert by_name["primals_3"].value == 64
        shapes = sorted((r.shape, r.stride) for r in changed.values() if r.shape is not None)
        assert shapes == [((64, 64), (64, 1)), ((64, 64), (64, 1)), ((64, 128), (128, 1)), ((64, 256), (256, 1))]
        assert set(by_name) <= set(call_inputs(text))


def test_resize_refuses_what_it_cannot_build():
    from inductor_bench.core.resize import ResizeError, resize, unknown_sizes

    text = module("2.13.0", "forward")
    with pytest.raises(ResizeError, match="cannot be negative"):
        resize(text, {"s77": -1})
    aliased = text + "\n    primals_4 = torch.as_strided(storage, (24, 128), (128, 1))\n"
    with pytest.raises(ResizeError, match="shares its storage"):
        resize(aliased, {"s77": 64})
    assert unknown_sizes({"s77": 64}, {"0-forward": text}) is None
    assert unknown_sizes({"s5": 64}, {"0-forward": text}) == (
        "--size s5: no compiled graph has such a size symbol (the graphs' size symbols: 0-forward: s77)")
    static = (Path(__file__).parent / "fixtures" / "cpu_mlp_train" / "0-forward" / "module.py").read_text()
    assert unknown_sizes({"s77": 64}, {"0-forward": static}).endswith("(no graph of this run has dynamic shapes)")


def test_counts_follow_the_sizes_asked_for():
    text = module("2.13.0", "forward")
    counted = [w.flops for c, w in call_work(parse_module(text), text, {"s77": 64}) if c.extern]
    assert counted == [2.0 * 64 * 256 * 128, 2.0 * 64 * 64 * 256]


@pytest.mark.e2e
def test_the_real_module_runs_at_the_sizes_asked_for():
    """The recorded torch 2.13 forward loaded as the profiling worker loads it: its inputs
    drawn at s77=64, and its own call() (whose asserts check every input's size) runs on them."""
    import torch

    if not torch.__version__.startswith("2.13"):
        pytest.skip("the module was compiled by torch 2.13")
    from inductor_bench.runner.harness_inputs import module_args
    from inductor_bench.runner.profile import load_module

    mod = load_module(str(FIXTURES / "2.13.0-forward.py"))
    args, _ = module_args(mod, {"s77": 64})
    assert args[2] == 64 and tuple(args[3].shape) == (64, 128) and tuple(args[3].stride()) == (128, 1)
    (out, *_) = mod.call(list(args))
    assert tuple(out.shape) == (64, 64)
    assert module_args(mod, {"s5": 64})[0][2] == BATCH  # not its symbol: the harness's own


def test_torch_2_5s_harness_inputs_are_read_from_its_closure():
    """Before torch 2.11 the harness builds its inputs inside benchmark_compiled_module and hands
    print_performance ``lambda: call([...])``: its closure holds them by name (synthetic
    stand-in, written as tests/fixtures/dynamic/2.5.1-forward.py writes it)."""
    from inductor_bench.core.errors import WorkloadError
    from inductor_bench.runner.harness_inputs import closure_args

    def benchmark_compiled_module():
        primals_4, primals_3 = "x(24, 128)", 24
        return lambda: call([primals_3, primals_4])  # noqa: F821  (never called)

    text = module("2.5.1", "forward").replace(
        "primals_1, primals_2, primals_3, primals_4, primals_5, primals_6 = args", "primals_3, primals_4 = args")
    assert closure_args(benchmark_compiled_module(), text) == [24, "x(24, 128)"]
    with pytest.raises(WorkloadError, match="does not hand call"):
        closure_args(benchmark_compiled_module(), module("2.5.1", "forward"))


def test_a_sized_graph_keeps_its_generated_kernels_counts(tmp_path):
    """At --size's sizes the generated kernels are counted from their buffers (Inductor's own
    kernel_num_gb is at the hint), the extern calls from their shapes: none goes uncounted."""
    from inductor_bench.core.graph_work import count_work
    from inductor_bench.core.results import KernelStat

    text = module("2.13.0", "forward")
    names = ["aten::addmm", "cpp_fused_relu_0", "cpp_fused__softmax_1"]
    g = GraphResult(id="0-forward", role="forward", kernels=[
        KernelStat(name=n, category="extern_gemm", calls=1, ms=1.0) for n in names])
    count_work(g, parse_module(text), text, tmp_path, {"s77": 64})
    counted = {k.name: k.bytes for k in g.kernels}
    # the ReLU in place on the first layer's (64, 256) float32 output: read and written
    assert counted["cpp_fused_relu_0"] == 2.0 * 64 * 256 * 4
    assert all(b is not None for b in counted.values()), counted
