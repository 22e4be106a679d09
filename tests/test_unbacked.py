"""A graph with a data-dependent size (``u0 = buf1.size(0)`` after a captured ``nonzero``) is
counted at the value that size took in the call profiled: the worker reads it as the graph runs
(runner/unbacked.py), and the bytes, FLOPs and inputs are read at it (core/symbols.py). The
modules: ``tests/fixtures/unbacked/<torch>/nonzero_inference.py`` (recorded by its record.py
with torch 2.5.1, 2.13.0 and 2.15.0 on this project's CPU machine, 2026-12-01), and
``cuda_nonzero_inference.py`` for CUDA (torch 2.14.1 and 2.15.0, generated without a GPU)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from inductor_bench.core.graph_work import call_work
from inductor_bench.core.modparse import parse_module

from .conftest import MODELS  # noqa: F401  (the suite's shared setup)

FIXTURES = Path(__file__).parent / "fixtures" / "unbacked"
VERSIONS = ("2.5.1", "2.13.0", "2.15.0")
ROWS, COLS, OUT = 512, 64, 64  # x is 512 x 64, w 64 x 64; fp32


def _text(version: str) -> str:
    return (FIXTURES / version / "nonzero_inference.py").read_text()


def _work(version: str, at: dict[str, int] | None) -> dict[str, tuple[float | None, float | None]]:
    text = _text(version)
    return {c.name: (w.bytes, w.flops) for c, w in call_work(parse_module(text), text, at)}


@pytest.mark.parametrize("version", VERSIONS)
def test_the_module_reads_an_unbacked_size_and_its_extern_calls_are_counted_at_its_value(version):
    from inductor_bench.runner.unbacked import has_unbacked

    assert has_unbacked(_text(version))
    u0 = 200
    unknown, known = _work(version, None), _work(version, {"u0": u0})
    assert unknown["extern_kernels.mm"] == (None, None)  # a size the text cannot give: not guessed
    # the matmul of the u0 rows picked: reads u0 x 64 and 64 x 64, writes u0 x 64, 2·M·N·K FLOPs
    assert known["extern_kernels.mm"] == ((u0 * COLS + COLS * OUT + u0 * OUT) * 4, 2 * u0 * COLS * OUT)
    if version == "2.5.1":  # its module asserts no shape of nonzero's result: that call stays unknown
        assert known["torch.ops.aten.nonzero.default"] == (None, None)
        return
    # nonzero reads the 512 booleans and writes u0 int64 indices; the gather reads the u0 indices
    # and u0 rows of x, and writes them
    assert known["torch.ops.aten.nonzero.default"] == (ROWS + 8 * u0, None)
    assert known["cpp_fused_index_squeeze_1"] == (8 * u0 + 2 * u0 * COLS * 4, None)


CUDA_VERSIONS = ("2.14.1", "2.15.0")


@pytest.mark.parametrize("version", CUDA_VERSIONS)
def test_a_cuda_module_generated_without_a_gpu_is_counted_at_its_unbacked_size(version):
    """The same graph for CUDA (``cuda_nonzero_inference.py``, generated without a GPU by
    scripts/record_cuda_codegen.py, config ``unbacked_infer_nocg``): ``u0`` is read inside
    ``Runner.call``'s device guard; its Triton gather's ``xnumel = 64*u0`` and the reduction's
    ``u0`` argument are read at the value, as are the matmul's operands."""
    from inductor_bench.runner.unbacked import has_unbacked

    text = (FIXTURES / version / "cuda_nonzero_inference.py").read_text()
    assert has_unbacked(text)
    u0 = 200
    module = parse_module(text)
    unknown = {c.name: (w.bytes, w.flops) for c, w in call_work(module, text, None)}
    known = {c.name: (w.bytes, w.flops) for c, w in call_work(module, text, {"u0": u0})}
    assert unknown["extern_kernels.mm"] == unknown["triton_poi_fused_index_squeeze_1"] == (None, None)
    assert known["extern_kernels.mm"] == ((u0 * COLS + COLS * OUT + u0 * OUT) * 4, 2 * u0 * COLS * OUT)
    assert known["torch.ops.aten.nonzero.default"] == (ROWS + 8 * u0, None)
    assert known["triton_poi_fused_index_squeeze_1"] == (8 * u0 + 2 * u0 * COLS * 4, None)
    # relu of the u0 x 64 product summed into the 64 outputs (read and written), plus x.sum()'s scalar
    assert known["triton_red_fused_add_relu_sum_4"] == (u0 * OUT * 4 + 4 + 2 * OUT * 4, None)


def test_a_module_without_a_data_dependent_size_has_none():
    from inductor_bench.runner.unbacked import has_unbacked

    cpu_module = Path(__file__).parent / "fixtures" / "cppwrapper" / "2.13.0" / "py_forward.py"
    assert not has_unbacked(cpu_module.read_text())


def _installed() -> str:
    torch = pytest.importorskip("torch")
    return torch.__version__.split("+")[0]


def test_the_worker_reads_the_value_the_call_gave_it(tmp_path):
    """The compiled module of the installed torch, called on its harness's seeded inputs: u0 is
    the number of rows whose first column is positive, counted here with torch on the same x."""
    version = _installed()
    if version not in VERSIONS:
        pytest.skip(f"no nonzero module recorded for torch {version}")
    from inductor_bench.runner.harness_inputs import closure_args, harness, load_module
    from inductor_bench.runner.unbacked import values

    path = tmp_path / "module.py"
    shutil.copy(FIXTURES / version / "nonzero_inference.py", path)
    call = harness(load_module(str(path)))
    # the inputs the call gets: get_args()'s, or before torch 2.11 those its harness's closure holds
    args = call.args if call.args is not None else closure_args(call.call, path.read_text())
    x = next(a for a in args if tuple(a.shape) == (ROWS, COLS))
    expected = int((x[:, 0] > 0).sum())
    assert 0 < expected < ROWS
    assert values(call, str(path)) == {"u0": expected}
    assert values(lambda: None, str(path)) == {}  # nothing ran: nothing read


SCRIPT = """
import torch
torch._dynamo.config.capture_dynamic_output_shape_ops = True

@torch.compile
def picked(x, w):
    idx = torch.nonzero(x[:, 0] > 0).squeeze(1)
    return (x[idx] @ w).relu().sum(0) + x.sum()

w = torch.randn(64, 64)
for _ in range(2):
    picked(torch.randn(512, 64), w)
"""


@pytest.mark.slow
@pytest.mark.e2e
def test_breakdown_counts_a_data_dependent_graph_at_the_size_its_first_call_had(tmp_path):
    """End to end: the value the report gives u0 is the count of the model's first call's own x
    (the graph's saved inputs), and the matmul's FLOPs are 2·u0·64·64."""
    torch = pytest.importorskip("torch")
    from .test_cli_errors import cli

    (tmp_path / "picked.py").write_text(SCRIPT)
    out = tmp_path / "run"
    p = cli("breakdown", str(tmp_path / "picked.py"), "--out", str(out), "--iterations", "5", "--windows", "1",
            "--processes", "1", "--json", str(tmp_path / "r.json"))
    assert p.returncode == 0, p.stderr[-2000:]
    (gdir,) = (out / "graphs").iterdir()
    x = next(t for t in torch.load(gdir / "inputs.pt")["inputs"].values() if tuple(t.shape) == (ROWS, COLS))
    u0 = int((x[:, 0] > 0).sum())
    assert f"data-dependent sizes, as the call profiled had them on its inputs (its bytes, FLOPs and extern " \
           f"calls' inputs are read at them): {gdir.name} u0={u0}" in p.stdout
    assert f"{u0}x64, 64x64" in p.stdout  # the matmul's inputs, at that size
    (g,) = json.loads((tmp_path / "r.json").read_text())["graphs"]
    assert g["unbacked"] == {"u0": u0}
    (mm,) = [k for k in g["kernels"] if k["name"].startswith("aten::mm")]
    assert mm["flops"] == 2 * u0 * COLS * OUT
