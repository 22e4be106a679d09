"""A run directory copied or moved (a CI artifact, a colleague's run) is reported where it lies
now, not where it was recorded: the paths the report prints are ones the reader can open."""

from __future__ import annotations

import json
import shutil

from inductor_bench.cli import main
from inductor_bench.core.rundir import load_breakdown, load_compare

from .conftest import FIXTURES

H200_RUN = FIXTURES / "runs" / "cuda_h200_transformer_train"  # recorded on an H200 (its README)
COMPARE = FIXTURES / "results" / "cpu_mlp_compare" / "compare.json"


def _report(capsys, *argv: str) -> str:
    try:
        code = main(["report", *argv])
    except SystemExit as e:
        code = e.code
    assert code in (0, None)
    return capsys.readouterr().out


def test_a_copied_run_reports_its_own_directory(capsys, tmp_path):
    recorded = json.loads((H200_RUN / "breakdown.json").read_text())["run_dir"]
    copy = tmp_path / "artifact" / "run"
    shutil.copytree(H200_RUN, copy)
    out = _report(capsys, str(copy))
    assert f"run directory: {copy}\n" in out
    assert f"traces: {copy}/graphs/<graph>/trace.json.gz" in out
    assert recorded not in out  # the machine it was recorded on: /tmp/ptb/...
    assert json.loads(_report(capsys, str(copy), "--format", "json"))["run_dir"] == str(copy)


def test_a_result_file_copied_alone_keeps_the_directory_it_names(tmp_path):
    """Without the run's files beside it, the folder holding the JSON is not the run."""
    recorded = json.loads((H200_RUN / "breakdown.json").read_text())["run_dir"]
    shutil.copy(H200_RUN / "breakdown.json", tmp_path / "breakdown.json")
    assert load_breakdown(tmp_path / "breakdown.json").run_dir == recorded


def test_a_moved_comparison_takes_its_columns_along(tmp_path):
    """The columns recorded inside the comparison's directory are read inside its new place;
    one with no directory keeps none."""
    here = tmp_path / "cmp"
    here.mkdir()
    shutil.copy(COMPARE, here / "compare.json")
    (here / "meta.json").write_text("{}")
    result = load_compare(here)
    assert result.run_dir == str(here)
    dirs = {m.mode: (m.run_dir, m.breakdown.run_dir if m.breakdown else None) for m in result.modes}
    assert dirs == {
        "eager": (str(here / "eager"), None),
        "default": (str(here / "default"), str(here / "default")),
        "max-autotune": (str(here / "max-autotune"), str(here / "max-autotune")),
        "reduce-overhead": ("", None),
    }


def test_the_cpu_recompile_moves_with_its_run(tmp_path):
    """``--autotune-top`` on CPU recompiles into ``max-autotune/`` inside the run."""
    shutil.copy(FIXTURES / "results" / "cpu_mlp_train_autotune" / "breakdown.json", tmp_path / "breakdown.json")
    (tmp_path / "graphs").mkdir()
    result = load_breakdown(tmp_path)
    assert (result.run_dir, result.autotune.tuned_run) == (str(tmp_path), str(tmp_path / "max-autotune"))


def test_a_run_where_it_was_recorded_keeps_the_name_it_recorded(tmp_path, monkeypatch):
    """Read through a relative path, a run that did not move still names its absolute one."""
    run = tmp_path / "run"
    shutil.copytree(H200_RUN, run)
    data = json.loads((run / "breakdown.json").read_text())
    (run / "breakdown.json").write_text(json.dumps(data | {"run_dir": str(run)}))
    monkeypatch.chdir(tmp_path)
    assert load_breakdown("run").run_dir == str(run)


def test_a_moved_run_read_through_a_relative_path_names_its_absolute_directory(capsys, tmp_path, monkeypatch):
    """As ``breakdown`` prints its run: a directory the reader can paste from anywhere, in the
    text, markdown and JSON reports, and a comparison's columns with it."""
    copy = tmp_path / "artifact" / "run"
    shutil.copytree(H200_RUN, copy)
    monkeypatch.chdir(tmp_path)
    out = _report(capsys, "artifact/run")
    assert f"run directory: {copy}\n" in out
    assert f"traces: {copy}/graphs/<graph>/trace.json.gz" in out
    assert f"run directory: `{copy}`" in _report(capsys, "artifact/run/breakdown.json", "--format", "markdown")
    assert json.loads(_report(capsys, "artifact/run", "--format", "json"))["run_dir"] == str(copy)
    (tmp_path / "cmp").mkdir()
    shutil.copy(COMPARE, tmp_path / "cmp" / "compare.json")
    (tmp_path / "cmp" / "meta.json").write_text("{}")
    result = load_compare("cmp")
    assert (result.run_dir, result.mode("default").run_dir) == (str(tmp_path / "cmp"), str(tmp_path / "cmp" / "default"))
