"""Compiled modules Inductor writes with its C++ wrapper (``torch._inductor.config.cpp_wrapper =
True``, ``core/cppwrapper.py``, ``core/cpp_buffers.py``).

The fixtures (``tests/fixtures/cppwrapper/<torch>/``, recorded by its ``record.py`` on the
2-core AMD EPYC CPU machine, 2026-12-01, with torch 2.5.1, 2.13.0 and 2.15.0, each in a fresh
cache) are a training step and a frozen inference step of one small model, each compiled twice,
with the C++ wrapper and with the Python one. The Python module is read by the rules every other test checks; the C++ one
must give the same kernels, extern calls, buffers written and counts, and the counts are also
worked out here by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inductor_bench.core.breakdown import op_name
from inductor_bench.core.callsites import parse_calls
from inductor_bench.core.classify import classify
from inductor_bench.core.cppwrapper import is_cpp_wrapper, shim_op
from inductor_bench.core.extern_work import extern_op
from inductor_bench.core.graph_work import call_work
from inductor_bench.core.modparse import is_compiled_module, parse_module
from inductor_bench.core.source_store import AOT_ID, carry_over
from inductor_bench.core.vocab import Role

FIXTURES = Path(__file__).parent / "fixtures" / "cppwrapper"
VERSIONS = ("2.5.1", "2.13.0", "2.15.0")
# the steps recorded, and the role of each graph: a training step's forward and backward, and
# an inference step with its weights frozen (oneDNN's and MKL's packed linears)
ROLES = {"forward": Role.FORWARD, "backward": Role.BACKWARD, "frozen": Role.INFERENCE}


def _read(version: str, wrapper: str, role: str) -> tuple[str, object]:
    text = (FIXTURES / version / f"{wrapper}_{role}.py").read_text()
    return text, parse_module(text)


def _seen(text: str, module) -> dict[str, object]:
    """Everything the tool reads from a module, but the names of its extern calls."""
    return {
        "kernels": sorted((k.name, k.kind, k.heuristic) for k in module.kernels.values()),
        "externs": [(e.aten_ops, e.source_nodes) for e in module.externs],
        "writes": [(c.extern, c.name if not c.extern else None, c.written) for c in parse_calls(text, module)],
        "work": [(c.extern, w.bytes, w.flops, w.compute, w.source) for c, w in call_work(module, text)],
        "device": module.device,
    }


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("version", VERSIONS)
def test_a_cpp_wrapper_module_reads_as_its_python_twin(version, role):
    cpp_text, cpp = _read(version, "cpp", role)
    py_text, py = _read(version, "py", role)
    assert is_cpp_wrapper(cpp_text) and not is_cpp_wrapper(py_text) and is_compiled_module(cpp_text)
    assert _seen(cpp_text, cpp) == _seen(py_text, py)
    assert cpp.kernels and cpp.externs and all(work.bytes for _, work in call_work(cpp, cpp_text))
    # the role is the one thing its text does not say (the compile worker records it)
    assert (cpp.role, py.role) == (Role.UNKNOWN, ROLES[role])


@pytest.mark.parametrize("version", VERSIONS)
def test_the_forwards_extern_calls_are_counted_from_their_shapes(version):
    """By hand: Linear(32, 64) then Linear(64, 8) on a batch of 16, float32 (4 bytes): each addmm
    reads its bias, input and weight and writes its output, 2·M·N·K FLOPs."""
    text, module = _read(version, "cpp", "forward")
    externs = [w for c, w in call_work(module, text) if c.extern]
    assert [(w.bytes, w.flops, w.compute) for w in externs] == [
        ((64 + 16 * 32 + 32 * 64 + 16 * 64) * 4.0, 2.0 * 16 * 32 * 64, "fp32"),
        ((8 + 16 * 64 + 64 * 8 + 16 * 8) * 4.0, 2.0 * 16 * 64 * 8, "fp32"),
    ]
    # how the profiler names each: torch 2.5 calls ATen (aten::addmm), later ones its C shim
    want = "aten::addmm" if version == "2.5.1" else "aoti_torch_cpu_addmm_out"
    assert [op_name(e.callee) for e in module.externs] == [want, want]
    # frozen: torch 2.5 calls MKL's linear through the dispatcher, later ones through its shim
    _, frozen = _read(version, "cpp", "frozen")
    want = "mkl::_mkl_linear" if version == "2.5.1" else "aoti_torch_cpu__mkl_linear"
    assert [op_name(e.callee) for e in frozen.externs] == [want, want]
    assert [classify(op_name(e.callee) or "") for e in frozen.externs] == ["extern_gemm"] * 2


@pytest.mark.parametrize("version", ("2.13.0", "2.15.0"))
def test_each_kernel_records_itself_under_its_graphs_name(version):
    """C++ kernel profiling on: the profiler names a kernel ``graph_<i>_<name>``, and a C shim
    call by the shim's own name; each maps back to what the module defines."""
    text, module = _read(version, "cpp", "backward")
    for k in module.kernels.values():
        (record,) = k.record_names
        assert record.endswith(k.name) and module.kernel_for_record(record) is k
    assert 'RAIIAtenRecordFunctionHandle record_aoti_torch_cpu_mm_out_("aoti_torch_cpu_mm_out"' in text


def test_a_c_shim_is_named_and_classified_by_the_aten_op_it_runs():
    assert shim_op("aoti_torch_cpu_mm_out") == "aten::mm"
    assert shim_op("aoti_torch_cpu_addmm_out") == "aten::addmm"
    assert shim_op("aoti_torch_cuda_convolution") == "aten::convolution"
    assert shim_op("aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu") == (
        "aten::_scaled_dot_product_flash_attention_for_cpu")
    assert shim_op("aoti_torch_empty_strided") is None and shim_op("aten::mm") is None
    assert [classify(n) for n in ("aoti_torch_cpu_mm_out", "aoti_torch_cpu_bmm_out", "aoti_torch_cpu_convolution",
                                  "aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu",
                                  "aoti_torch_cpu_cumsum")] == [
        "extern_gemm", "extern_gemm", "extern_conv", "extern_attention", "extern_other"]
    assert (op_name("aoti_torch_cpu_mm_out"), extern_op("aoti_torch_cpu_mm_out")) == ("aoti_torch_cpu_mm_out", "mm")
    # on a device timeline, a library kernel a shim launched is the shim's op's (synthetic names)
    assert classify("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32", None,
                    ("aoti_torch_cuda_mm_out",)) == "extern_gemm"
    assert classify("void at::native::vectorized_elementwise_kernel<4>", None,
                    ("aoti_torch_cuda_convolution",)) == "extern_conv"


def test_the_graphs_name_is_kept_with_its_record_and_carried_to_a_cache_hit():
    """Synthetic record: the name AOTAutograd gave the graph (its role) survives the carrying
    over of a stored record to a later compile that hit Inductor's cache."""
    dynamo = {"x": {"op": "relu", "frame": ["m.py", 3, "f", "x.relu()"]}}
    stored = {"nodes": {"relu": {"op": "aten.relu.default", "frame": ["m.py", 3, "f", "x.relu()"]}},
              "ops": [], "dynamo": dynamo, AOT_ID: "0_backward"}
    assert carry_over(stored, dynamo)[AOT_ID] == "0_backward"
    assert AOT_ID not in carry_over({**stored, AOT_ID: None}, dynamo)


TRAIN_SCRIPT = '''
import torch
import torch._inductor.config
from torch import nn

torch._inductor.config.cpp_wrapper = True
torch.manual_seed(0)
model = torch.compile(nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.LayerNorm(64), nn.Linear(64, 8)))
x = torch.randn(16, 32)
for _ in range(2):
    model(x).sum().backward()
'''


@pytest.mark.slow
@pytest.mark.e2e
def test_a_cpp_wrapper_training_script_is_broken_down_cold_and_from_the_cache(tmp_path, monkeypatch):
    """A real script compiled with the C++ wrapper, twice in one cache (the second run hits it):
    each run names the forward and the backward, times every kernel and C shim under its own
    row and category, and counts the GEMMs' work as the fixtures' hand count says."""
    from .test_dynamic_shapes import breakdown

    torch = pytest.importorskip("torch")
    torch_25 = torch.__version__.startswith("2.5.")  # it calls ATen, not the op's C shim
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    script = tmp_path / "cpp_train.py"
    script.write_text(TRAIN_SCRIPT)
    for name in ("cold", "warm"):
        p = breakdown(script, tmp_path, name)
        assert p.returncode == 0, p.stderr
        saved = json.loads((tmp_path / f"{name}.json").read_text())
        graphs = {g["id"]: g for g in saved["graphs"]}
        assert sorted(graphs) == ["0-backward", "0-forward"]
        rows = {k["name"]: k for g in graphs.values() for k in g["kernels"]}
        gemms = sorted(n for n, k in rows.items() if k["category"] == "extern_gemm")
        shims = ["aoti_torch_cpu_addmm_out", "aoti_torch_cpu_mm_out"]
        assert gemms == (["aten::addmm", "aten::mm"] if torch_25 else shims)
        assert {k["category"] for n, k in rows.items() if n not in gemms} == {"cpp_reduction"}
        assert rows[gemms[0]]["flops"] == 2.0 * 16 * 32 * 64 + 2.0 * 16 * 64 * 8  # the addmms
        assert all(k["ms"] > 0 for k in rows.values())
    cache = saved["extras"]["compile_cache"]
    assert cache["fx_hits"] == 2 and cache["fx_misses"] == 0  # the warm run hit
