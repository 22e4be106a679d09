"""Text reports on a terminal: prose wraps to the terminal (at most 100 columns) at spaces, never
inside a word, path or kernel name; tables fit as before; a file or a pipe gets each paragraph on
one line (grep and diff read whole sentences). Checked on a recorded run
(tests/fixtures/runs/README.md) and on every command's report through the CLI."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from inductor_bench.cli import main
from inductor_bench.commands import output
from inductor_bench.commands.output import render_result
from inductor_bench.core.rundir import load_any
from inductor_bench.render.doc import for_terminal, new_doc
from inductor_bench.render.text_wrap import WRAP, wrapped

RUNS = Path(__file__).parent / "fixtures" / "runs"
RUN = RUNS / "cpu_mlp_train_stalled"
TRACE = Path(__file__).parent / "fixtures" / "hta" / "ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
# a text table's rule under its headers, or a title's or heading's underline (a title stays whole)
RULE = re.compile(r"^(-{2,}( +-{2,})*|=+)$")


def _result():
    r = load_any(RUN)
    return r[0] if isinstance(r, tuple) else r


def _prose_lines(text: str) -> list[str]:
    """The lines of the blocks that are no table or heading, but a word (a path) longer than any line."""
    return [ln for b in text.split("\n\n") if not any(RULE.match(x) for x in b.splitlines())
            for ln in b.splitlines() if " " in ln.strip()]


def _prose(text: str) -> list[str]:
    """The blocks that are no table or heading, each with its whitespace made single spaces."""
    blocks = text.split("\n\n")
    return [" ".join(b.split()) for b in blocks if not any(RULE.match(ln) for ln in b.splitlines())]


def test_a_line_is_broken_at_spaces_and_continues_under_its_text():
    line = "- " + " ".join(f"word{i}" for i in range(40))
    out = wrapped(line, 30).splitlines()
    assert len(out) > 1 and all(len(ln) <= 30 for ln in out)
    assert all(ln.startswith("  word") for ln in out[1:])  # under the bullet's text
    assert " ".join(" ".join(out).split()) == line
    long_path = "see " + "/very/long/" * 12 + "trace.json"
    assert wrapped(long_path, 40).splitlines() == ["see", "/very/long/" * 12 + "trace.json"]
    assert wrapped("short", 40) == "short"


def test_on_a_terminal_prose_wraps_and_says_the_same_words():
    whole = render_result(_result())
    with for_terminal(80):
        narrow = render_result(_result())
    assert max(len(ln) for ln in whole.splitlines()) > 300  # a file keeps a paragraph on a line
    assert max(len(ln) for ln in _prose_lines(narrow)) <= 80
    assert _prose(narrow) == _prose(whole)


def test_a_wide_terminal_wraps_prose_at_100_columns():
    doc = new_doc(width=200)
    doc.paragraph("x " * 120)
    assert max(len(ln) for ln in doc.render().splitlines()) <= WRAP
    assert new_doc(width=None).width is None


def _cli(capsys, *argv: str) -> tuple[int, str]:
    code = 0
    try:
        main(list(argv))
    except SystemExit as e:
        code = e.code or 0
    return code, capsys.readouterr().out


@pytest.mark.parametrize("argv", [("report", str(RUN)), ("analyze", str(TRACE))], ids=["report", "analyze"])
def test_each_command_wraps_for_a_terminal_only(capsys, monkeypatch, argv):
    code, piped = _cli(capsys, *argv)
    assert code == 0
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)  # capsys's stdout, as a terminal
    monkeypatch.setattr(output.shutil, "get_terminal_size", lambda *a, **k: os.terminal_size((72, 24)))
    code, shown = _cli(capsys, *argv)
    assert code == 0
    assert max(len(ln) for ln in _prose_lines(shown)) <= 72 < max(len(ln) for ln in _prose_lines(piped))
    assert len(_prose(shown)) == len(_prose(piped))
