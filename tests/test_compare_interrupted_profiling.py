"""A compare stopped by Ctrl-C as a column's compiled graphs were profiled (synthetic: the
compile worker is a stand-in that "compiled" in 40.2 s, and the profiling a stand-in that
profiles 0-forward, recorded, then is interrupted): the column reads ``interrupted while being
profiled, after compiling (40.2 s); 1 graph profiled, saved in its folder`` under the status,
not ``not run``, and its folder holds that interrupted breakdown, which ``report`` reads. It
had been listed as not run and its folder held no result ("no compare.json or breakdown.json
in this directory")."""

from __future__ import annotations

from types import SimpleNamespace

from inductor_bench.core.compare import NOT_RUN_INTERRUPTED
from inductor_bench.core.compare_modes import parse_modes
from inductor_bench.core.errors import Interrupted
from inductor_bench.core.rundir import load_breakdown, load_compare
from inductor_bench.core.vocab import Status
from inductor_bench.core.workload import WorkloadOptions
from inductor_bench.render.compare import render_compare
from inductor_bench.runner.compare import run_compare

from .conftest import MODELS
from .test_output_paths_first import RESULTS, _run

COMPILE_S = 40.2
REASON = f"interrupted while being profiled, after compiling ({COMPILE_S} s); 1 graph profiled, saved in its folder"


def _compiled(opts, mode_dir, timing, profile_after):
    return SimpleNamespace(
        compile_s=0.0 if opts.mode == "eager" else COMPILE_S, step_samples_ms=[1.0, 1.01, 0.99] * 10,
        peak_memory_bytes=None, peak_memory_kind="", step_load=None, error=None,
        modules=[] if opts.mode == "eager" else ["graph.py"], device="cpu", device_name="a CPU", versions={},
        cache_dir=None, close=lambda: None)


def _profiled_then_ctrl_c(opts, mode_dir, outcome, settings, result):
    result.compile_s = outcome.compile_s
    result.graphs.append(load_breakdown(RESULTS / "cpu_mlp_train_quiet").graph("0-forward"))
    raise KeyboardInterrupt


def _stopped(tmp_path, monkeypatch):
    monkeypatch.setattr("inductor_bench.runner.compare_columns.compile_workload", _compiled)
    monkeypatch.setattr("inductor_bench.runner.compare_columns.breakdown_from_outcome", _profiled_then_ctrl_c)
    opts = WorkloadOptions(path=str(MODELS / "mlp.py"), device="cpu")
    return run_compare(opts, parse_modes("default,max-autotune"), out=tmp_path / "cmp")


def test_a_column_stopped_as_it_was_profiled_says_so(tmp_path, monkeypatch):
    _, run_dir, err = _stopped(tmp_path, monkeypatch)
    assert isinstance(err, Interrupted)
    r = load_compare(run_dir)
    assert [(m.mode, m.status, m.reason) for m in r.modes] == [
        ("eager", Status.OK, None),
        ("default", Status.INTERRUPTED, REASON),
        ("max-autotune", Status.INTERRUPTED, NOT_RUN_INTERRUPTED),
    ]
    text = render_compare(r).splitlines()
    assert text[:3] == ["STATUS: INTERRUPTED", "- not run: max-autotune", f"- default: {REASON}"]


def test_its_folder_keeps_what_it_profiled_and_report_reads_it(tmp_path, monkeypatch, capsys):
    _, run_dir, _ = _stopped(tmp_path, monkeypatch)
    b = load_breakdown(run_dir / "default")
    assert (b.status, b.compile_s, [g.id for g in b.graphs]) == (Status.INTERRUPTED, COMPILE_S, ["0-forward"])
    assert "interrupted" in b.errors
    capsys.readouterr()
    code, out, err = _run(capsys, "report", str(run_dir / "default"))
    assert code == 0 and "no compare.json or breakdown.json" not in err and "0-forward" in out, (code, err)
