"""`compare --fail-on-regression` and `sweep --baseline --fail-on-regression` whose --json or
--html file (or the sweep's own report) cannot be written once the gate has judged (a disk that
fills up): the gate's failing verdict is the exit status, its line naming the failed write and
where the run saved what it measured; a gate that passed is said in the line of exit 74.
Nothing compiles: compare's results are the recorded CPU compare of models/mlp.py given as two
model files (test_compare.two_files; head's default steps x1.5 synthetic), the sweeps those of
test_sweep_cli; the full disk is a rename that raises ENOSPC."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from inductor_bench.commands import compare as compare_command
from inductor_bench.core.result_json import result_json
from inductor_bench.render.compare import render_compare

from .conftest import MODELS
from .test_compare import recorded_default, two_files
from .test_output_paths_first import _run
from .test_sweep_cli import MODELS as SWEPT
from .test_sweep_cli import _argv, _done_sweep

NO_SPACE = os.strerror(errno.ENOSPC)
SLOWER = 1.5  # head's default steps against base's: +50.0%


@pytest.fixture
def full_disk(monkeypatch) -> list[str]:
    """Every file renamed to a name holding one of the strings the test lists ("gate." where
    it lists none) fails as on a full disk."""
    refused: list[str] = []
    real = os.replace

    def replace(src, dst, *args, **kwargs):
        if any(name in str(dst) for name in refused or ["gate."]):
            raise OSError(errno.ENOSPC, NO_SPACE)
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    return refused


def _head(slower: float | None) -> dict | None:
    """Head's default column: base's steps x ``slower`` (None: the column never ran)."""
    if slower is None:
        return None
    return {"step_samples_ms": [x * slower for x in recorded_default()["step_samples_ms"]]}


def _compare(capsys, monkeypatch, tmp_path, slower: float | None, *more: str,
             err: Exception | None = None) -> tuple[int, str, str, Path]:
    """`compare mlp.py mlp.py --names base,head` whose run saved ``two_files`` in its run directory
    and returned ``err``."""
    result = two_files(_head(slower))
    run = tmp_path / "run"
    run.mkdir()
    (run / "compare.json").write_text(result_json(result))
    monkeypatch.setattr(compare_command, "run_compare", lambda *a, **k: (result, run, err))
    monkeypatch.setattr(compare_command, "add_compare_roofline", lambda *a, **k: None)
    mlp = str(MODELS / "mlp.py")
    code, out, err = _run(capsys, "compare", mlp, mlp, "--names", "base,head", "--device", "cpu", *more)
    assert (run / "compare.json").read_text() == result_json(result)  # what was measured kept whole
    return code, out, err, run


@pytest.mark.parametrize("option", ["--json", "--html"])
def test_compare_a_regression_exits_1_naming_the_file_it_could_not_write(capsys, monkeypatch, tmp_path, full_disk,
                                                                        option):
    page = tmp_path / ("gate.json" if option == "--json" else "gate.html")
    code, out, err, run = _compare(capsys, monkeypatch, tmp_path, SLOWER, "--fail-on-regression", "10",
                                   option, str(page))
    assert (code, err) == (1, "inductor-bench: error: significant step-time regression above 10%: head:default: "
                              "step time 3.125 -> 4.688 ms: +50.0% of the step (the real model call); also, "
                              f"{page}: cannot write ({NO_SPACE}); what was measured is saved in "
                              f"{run}\n")
    assert out == render_compare(two_files(_head(SLOWER)), "text", threshold_pct=10)  # the report still on stdout
    assert not page.exists()


def test_compare_no_verdict_exits_5_naming_the_file_it_could_not_write(capsys, monkeypatch, tmp_path, full_disk):
    page = tmp_path / "gate.json"
    code, _, err, run = _compare(capsys, monkeypatch, tmp_path, None, "--fail-on-regression", "10",
                                 "--json", str(page))
    assert (code, err) == (5, "inductor-bench: error: not comparable, no verdict: head:default: the step not "
                              f"measured in head (not run); also, {page}: cannot write ({NO_SPACE}); what was "
                              f"measured is saved in {run}\n")


def test_compare_a_gate_passed_exits_74_saying_it_passed(capsys, monkeypatch, tmp_path, full_disk):
    page = tmp_path / "gate.json"
    code, _, err, run = _compare(capsys, monkeypatch, tmp_path, SLOWER, "--fail-on-regression", "60",
                                 "--json", str(page))
    assert (code, err) == (74, f"inductor-bench: error: {page}: cannot write ({NO_SPACE}); what was measured is "
                               f"saved in {run}; the gate passed: no significant regression above 60%\n")


def test_compare_without_a_gate_the_failed_write_is_the_line_alone(capsys, monkeypatch, tmp_path, full_disk):
    page = tmp_path / "gate.json"
    code, _, err, run = _compare(capsys, monkeypatch, tmp_path, SLOWER, "--json", str(page))
    assert (code, err) == (74, f"inductor-bench: error: {page}: cannot write ({NO_SPACE}); what was measured is "
                               f"saved in {run}\n")


def _sweep(capsys, tmp_path, old_models, *more: str) -> tuple[int, str, str, Path]:
    """A finished sweep (max-autotune x1.5) against a baseline of ``old_models``; its saved
    sweep.json and compares are kept whole."""
    old = _done_sweep(tmp_path / "old", models=old_models)
    new = _done_sweep(tmp_path / "new", slowed=SLOWER)
    saved = {p: p.read_bytes() for p in new.rglob("*.json")}
    code, out, err = _run(capsys, "sweep", *_argv(new, "--baseline", str(old), *more))
    assert {p: p.read_bytes() for p in new.rglob("*.json")} == saved and len(saved) == 3
    return code, out, err.splitlines()[-1], new


@pytest.mark.parametrize("refused", ["gate.json", "gate.html", "report.txt"])
def test_sweep_a_regression_exits_1_naming_the_file_it_could_not_write(capsys, tmp_path, full_disk, refused):
    """The --json file, the --html page, or the sweep's own report (written first) refused."""
    full_disk.append(refused)
    code, out, line, new = _sweep(capsys, tmp_path, SWEPT, "--fail-on-regression", "10",
                                  "--json", str(tmp_path / "gate.json"), "--html", str(tmp_path / "gate.html"))
    failed = new / refused if refused == "report.txt" else tmp_path / refused
    assert (code, line) == (1, "inductor-bench: error: significant step-time regression above 10%: "
                               "mlp:max-autotune: step time 4.478 -> 6.716 ms: +50.0% of the step (the real model "
                               "call); transformer_block:max-autotune: step time 4.478 -> 6.716 ms: +50.0% of the "
                               "step (the real model call); also, "
                               f"{failed}: cannot write ({NO_SPACE}); what was measured is saved in {new}")
    assert out.startswith("REGRESSION ABOVE THE 10% GATE: mlp:max-autotune +50.0% [")  # the report still on stdout


def test_sweep_no_verdict_exits_5_naming_the_file_it_could_not_write(capsys, tmp_path, full_disk):
    code, _, line, new = _sweep(capsys, tmp_path, SWEPT[:1], "--fail-on-regression", "60",
                                "--json", str(tmp_path / "gate.json"))
    assert (code, line) == (5, "inductor-bench: error: no verdict: transformer_block: no result in the baseline; "
                               f"also, {tmp_path / 'gate.json'}: cannot write ({NO_SPACE}); what was measured is "
                               f"saved in {new}")


def test_sweep_a_gate_passed_exits_74_saying_it_passed(capsys, tmp_path, full_disk):
    full_disk.append("report.txt")
    code, out, line, new = _sweep(capsys, tmp_path, SWEPT, "--fail-on-regression", "60")
    assert out.startswith("NO REGRESSION above the 60% gate")
    assert (code, line) == (74, f"inductor-bench: error: {new / 'report.txt'}: cannot write ({NO_SPACE}); what was "
                                f"measured is saved in {new}; the gate passed: no significant regression above 60%")


def test_sweep_a_baseline_without_a_gate_the_failed_write_is_the_line_alone(capsys, tmp_path, full_disk):
    full_disk.append("report.txt")
    code, _, line, new = _sweep(capsys, tmp_path, SWEPT)
    assert (code, line) == (74, f"inductor-bench: error: {new / 'report.txt'}: cannot write ({NO_SPACE}); what "
                                f"was measured is saved in {new}")
