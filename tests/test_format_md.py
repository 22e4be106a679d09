"""``--format md``: the spelling of markdown's file suffix, taken by every command that takes
``--format`` and giving the same report as ``--format markdown``; a format no command writes is
one line and exit 2. On the recorded runs of tests/fixtures/results."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from inductor_bench.cli import app, main
from inductor_bench.commands.options import Settings

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


def _bash_completions(monkeypatch, capsys, words: str) -> list[str]:
    """What bash's completion asks of the command line for the last word of ``words`` (bash's
    protocol: the words so far and the index of the one being completed), one offer a line."""
    monkeypatch.setenv("_INDUCTOR_BENCH_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", words)
    monkeypatch.setenv("COMP_CWORD", str(len(words.split(" ")) - 1))
    with pytest.raises(SystemExit) as ended:
        app(args=[], prog_name="inductor-bench", standalone_mode=False, obj=Settings())
    assert ended.value.code == 0
    return [offer for offer in capsys.readouterr().out.splitlines() if offer]  # none: one empty line


@pytest.mark.parametrize("command", COMMANDS_WITH_FORMAT)
@pytest.mark.parametrize(("typed", "offered"), [
    ("", ["text", "markdown", "md", "html", "json"]),
    ("m", ["markdown", "md"]),
    ("md", ["md"]),
    ("h", ["html"]),
    ("x", []),
])
def test_format_completion_offers_every_name_the_option_takes(command, typed, offered, monkeypatch, capsys):
    for flag in ("--format", "-f"):
        assert _bash_completions(monkeypatch, capsys, f"inductor-bench {command} x {flag} {typed}") == offered


def test_bash_gets_the_format_names_from_the_command_line_itself():
    """The protocol of the script ``_INDUCTOR_BENCH_COMPLETE=source_bash inductor-bench`` prints,
    run in a process of its own: the shell's completion classes are registered by the command
    line, not by a test."""
    env = os.environ | {"_INDUCTOR_BENCH_COMPLETE": "complete_bash",
                        "COMP_WORDS": "inductor-bench compare a.py --format m", "COMP_CWORD": "4"}
    done = subprocess.run([sys.executable, "-m", "inductor_bench"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "markdown\nmd\n", "")


@pytest.mark.parametrize("given", ["text", "markdown", "md", "html", "json"])
def test_a_parsed_format_finds_its_member_as_typer_before_0_29_looks_it_up(given):
    """typer before 0.29 (0.27.2 is on the GPU image) gives an Enum option's parsed value back its
    member by ``str(value)`` among the members' values: Python's ``str`` of a str-Enum member
    ('Format.text') found none, so every command's --format, the default too, read None and the
    command ended in an internal error. The lookup is typer's, written out here."""
    from inductor_bench.commands.options import Format, a_format

    by_value = {str(member.value): member for member in Format}
    parsed = a_format(given)
    assert by_value[str(parsed)] is parsed
    assert by_value[str(Format.text)] is Format.text  # the default, which typer passes through too
