"""The torch-version differences (inductor_bench/runner/compat.py): every row points at a line
of code that still handles it and at a test that exists, docs/version-matrix.md shows the same
table, and the older sides that no other test covers are tested here."""

from __future__ import annotations

import ast
import json
import logging
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from inductor_bench.core.errors import WorkloadError
from inductor_bench.runner import compat

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "inductor_bench"


@pytest.mark.parametrize("d", compat.DIFFERENCES, ids=lambda d: f"{d.since}-{d.where}")
def test_each_difference_is_still_handled_where_it_says(d):
    assert d.marker in (PACKAGE / d.where).read_text(), f"{d.where} no longer holds {d.marker!r}"


@pytest.mark.parametrize("d", compat.DIFFERENCES, ids=lambda d: f"{d.since}-{d.where}")
def test_each_difference_names_a_test_that_exists(d):
    path, name = d.test.split("::")
    tree = ast.parse((ROOT / path).read_text())
    assert name in {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}, d.test


def test_the_differences_are_in_version_order():
    assert [compat.parse(d.since) for d in compat.DIFFERENCES] == sorted(
        compat.parse(d.since) for d in compat.DIFFERENCES)


def test_the_docs_show_the_same_table():
    assert compat.markdown() in (ROOT / "docs" / "version-matrix.md").read_text()


@pytest.mark.parametrize("version, expected", [
    ("2.5.1+cu124", (2, 5)), ("2.13.0", (2, 13)), ("2.14.1+cpu", (2, 14)), ("2.15.0+cu132", (2, 15)),
    ("3.0.0a0+git", (3, 0)),
])
def test_parse(version, expected):
    assert compat.parse(version) == expected


def test_a_torch_older_than_2_5_is_refused_in_one_line_naming_it():
    err = compat.too_old("2.4.1+cu121")
    assert isinstance(err, WorkloadError)
    assert str(err) == ("torch 2.4.1+cu121 is older than 2.5, the oldest torch inductor-bench "
                        "supports: install torch>=2.5")
    assert compat.too_old("2.5.0") is None and compat.too_old("2.15.0") is None


# -- the older sides -----------------------------------------------------------------------------


def test_a_module_record_without_file_path_is_found():
    from inductor_bench.runner.trace_log import compiled_module

    old = logging.LogRecord("torch.__trace", logging.DEBUG, __file__, 1, "", None, None)
    old.metadata = {"inductor_output_code": {"filename": "/tmp/x/cabc.py"}}  # torch 2.5 to 2.9
    new = logging.LogRecord("torch.__trace", logging.DEBUG, __file__, 1, "", None, None)
    new.metadata = {"inductor_output_code": {"filename": "cabc.py", "file_path": "/tmp/x/cabc.py"}}
    assert compiled_module(old)[0] == compiled_module(new)[0] == "/tmp/x/cabc.py"


def test_cudagraph_skips_on_the_older_perf_hints_logger_are_read(tmp_path):
    from inductor_bench.runner import cudagraph_log

    log = tmp_path / "modules.jsonl"
    modules = [{"path": "/x/fwd.py", "order": 0}]
    rec = cudagraph_log.attach(log, modules)
    try:  # torch 2.5 to 2.10 log the skip through the perf_hints artifact logger
        logging.getLogger("torch._inductor.cudagraph_utils.__perf_hints").warning(
            "skipping cudagraphs due to %s", "cpu device (primals_1)")
    finally:
        for name in cudagraph_log.LOGGERS:
            logging.getLogger(name).removeHandler(rec)
    assert [json.loads(line) for line in log.read_text().splitlines()] == [
        {"cudagraph_skip": "skipping cudagraphs due to cpu device (primals_1)", "module_order": 0}]


def test_list_size_hints_of_torch_2_5_render():
    from inductor_bench.render.kernel import _sizes

    assert _sizes([8, 65536]) == "8 x 65536"  # torch 2.5
    assert _sizes({"x": 8, "r0_": 65536}) == "x=8, r0_=65536"  # 2.6 on


def test_settings_a_torch_lacks_are_left_out(monkeypatch):
    from inductor_bench.runner import torch_settings

    # a torch with cuDNN flags but none of the newer precision API (fp32_precision, 2.9)
    fake = SimpleNamespace(backends=SimpleNamespace(cudnn=SimpleNamespace(
        enabled=True, allow_tf32=True, benchmark=False, deterministic=False)))
    monkeypatch.setitem(sys.modules, "torch", fake)
    assert torch_settings.snapshot() == {"backends.cudnn.enabled": True, "backends.cudnn.allow_tf32": True,
                                         "backends.cudnn.benchmark": False,
                                         "backends.cudnn.deterministic": False}
    assert torch_settings.apply({"backends.cudnn.benchmark": True, "backends.fp32_precision": "tf32"}) == []
    assert fake.backends.cudnn.benchmark is True and not hasattr(fake.backends, "fp32_precision")


# The decorator of a persistent reduction as Inductor writes it (torch 2.15.0, a Triton kernel
# generated on CPU with cpu_backend="triton"), cut to the keys that matter here; 2.14 wrote set().
KERNEL_2_15 = """
import triton
import triton.language as tl
from torch._inductor.runtime import triton_helpers, triton_heuristics

@triton_heuristics.persistent_reduction(
    size_hints={'x': 32, 'r0_': 128},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_out_ptr0': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32'}},
    inductor_meta={'grid_type': 'Grid1D', 'kernel_name': 'triton_per_fused_gelu_native_layer_norm_0', 'autotune_hints': (), 'kernel_num_gb': 5.0688e-05, 'kernel_flop': 0, 'max_autotune': False}
)
@triton.jit
def triton_per_fused_gelu_native_layer_norm_0(in_out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr):
    pass
"""


def test_autotune_hints_as_a_set_or_a_tuple_read_alike():
    from inductor_bench.core.kernelfile import parse_kernel_source

    new = parse_kernel_source(KERNEL_2_15)
    old = parse_kernel_source(KERNEL_2_15.replace("'autotune_hints': ()", "'autotune_hints': set()"))
    assert new.inductor_meta["autotune_hints"] == () and old.inductor_meta["autotune_hints"] == set()
    assert new.to_dict() == old.to_dict()  # the same kernel, the same record
    assert new.name == "triton_per_fused_gelu_native_layer_norm_0" and new.category == "triton_persistent_reduction"
