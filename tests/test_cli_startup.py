"""What the command line imports to start: `inductor-bench --help` lists the commands without
importing any command's module, a command imports its own module and no other, and the commands
that read saved results or traces (analyze, report, diff) run with torch unimportable."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import typer
import typer.main

from inductor_bench.cli import EXIT_STATUS, SHORT_HELP, app, main

from .conftest import FIXTURES, ROOT
from .no_torch import CLI_WITHOUT_TORCH

try:  # typer 0.2x carries its own copy of click
    from typer._click import Context
except ImportError:
    from click import Context

COMMAND_MODULES = [f"inductor_bench.commands.{name}" for name in SHORT_HELP]

# the command line run, then which command modules and whether torch were imported
LOADED_AFTER = r"""
import json, sys
from inductor_bench.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
mods = sorted(m for m in sys.modules if m.split(".")[:2] == ["inductor_bench", "commands"])
print(json.dumps({"modules": mods, "torch": "torch" in sys.modules}), file=sys.stderr)
"""


def _loaded_after(*argv: str) -> dict:
    r = subprocess.run([sys.executable, "-c", LOADED_AFTER, *argv], capture_output=True, text=True,
                       cwd=ROOT, timeout=300, check=False)
    return json.loads(r.stderr.splitlines()[-1])


def _commands_of(loaded: dict) -> set[str]:
    return {m.rsplit(".", 1)[1] for m in loaded["modules"] if m in COMMAND_MODULES}


def test_the_help_imports_no_command():
    loaded = _loaded_after("--help")
    assert _commands_of(loaded) == set()
    assert not loaded["torch"]


@pytest.mark.parametrize(("argv", "command"), [
    (["report", "/nonexistent"], "report"),
    (["analyze", "--help"], "analyze"),
    (["diff", "/nonexistent", "/nonexistent"], "diff"),
])
def test_a_command_imports_its_own_module_alone(argv, command):
    loaded = _loaded_after(*argv)
    assert _commands_of(loaded) == {command}
    assert not loaded["torch"]


def _help(cmd, name: str) -> str:
    with Context(cmd, info_name=name, terminal_width=80, max_content_width=80) as ctx:
        return cmd.get_help(ctx)


def _eager_group():
    """The command line as typer builds it with every command registered up front."""
    import importlib

    eager = typer.Typer(name="inductor-bench", help=app.info.help, epilog=EXIT_STATUS,
                        no_args_is_help=True, add_completion=False, rich_markup_mode=None)
    eager.callback()(app.registered_callback.callback)
    for name, short in SHORT_HELP.items():
        module = importlib.import_module(f"inductor_bench.commands.{name}")
        eager.command(short_help=short)(getattr(module, name))
    return typer.main.get_command(eager)


def test_the_help_reads_as_with_every_command_imported_up_front():
    lazy, eager = typer.main.get_command(app), _eager_group()
    assert _help(lazy, "inductor-bench") == _help(eager, "inductor-bench")
    assert list(lazy.commands) == list(eager.commands) == list(SHORT_HELP)
    for name in SHORT_HELP:
        assert _help(lazy.commands[name], name) == _help(eager.commands[name], name)


def test_a_command_not_in_the_table_is_no_command(capsys):
    with pytest.raises(SystemExit) as ended:
        main(["analyz"])
    assert ended.value.code == 2
    assert "No such command 'analyz'. Did you mean 'analyze'?" in capsys.readouterr().err


RUN = FIXTURES / "runs" / "cpu_mlp_train_stalled"
QUIET = FIXTURES / "results" / "cpu_mlp_train_quiet"
SLOW = FIXTURES / "results" / "cpu_mlp_slow_train"
TRACE = FIXTURES / "cpu_mlp_train" / "0-forward" / "trace.json.gz"


@pytest.mark.parametrize("argv", [
    ["analyze", str(TRACE), "--format", "json"],
    ["report", str(RUN), "--format", "json"],
    ["diff", str(QUIET), str(SLOW), "--format", "json"],
], ids=["analyze", "report", "diff"])
def test_reading_commands_run_with_torch_blocked(argv, capsys):
    """Each gives with torch and triton unimportable the JSON it gives in this process."""
    r = subprocess.run([sys.executable, "-c", CLI_WITHOUT_TORCH, *argv], capture_output=True,
                       text=True, cwd=ROOT, timeout=300, check=False)
    try:
        main(argv)
    except SystemExit as e:
        assert e.code in (0, None)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout) == json.loads(capsys.readouterr().out)
