"""A compare stopped by Ctrl-C (synthetic: the mode runner is a stand-in that times eager
and is interrupted in default's compile): the columns it did not finish are kept as
``interrupted``, not left out, and the report opens with the status, what was not run, and
that the columns it has were timed in separate processes, not interleaved."""

from __future__ import annotations

from types import SimpleNamespace

from inductor_bench.core.compare import NOT_RUN_INTERRUPTED, ModeResult
from inductor_bench.core.compare_gate import not_measured
from inductor_bench.core.compare_modes import parse_modes
from inductor_bench.core.errors import Interrupted
from inductor_bench.core.rundir import load_compare
from inductor_bench.core.vocab import Status
from inductor_bench.core.workload import WorkloadOptions
from inductor_bench.render.compare import render_compare
from inductor_bench.runner.compare import run_compare

from .conftest import MODELS


def _eager_then_ctrl_c(opts, mode_dir, run):
    if opts.mode != "eager":
        raise KeyboardInterrupt
    m = ModeResult(mode="eager", compile_s=0.0, step_samples_ms=[1.0, 1.01, 0.99] * 10, run_dir=str(mode_dir))
    return m, SimpleNamespace(device="cpu", device_name="a CPU", versions={}, cache_dir=None), None


def test_an_interrupted_compare_keeps_its_unfinished_columns(tmp_path, monkeypatch):
    monkeypatch.setattr("inductor_bench.runner.compare_columns.run_mode", _eager_then_ctrl_c)
    opts = WorkloadOptions(path=str(MODELS / "mlp.py"), device="cpu")
    _, run_dir, err = run_compare(opts, parse_modes("default,max-autotune"), out=tmp_path / "cmp")
    assert isinstance(err, Interrupted)
    r = load_compare(run_dir)
    assert r.errors == ["interrupted"]
    assert [(m.mode, m.status, m.reason) for m in r.modes] == [
        ("eager", Status.OK, None),
        ("default", Status.INTERRUPTED, NOT_RUN_INTERRUPTED),
        ("max-autotune", Status.INTERRUPTED, NOT_RUN_INTERRUPTED),
    ]
    text = render_compare(r).splitlines()
    assert text[:3] == [
        "STATUS: INTERRUPTED",
        "- not run: default, max-autotune",
        "- not timed interleaved: eager: their step times and speedups come from each column's own "
        "compile worker, separate processes (unpaired)",
    ]
    assert render_compare(r, "markdown").startswith("**Status: interrupted**\n- not run: default, max-autotune\n")


def test_two_files_interrupted_in_the_head_leave_the_gate_no_verdict(tmp_path, monkeypatch):
    monkeypatch.setattr("inductor_bench.runner.compare_columns.run_mode", _eager_then_ctrl_c)
    opts = WorkloadOptions(path=str(MODELS / "mlp.py"), device="cpu")
    head = WorkloadOptions(path=str(MODELS / "mlp_slow.py"), device="cpu")
    _, run_dir, _ = run_compare(opts, parse_modes("default"), also=[head], out=tmp_path / "cmp")
    r = load_compare(run_dir)
    assert [(m.label, m.status) for m in r.modes] == [
        ("mlp:eager", Status.OK), ("mlp:default", Status.INTERRUPTED),
        ("mlp_slow:eager", Status.INTERRUPTED), ("mlp_slow:default", Status.INTERRUPTED),
    ]
    why = f"{Status.INTERRUPTED}: {NOT_RUN_INTERRUPTED}"
    assert [u.describe() for u in not_measured(r)] == [
        f"mlp_slow:eager: the step not measured in mlp_slow ({why})",
        f"mlp_slow:default: the step not measured in mlp ({why})",
        f"mlp_slow:default: the step not measured in mlp_slow ({why})",
    ]
