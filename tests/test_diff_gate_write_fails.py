"""`diff --fail-on-regression` whose --json file cannot be written once the gate has judged (a disk
that fills up): the gate's verdict is the exit status and its line names the failed write too.
The results are the synthetic ones of test_diff.py; the full disk is a write that raises ENOSPC."""

from __future__ import annotations

import errno
import os

import pytest

from .test_diff import files, run_cli  # noqa: F401  (files: the fixture)

NO_SPACE = os.strerror(errno.ENOSPC)


@pytest.fixture
def full_disk(monkeypatch):
    """Every file written under a name holding "gate.json" fails as on a full disk."""
    real = os.replace

    def replace(src, dst, *args, **kwargs):
        if "gate.json" in str(dst):
            raise OSError(errno.ENOSPC, NO_SPACE)
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)


def test_a_regression_exits_1_naming_the_file_it_could_not_write(files, tmp_path, full_disk, capsys):  # noqa: F811
    out = tmp_path / "gate.json"
    assert run_cli([files["base"], files["slow"], "--fail-on-regression", "10", "--json", str(out)]) == 1
    captured = capsys.readouterr()
    assert captured.err == ("inductor-bench: error: significant regression above 10%: default: all graphs 8.400 -> 10.400 ms: +23.8% of the graphs' own calls, not of the whole step (its time outside the graphs is not in it); "
                            f"also, {out}: cannot write ({NO_SPACE})\n")
    assert captured.out.startswith("REGRESSION")  # the report still on stdout
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".gate.json")]


def test_a_gate_passed_exits_74_saying_it_passed(files, tmp_path, full_disk, capsys):  # noqa: F811
    out = tmp_path / "gate.json"
    assert run_cli([files["base"], files["slow"], "--fail-on-regression", "30", "--json", str(out)]) == 74
    assert capsys.readouterr().err == (f"inductor-bench: error: {out}: cannot write ({NO_SPACE}); the gate "
                                       "passed: no significant regression above 30%\n")


def test_without_a_gate_the_failed_write_is_the_line_alone(files, tmp_path, full_disk, capsys):  # noqa: F811
    out = tmp_path / "gate.json"
    assert run_cli([files["base"], files["slow"], "--json", str(out)]) == 74
    assert capsys.readouterr().err == f"inductor-bench: error: {out}: cannot write ({NO_SPACE})\n"
