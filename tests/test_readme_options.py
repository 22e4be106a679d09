"""The options the README names are the commands' own: every ``--option`` in the user manual
(README.md up to its Tests section, the script's own arguments after ``--`` left out) is one some
command (or ``inductor-bench`` itself) takes, each command line written out in README.md and
docs/ gives its command options it takes, and every option a command takes is named in the
README or in docs/, so neither drifts from ``--help``."""

from __future__ import annotations

import re
from pathlib import Path

import typer.main

from inductor_bench.cli import app

ROOT = Path(__file__).resolve().parents[1]
GROUP = typer.main.get_command(app)
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
ANY_OPTION = re.compile(r"(?<![\w-])--?[a-zA-Z][\w-]*")
# a command line as the pages write it out: `inductor-bench [-v] CMD ...`, to its span's or line's end
COMMAND_LINE = re.compile(r"inductor-bench(?:\s+(?:-v|--verbose))?\s+(breakdown|report|analyze|kernel|"
                          r"compare|diff|sweep)\b([^`\n#]*)")
# named for comparison, not as ours: PyTorch's sharding flags beside --shard I/N
OTHERS = {"--partition-id", "--total-partitions"}


def _options(cmd, short: bool = False) -> set[str]:
    return {o for p in cmd.params for o in (*p.opts, *getattr(p, "secondary_opts", ()))
            if o.startswith("--") or (short and o.startswith("-"))}


def _commands_options() -> dict[str, set[str]]:
    found = {name: _options(cmd) for name, cmd in GROUP.commands.items()}
    found["inductor-bench"] = _options(GROUP) | {"--help"}
    return found


def _manual() -> str:
    """README's user manual: up to '## Tests', each line cut at ' -- ' (the script's arguments)."""
    text = (ROOT / "README.md").read_text().split("\n## Tests\n")[0]
    return "\n".join(_before_script_args(line) for line in text.splitlines())


def _before_script_args(line: str) -> str:
    return line.split(" -- ")[0]


def test_every_option_the_readme_names_is_one_a_command_takes():
    taken = set().union(*_commands_options().values())
    unknown = set(OPTION.findall(_manual())) - taken - OTHERS
    assert not unknown, f"README names options no command takes: {sorted(unknown)}"


def _misplaced(text: str) -> list[tuple[str, str]]:
    """(command, option) of each option a written-out command line gives a command that does not take it."""
    top = _options(GROUP, short=True) | {"--help"}
    return [(cmd, o) for cmd, rest in COMMAND_LINE.findall(text)
            for o in ANY_OPTION.findall(_before_script_args(rest))
            if o not in _options(GROUP.commands[cmd], short=True) | top]


def test_each_command_line_written_out_gives_its_command_options_it_takes():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    wrong = {p.name: _misplaced(p.read_text()) for p in pages if _misplaced(p.read_text())}
    assert not wrong, f"command lines with options their command does not take: {wrong}"
    assert _misplaced("`inductor-bench diff A B --modes default` and `inductor-bench compare m.py "
                      "--modes default -- --lr 1`") == [("diff", "--modes")]


def test_every_option_a_command_takes_is_documented():
    docs = (ROOT / "README.md").read_text() + "".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    named = set(OPTION.findall(docs))
    missing = {name: sorted(opts - named) for name, opts in _commands_options().items() if opts - named}
    assert not missing, f"options no README or docs page names: {missing}"


def test_the_check_reads_a_misspelt_option_as_unknown():
    taken = set().union(*_commands_options().values())
    line = _before_script_args("`diff A B --fail-on-regresion 10` and `breakdown train.py -- --epochs 1`")
    assert set(OPTION.findall(line)) - taken == {"--fail-on-regresion"}
