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
