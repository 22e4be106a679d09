"""``compare model.py --names x``: one model file's name is the comparison's title, its columns
stay the plain modes (``eager``, ``default``) in their plain directories; it had labelled the
columns ``x:eager`` in directories ``x-eager`` while the title kept the file's name and
``models`` stayed empty, as with no name at all (synthetic: the mode runner is a stand-in that
times eager and is interrupted in default's compile)."""

from __future__ import annotations

from inductor_bench.core.compare_modes import parse_modes
from inductor_bench.core.rundir import load_compare
from inductor_bench.core.workload import WorkloadOptions
from inductor_bench.render.compare import render_compare
from inductor_bench.runner.compare import run_compare

from .conftest import MODELS
from .test_compare_interrupted import _eager_then_ctrl_c


def test_one_file_named_is_titled_by_the_name_with_plain_columns(tmp_path, monkeypatch):
    monkeypatch.setattr("inductor_bench.runner.compare_columns.run_mode", _eager_then_ctrl_c)
    opts = WorkloadOptions(path=str(MODELS / "mlp.py"), device="cpu")
    _, run_dir, _ = run_compare(opts, parse_modes("default"), out=tmp_path / "cmp", names=["x"])
    r = load_compare(run_dir)
    assert (r.model, r.models, [m.label for m in r.modes]) == ("x", [], ["eager", "default"])
    assert [m.model for m in r.modes] == ["", ""]
    assert r.modes[0].run_dir == str(run_dir / "eager")  # the directory the column was run in
    assert "inductor-bench compare: x: inference, float32, batch 64, on a CPU" in render_compare(r).splitlines()
