"""``--format md``: the spelling of markdown's file suffix, taken by every command that takes
``--format`` and giving the same report as ``--format markdown``; a format no command writes is
one line and exit 2. On the recorded runs of tests/fixtures/results."""

from __future__ import annotations

import pytest

from inductor_bench.cli import main

from .conftest import FIXTURES

BREAKDOWN = FIXTURES / "results" / "cpu_mlp_train_quiet"
COMPARE = FIXTURES / "results" / "cpu_mlp_compare"
COMMANDS_WITH_FORMAT = ("analyze", "breakdown", "compare", "diff", "kernel", "report", "sweep")


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = 0
    try:
        main(list(argv))
    except SystemExit as e:
        code = int(e.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("run", [BREAKDOWN, COMPARE], ids=["breakdown", "compare"])
def test_report_md_is_the_markdown_report(run, capsys):
    code_md, md, _ = _cli(capsys, "report", str(run), "--format", "md")
    code, markdown, _ = _cli(capsys, "report", str(run), "-f", "markdown")
    assert code_md == code == 0
    assert md == markdown
    assert "inductor-bench " in md and "| " in md


def test_diff_md_is_the_markdown_diff(capsys):
    run = str(BREAKDOWN)
    code_md, md, _ = _cli(capsys, "diff", run, run, "-f", "md")
    code, markdown, _ = _cli(capsys, "diff", run, run, "--format", "markdown")
    assert code_md == code
    assert md == markdown and "|" in md


@pytest.mark.parametrize("command", COMMANDS_WITH_FORMAT)
def test_every_format_option_names_md_in_its_help(command, capsys):
    code, out, _ = _cli(capsys, command, "--help")
    assert code == 0
    assert "markdown (or md)" in " ".join(out.split())


@pytest.mark.parametrize("spelling", ["xml", "MD", "mark"])
def test_a_format_no_command_writes_is_one_line_and_exit_2(spelling, capsys):
    code, out, err = _cli(capsys, "report", str(BREAKDOWN), "--format", spelling)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert f"'{spelling}' is not one of text, markdown, html, json (or md for markdown)" in err
