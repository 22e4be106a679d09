"""Every command's --help reads whole in an 80-column terminal: click's plain help, wrapped,
with no option's text cut short (rich's tables ended long words with an ellipsis) and no
box-drawing characters to spoil a paste."""

from __future__ import annotations

import re

import pytest
import typer.main

from inductor_bench.cli import SHORT_HELP, app

try:  # typer 0.2x carries its own copy of click
    from typer._click import Context
except ImportError:
    from click import Context

GROUP = typer.main.get_command(app)
COMMANDS = sorted(GROUP.commands)


def _help(cmd, name: str) -> str:
    with Context(cmd, info_name=name, terminal_width=80, max_content_width=80) as ctx:
        return cmd.get_help(ctx)


def _flat(s: str) -> str:
    """Wrapped text back on one line: a word broken after its hyphen joined without a space."""
    return re.sub(r"\s+", " ", re.sub(r"(?<=\w)-\n\s+", "-", s)).strip()


def test_the_command_list_shows_each_commands_whole_short_help():
    text = _help(GROUP, "inductor-bench")
    assert len(SHORT_HELP) == len(COMMANDS) == 7
    for short in SHORT_HELP.values():
        assert short in text
    assert "..." not in text.split("Commands:")[1]


@pytest.mark.parametrize("name", COMMANDS)
def test_every_options_help_is_there_whole(name):
    cmd = GROUP.commands[name]
    text = _help(cmd, name)
    assert max(len(ln) for ln in text.splitlines()) <= 80, text
    assert not set(text) & set("…╭╮╰╯│─"), text
    flat = _flat(text)
    for p in cmd.params:
        if p.help:
            assert _flat(p.help) in flat, p.name


def test_the_top_level_help_lists_every_exit_status_the_errors_carry():
    """`inductor-bench --help` ends with what each exit status means: every code an error of the
    tool exits with (core/errors.py, a write that failed), the internal error, and 128 + signal."""
    from inductor_bench.core import errors
    from inductor_bench.runner.rundir import WriteError

    text = _flat(_help(GROUP, "inductor-bench")).split("Commands:")[1]
    codes = {c.exit_code for c in vars(errors).values() if isinstance(c, type) and hasattr(c, "exit_code")}
    assert codes | {WriteError.exit_code} == {1, 2, 3, 4, 5, 74, 130}
    for phrase in ("Exit status: 0 ok;", "; 1 a significant regression (--fail-on-regression);",
                   "; 2 bad input or device;", "; 3 the model or its compilation failed;",
                   "; 4 a worker crashed or timed out;", "; 5 not comparable, no verdict;",
                   "; 70 a bug in inductor-bench", "; 74 a file or stdout could not be written;",
                   "; 128 + the signal when stopped (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP)."):
        assert phrase in text


# what each command's usage line names its arguments: upper case, as the README writes them
USAGE = {
    "analyze": "[OPTIONS] {TRACE}...",
    "breakdown": "[OPTIONS] {MODEL} [SCRIPT_ARGS]...",
    "compare": "[OPTIONS] {MODEL}...",
    "diff": "[OPTIONS] {BASE} {HEAD}",
    "kernel": "[OPTIONS] {PATH} [KERNEL_NAME]",
    "report": "[OPTIONS] {RUN_DIR}",
    "sweep": "[OPTIONS] {MODEL}...",
}


@pytest.mark.parametrize("name", COMMANDS)
def test_every_argument_is_named_in_upper_case(name):
    """The usage line, the Arguments list and a missing argument's error name each argument
    alike, in upper case (MODEL, RUN_DIR), never by its lower-case parameter name."""
    cmd = GROUP.commands[name]
    text = _help(cmd, name)
    assert text.splitlines()[0] == f"Usage: {name} {USAGE[name]}"
    args = [p for p in cmd.params if p.param_type_name == "argument"]
    listed = text.split("Arguments:")[1].split("Options:")[0]
    for p in args:
        shown = p.metavar or p.name  # typer lists an argument by its metavar, else its name
        assert shown.isupper(), p.name
        assert re.search(rf"^  {re.escape(shown)}(\.\.\.)? <", listed, re.M), p.name


def test_the_gates_name_every_option_that_makes_a_baseline_another_workload():
    """A baseline that ran another batch size, dtype or autocast is not judged (exit 5) by diff
    and by sweep --baseline alike; sweep's --fail-on-regression named batch size and dtype alone."""
    from types import SimpleNamespace

    from inductor_bench.core.other_workload import other_workload

    base = SimpleNamespace(dtype="float32", autocast=False, batch_size=64)
    assert other_workload(base, SimpleNamespace(dtype="float32", autocast=True, batch_size=64)) == [
        "autocast off -> on"]
    for name in ("diff", "sweep"):
        option = next(p for p in GROUP.commands[name].params if p.name == "fail_on_regression")
        assert "ran another workload (batch size, dtype, autocast)" in _flat(option.help), name


def test_json_to_stdout_is_said_to_take_the_text_reports_place(capsys):
    """`--json -` prints the JSON alone, where the text report would be; the help said "Also
    write the JSON here ('-' = stdout)", as if the report were printed beside it."""
    import json
    from pathlib import Path

    from inductor_bench.cli import main

    trace = Path(__file__).parent / "fixtures" / "hta_small" / "event_sync_trace.json.gz"
    main(["analyze", str(trace), "--json", "-"])
    assert json.loads(capsys.readouterr().out)["schema"] == "inductor-bench/analyze"
    for name in ("analyze", "breakdown", "compare", "diff", "kernel", "sweep"):
        option = next(p for p in GROUP.commands[name].params if p.name in ("json_out", "json"))
        assert option.help == "Also write the JSON here ('-': stdout, in place of the text report).", name
