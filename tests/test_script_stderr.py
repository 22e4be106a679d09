"""A failing script's error quotes what it said last on stderr (``runner/script_stderr.py``)."""

from __future__ import annotations

import io
import sys

from inductor_bench.runner.script_stderr import QUOTED_CHARS, exit_error, kept_stderr, with_log


def test_stderr_passes_through_and_its_last_line_is_kept(monkeypatch):
    real = io.StringIO()
    monkeypatch.setattr(sys, "stderr", real)
    with kept_stderr() as said:
        assert said.last_line() == ""
        print("usage: train.py [-h] [--hidden HIDDEN]", file=sys.stderr)
        sys.stderr.write("train.py: error: argument --hidden: ")
        sys.stderr.writelines(["invalid int value: 'abc'", "\n", "  \n"])
    assert sys.stderr is real
    assert real.getvalue() == ("usage: train.py [-h] [--hidden HIDDEN]\n"
                               "train.py: error: argument --hidden: invalid int value: 'abc'\n  \n")
    assert said.last_line() == "train.py: error: argument --hidden: invalid int value: 'abc'"
    with kept_stderr() as said:
        sys.stderr.write("x" * 10_000)
    assert said.last_line() == "x" * (QUOTED_CHARS - 1) + "…"


def test_the_exit_error_gives_the_status_and_what_the_script_said():
    assert exit_error(2, "t.py: error: bad") == "the script exited with status 2, its last line on stderr: t.py: error: bad"
    assert exit_error(3, "") == "the script exited with status 3"
    assert exit_error(True, "") == "the script exited with status 1"  # sys.exit(not ok), as Python exits
    # sys.exit("message"): Python would print the message and exit with status 1
    assert exit_error("no data in ./data\n", "a warning before") == (
        "the script exited with status 1: no data in ./data")
    assert with_log("the script exited with status 3", "run/logs/compile-default.log") == (
        "the script exited with status 3 (log: run/logs/compile-default.log)")
    assert with_log("the script exited with status 3", None) == "the script exited with status 3"
