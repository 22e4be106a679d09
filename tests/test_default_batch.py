"""Without ``--batch-size`` a factory runs at its own default batch size, which the run records
and its header shows where the file writes it (``core/workload.default_batch_size``)."""

from __future__ import annotations

import json

import pytest

from inductor_bench.core.workload import WorkloadOptions, default_batch_size
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.runner.pipeline import new_result

from .conftest import MODELS


@pytest.mark.parametrize(("signature", "default"), [
    ("device, dtype, batch_size: int = 64", 64),
    ("device, batch_size=8, *, dtype=None", 8),
    ("device, dtype, *, batch_size: int = 16", 16),
    ("batch_size=4, /", 4),
    ("device, dtype, batch_size", None),  # no default: the tool would have to pass one
    ("device, dtype, batch_size=None", None),
    ("device, dtype, batch_size=BATCH", None),  # only running the file would tell
    ("device, dtype, batch_size=True", None),
    ("device, dtype, batch_size=0", None),
    ("device, dtype, size=32", None),
    ("device, dtype, **kwargs", None),
])
def test_the_factorys_default_batch_size_as_the_file_writes_it(tmp_path, signature, default):
    f = tmp_path / "m.py"
    f.write_text(f"BATCH = 2\n\ndef make_workload({signature}):\n    raise NotImplementedError\n")
    assert default_batch_size(f) == default


def test_a_script_has_no_default_batch_size(tmp_path):
    f = tmp_path / "s.py"
    f.write_text("def main(batch_size=64):\n    pass\n\nmain()\n")
    assert default_batch_size(f) is None


def test_a_run_without_batch_size_records_and_shows_the_factorys_default(tmp_path):
    mlp = str(MODELS / "mlp.py")  # make_workload(device, dtype, batch_size: int = 64)
    default = new_result(WorkloadOptions(mlp).validate(), tmp_path)
    asked = new_result(WorkloadOptions(mlp, batch_size=8).validate(), tmp_path)
    assert (default.batch_size, asked.batch_size) == (64, 8)
    assert json.loads(default.to_json())["batch_size"] == 64
    header = render_breakdown(default).splitlines()[3]
    assert header == "inference · mode default · float32 · batch 64"
