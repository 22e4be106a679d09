"""A run that ends in more than one way exits with one status, the first of: a stop (128 +
the signal), a --fail-on-regression gate's failing verdict (1 or 5), the run's own failure (4),
a file or stdout it then could not write (74); its one line names the others. A write that
failed after a worker died or after Ctrl-C exited 74, hiding both, and a worker error beside
a regression exited 4, hiding the gate's verdict.

Nothing compiles: compare's results are the recorded CPU compare of models/mlp.py given as two
model files (test_compare.two_files; head's default steps x1.5 synthetic), the sweeps those of
test_sweep_cli, the breakdown the recorded cpu_mlp_train_quiet run, the diff's and the
kernel's the synthetic ones of test_diff.py and test_kernel_cli.py; the worker errors and the
stops are synthetic, raised where the command's run returns; the full disk is a rename that
raises ENOSPC, a stop while writing a rename that raises KeyboardInterrupt."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest

from inductor_bench.commands import breakdown as breakdown_command
from inductor_bench.commands import sweep as sweep_command
from inductor_bench.core.errors import Interrupted, WorkerError
from inductor_bench.core.rundir import load_breakdown
from inductor_bench.core.sweep import CellStatus
from inductor_bench.core.sweep_cells import progress_line
from inductor_bench.runner.sweep_run import load_sweep

from . import test_gate_write_fails as gate_write_fails
from .conftest import MODELS
from .test_diff import files, run_cli  # noqa: F401  (files: the fixture)
from .test_kernel_cli import RED, fake_worker  # noqa: F401  (the fixture)
from .test_kernel_cli import run_cli as run_kernel
from .test_output_paths_first import RESULTS, _run
from .test_sweep_cli import MODELS as SWEPT
from .test_sweep_cli import _argv, _done_sweep

NO_SPACE = os.strerror(errno.ENOSPC)
SLOWER = 1.5  # head's default steps against base's: +50.0%
DIED = "default: compile worker was killed by SIGKILL (out of memory? the OOM killer sends SIGKILL)"
# recorded base default 3.125 ms, head x1.5 = 4.6875 ms
REGRESSED = ("significant step-time regression above 10%: head:default: step time 3.125 -> 4.688 ms: +50.0% "
             "of the step (the real model call)")


@pytest.fixture
def refused(monkeypatch) -> dict:
    """A file renamed to a name holding "gate." or ``refused["name"]`` fails as ``refused["as"]``
    raises: a full disk (the default), or a stop arriving as it is written."""
    how = {"name": "gate.", "as": OSError(errno.ENOSPC, NO_SPACE)}
    real = os.replace

    def replace(src, dst, *args, **kwargs):
        if how["name"] in str(dst):
            raise how["as"]
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    return how


def _compare(capsys, monkeypatch, tmp_path, err: Exception | None, *more: str) -> tuple[int, str, Path]:
    """`compare mlp.py mlp.py --names base,head` whose run saved ``two_files`` (head's default
    x1.5) and returned ``err``; the last line on stderr."""
    code, _, err_text, run = gate_write_fails._compare(capsys, monkeypatch, tmp_path, SLOWER, *more, err=err)
    return code, err_text.splitlines()[-1], run


def test_compare_a_dead_worker_then_a_full_disk_exits_4_naming_both(capsys, monkeypatch, tmp_path, refused):
    page = tmp_path / "gate.json"
    code, line, run = _compare(capsys, monkeypatch, tmp_path, WorkerError(DIED), "--json", str(page))
    assert (code, line) == (4, f"inductor-bench: error: {DIED}; also, {page}: cannot write ({NO_SPACE}); what "
                               f"was measured is saved in {run}")


def test_compare_stopped_then_a_full_disk_exits_130_naming_both(capsys, monkeypatch, tmp_path, refused):
    page = tmp_path / "gate.json"
    stop = Interrupted(f"interrupted; what was measured is saved in {tmp_path / 'run'}")
    code, line, _ = _compare(capsys, monkeypatch, tmp_path, stop, "--fail-on-regression", "10", "--json", str(page))
    assert (code, line) == (130, f"inductor-bench: error: {stop}; also, {page}: cannot write ({NO_SPACE})")


def test_compare_a_regression_beside_a_dead_worker_exits_1_naming_both(capsys, monkeypatch, tmp_path):
    code, line, _ = _compare(capsys, monkeypatch, tmp_path, WorkerError(DIED), "--fail-on-regression", "10")
    assert (code, line) == (1, f"inductor-bench: error: {REGRESSED}; also, {DIED}")


def test_compare_a_regression_a_dead_worker_and_a_full_disk_exit_1_naming_all(capsys, monkeypatch, tmp_path,
                                                                               refused):
    page = tmp_path / "gate.json"
    code, line, run = _compare(capsys, monkeypatch, tmp_path, WorkerError(DIED), "--fail-on-regression", "10",
                               "--json", str(page))
    assert (code, line) == (1, f"inductor-bench: error: {REGRESSED}; also, {DIED}; also, {page}: cannot write "
                               f"({NO_SPACE}); what was measured is saved in {run}")


def test_compare_a_stop_while_the_json_is_written_exits_130_with_the_gates_verdict(capsys, monkeypatch, tmp_path,
                                                                                     refused):
    """The run ended whole, the gate judged it; Ctrl-C as --json was written: the stop is the status."""
    refused["as"] = KeyboardInterrupt()
    page = tmp_path / "gate.json"
    code, line, run = _compare(capsys, monkeypatch, tmp_path, None, "--fail-on-regression", "10", "--json", str(page))
    assert (code, line) == (130, "inductor-bench: error: interrupted as the report was written; what was measured "
                                 f"is saved in {run}; also, {REGRESSED}")
    assert not page.exists() and not list(tmp_path.glob("*gate.json*"))


def _sweep(capsys, monkeypatch, tmp_path, ended, *more: str) -> tuple[int, str, Path]:
    """A finished sweep (max-autotune x1.5) whose run ``ended`` (given the sweep's directory:
    raises, or returns the sweep as it left it); with a baseline of the same models unslowed."""
    old = _done_sweep(tmp_path / "old", models=SWEPT)
    new = _done_sweep(tmp_path / "new", slowed=SLOWER)
    monkeypatch.setattr(sweep_command, "run_sweep", lambda out, *a, **k: ended(new))
    code, _, err = _run(capsys, "sweep", *_argv(new, "--baseline", str(old), *more))
    return code, err.splitlines()[-1], new


def _stopped(new: Path):
    raise KeyboardInterrupt


def _one_job_failed(new: Path):
    """transformer_block's job failed before its compare saved a result."""
    (new / "transformer_block" / "compare.json").unlink()
    sweep = load_sweep(new.absolute())
    cell = next(c for c in sweep.cells if c.model == "transformer_block")
    cell.status, cell.reason = CellStatus.FAILED, "compare exited with code 4"
    return sweep


DID_NOT_FINISH = "1 of 2 models did not finish (transformer_block: failed); the same command retries them"


def test_sweep_stopped_then_its_report_refused_exits_130_naming_both(capsys, monkeypatch, tmp_path, refused):
    refused["name"] = "report.txt"
    code, line, new = _sweep(capsys, monkeypatch, tmp_path, _stopped, "--fail-on-regression", "10")
    said = progress_line(load_sweep(new.absolute()))
    assert (code, line) == (130, f"inductor-bench: error: sweep stopped ({said}); what was measured is saved in "
                                 f"{new}, and the same command resumes it; also, {new / 'report.txt'}: cannot write "
                                 f"({NO_SPACE})")


def test_sweep_a_failed_job_then_its_report_refused_exits_4_naming_both(capsys, monkeypatch, tmp_path, refused):
    refused["name"] = "report.txt"
    code, line, new = _sweep(capsys, monkeypatch, tmp_path, _one_job_failed)
    assert (code, line) == (4, f"inductor-bench: error: {DID_NOT_FINISH}; also, {new / 'report.txt'}: cannot write "
                               f"({NO_SPACE}); what was measured is saved in {new}")


def test_sweep_a_regression_beside_a_failed_job_exits_1_naming_both(capsys, monkeypatch, tmp_path):
    code, line, _ = _sweep(capsys, monkeypatch, tmp_path, _one_job_failed, "--fail-on-regression", "10")
    assert (code, line) == (1, "inductor-bench: error: significant step-time regression above 10%: "
                               "mlp:max-autotune: step time 4.478 -> 6.716 ms: +50.0% of the step (the real model "
                               "call); no verdict: transformer_block: no result in this sweep; "
                               f"also, {DID_NOT_FINISH}")


def _breakdown(capsys, monkeypatch, tmp_path, err: Exception | None) -> tuple[int, str, Path, Path]:
    """`breakdown mlp.py --json gate.json` whose run saved the recorded breakdown, returning ``err``."""
    run = tmp_path / "run"
    shutil.copytree(RESULTS / "cpu_mlp_train_quiet", run)
    result = load_breakdown(run)
    monkeypatch.setattr(breakdown_command, "run_breakdown", lambda *a, **k: (result, run, err))
    monkeypatch.setattr(breakdown_command, "add_roofline", lambda *a, **k: None)
    page = tmp_path / "gate.json"
    code, _, err_text = _run(capsys, "breakdown", str(MODELS / "mlp.py"), "--device", "cpu", "--summary",
                             "--json", str(page))
    return code, err_text.splitlines()[-1], run, page


def test_breakdown_a_dead_worker_then_a_full_disk_exits_4_naming_both(capsys, monkeypatch, tmp_path, refused):
    code, line, run, page = _breakdown(capsys, monkeypatch, tmp_path, WorkerError(DIED))
    assert (code, line) == (4, f"inductor-bench: error: {DIED}; also, {page}: cannot write ({NO_SPACE}); what "
                               f"was measured is saved in {run}")


def test_breakdown_stopped_then_a_full_disk_exits_130_naming_both(capsys, monkeypatch, tmp_path, refused):
    stop = Interrupted(f"interrupted; what was measured is saved in {tmp_path / 'run'}")
    code, line, _, page = _breakdown(capsys, monkeypatch, tmp_path, stop)
    assert (code, line) == (130, f"inductor-bench: error: {stop}; also, {page}: cannot write ({NO_SPACE})")


def test_breakdown_a_stop_while_the_json_is_written_exits_130_naming_the_dead_worker(capsys, monkeypatch, tmp_path,
                                                                                      refused):
    refused["as"] = KeyboardInterrupt()
    code, line, run, _ = _breakdown(capsys, monkeypatch, tmp_path, WorkerError(DIED))
    assert (code, line) == (130, "inductor-bench: error: interrupted as the report was written; what was measured "
                                 f"is saved in {run}; also, {DIED}")


def test_diff_a_stop_while_the_json_is_written_exits_130_with_the_gates_verdict(files, tmp_path, refused,  # noqa: F811
                                                                                 capsys):
    refused["as"] = KeyboardInterrupt()
    out = tmp_path / "gate.json"
    assert run_cli([files["base"], files["slow"], "--fail-on-regression", "10", "--json", str(out)]) == 130
    assert capsys.readouterr().err == ("inductor-bench: error: interrupted as the report was written; also, "
                                       "significant regression above 10%: default: all graphs 8.400 -> 10.400 ms: +23.8% of the graphs' own calls, not of the whole step (its time outside the graphs is not in it)\n")
    assert not out.exists()


def test_kernel_a_stop_while_the_json_is_written_exits_130_saying_so(capsys, tmp_path, refused,
                                                                     fake_worker):  # noqa: F811
    refused["as"] = KeyboardInterrupt()
    out = tmp_path / "gate.json"
    code, stdout, err = run_kernel(capsys, str(RED), "--json", str(out))
    assert (code, stdout, err) == (130, "", "inductor-bench: error: interrupted as the report was written\n")
    assert not out.exists()
