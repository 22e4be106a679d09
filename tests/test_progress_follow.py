"""While a script runs in the compile worker, a terminal shows the seconds so far and the last
line the script printed (its log), so a long training script is seen to be alive."""

from __future__ import annotations

import io
import re
import time

from inductor_bench.commands import progress
from inductor_bench.commands.progress import FOLLOW_CHARS, TerminalProgress, last_line


def test_the_last_line_is_the_last_one_printed(tmp_path):
    log = tmp_path / "compile.log"
    log.write_text("epoch 1 loss 0.9\nepoch 2 loss 0.7\n\n")
    assert last_line(str(log)) == "epoch 2 loss 0.7"
    log.write_text("epoch 3\n 10%|#   |\r 20%|##  |\r")  # a progress bar redrawn with \r
    assert last_line(str(log)) == "20%|##  |"
    log.write_text("x" * 500)
    assert last_line(str(log)) == "x" * (FOLLOW_CHARS - 1) + "…"
    assert last_line(str(tmp_path / "missing.log")) == ""
    log.write_text("")
    assert last_line(str(log)) == ""


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_shows_the_followed_files_last_line_while_the_phase_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(progress, "FOLLOW_EVERY_S", 0.02)
    monkeypatch.setenv("COLUMNS", "200")  # a terminal wide enough for the line whole, whatever the shell's
    log = tmp_path / "compile.log"
    log.write_text("")
    out = _Terminal()
    with TerminalProgress(out).phase("compiling train.py (a script)", str(log)) as ph:
        log.write_text("epoch 3 loss 0.123 [not markup]\n")
        deadline = time.monotonic() + 30
        while "epoch 3 loss 0.123 [not markup]" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
        ph["done"] = "1 compiled module(s)"
    text = out.getvalue()
    assert "compiling train.py (a script) ... " in text and "epoch 3 loss 0.123 [not markup]" in text
    assert re.search(r"compiling train\.py \(a script\): 1 compiled module\(s\) \(\d+\.\d s\)\s*$", text)


def test_without_a_terminal_nothing_is_followed(tmp_path):
    log = tmp_path / "compile.log"
    log.write_text("epoch 1\n")
    out = io.StringIO()
    with TerminalProgress(out).phase("compiling s.py", str(log)):
        pass
    assert out.getvalue().splitlines()[0] == "compiling s.py ..."
    assert "epoch" not in out.getvalue()


def test_a_terminal_shows_the_seconds_so_far_of_a_phase_that_follows_no_file(monkeypatch):
    """A model file's compile follows no log: a cold compile of a two-layer GPT-2's training
    step ran 145 s behind a spinner with no figure; the seconds so far show now, as a script's do."""
    monkeypatch.setattr(progress, "FOLLOW_EVERY_S", 0.02)
    monkeypatch.setenv("COLUMNS", "200")
    out = _Terminal()
    with TerminalProgress(out).phase("compiling gpt2.py (train)"):
        deadline = time.monotonic() + 30
        while not re.search(r"compiling gpt2\.py \(train\) \.\.\. \d+ s", out.getvalue()) and (
                time.monotonic() < deadline):
            time.sleep(0.05)
    assert re.search(r"compiling gpt2\.py \(train\) \.\.\. \d+ s", out.getvalue())
    assert re.search(r"compiling gpt2\.py \(train\): done \(\d+\.\d s\)\s*$", out.getvalue())
