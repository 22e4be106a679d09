"""The commands ``analyze`` suggests keep a path with a space one word for the shell
(``inductor-bench report '/tmp/my runs/run'``): a run directory or result file given to
analyze, and the graph traces' line naming their run. The run is the recorded
``tests/fixtures/runs/cpu_checkpoint_train`` copied under a directory with a space."""

from __future__ import annotations

import shlex
import shutil

from .conftest import FIXTURES
from .test_analyze import run_cli

RUN = FIXTURES / "runs" / "cpu_checkpoint_train"


def _spaced_run(tmp_path):
    return shutil.copytree(RUN, tmp_path / "my runs" / "ckpt")


def test_a_run_directory_with_a_space_is_pointed_to_report_as_one_word(capsys, tmp_path):
    run = _spaced_run(tmp_path)
    code, _, err = run_cli(capsys, str(run))
    assert code == 2 and f"`inductor-bench report '{run}'` shows it" in err
    code, _, err = run_cli(capsys, str(run / "breakdown.json"))
    assert code == 2 and f"`inductor-bench report '{run / 'breakdown.json'}'` shows it" in err
    assert shlex.split(f"inductor-bench report '{run}'") == ["inductor-bench", "report", str(run)]


def test_graph_traces_name_their_spaced_run_as_one_word(capsys, tmp_path):
    run = _spaced_run(tmp_path)
    traces = [str(run / "graphs" / g / "trace.json.gz") for g in ("0-forward", "0-backward")]
    code, out, _ = run_cli(capsys, *traces)
    assert code == 0 and f"inductor-bench report '{run}' shows a run's graphs" in out
    code, out, _ = run_cli(capsys, *traces, "--format", "markdown")
    assert code == 0 and f"`inductor-bench report '{run}'` shows a run's graphs" in out
