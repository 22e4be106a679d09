"""The commands by name, each one's module imported the first time the command is looked up.

``inductor-bench report RUN`` imports ``commands/report.py`` and what it needs, not the
profiler's analysis, the sweep's scheduler or the kernel benchmark; ``inductor-bench --help``
lists the commands from the table below without importing any of them.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping

import typer
import typer.main
from typer.core import TyperGroup
from typer.models import CommandInfo

# The command list of ``inductor-bench --help``, in its order (click would cut each docstring
# short): the command ``NAME`` is the function ``NAME`` of ``commands/NAME.py``.
SHORT_HELP = {
    "breakdown": "Where a compiled model spends its time, kernel by kernel.",
    "report": "Show a saved run again, in any format; no torch needed.",
    "analyze": "Break down any torch.profiler trace, one rank or several.",
    "kernel": "Benchmark one Inductor Triton kernel (--max-autotune too).",
    "compare": "One model in each compile mode, side by side.",
    "diff": "Two runs of the same model: what got faster, a merge gate.",
    "sweep": "Many models x every mode, one job per device, one table.",
}


def built_command(name: str, group: TyperGroup) -> typer.core.TyperCommand:
    """The click command of ``commands/NAME.py``'s function, built as ``app.command()`` would."""
    module = importlib.import_module(f"{__package__}.{name}")
    info = CommandInfo(callback=getattr(module, name), short_help=SHORT_HELP[name])
    return typer.main.get_command_from_info(
        info, pretty_exceptions_short=True, rich_markup_mode=group.rich_markup_mode)


class Commands(MutableMapping):
    """click's ``group.commands``: every name of the table, a command built when first read."""

    def __init__(self, group: TyperGroup) -> None:
        self._group = group
        self._built: dict[str, typer.core.TyperCommand] = {}

    def __getitem__(self, name: str):
        if name not in self._built:
            if name not in SHORT_HELP:
                raise KeyError(name)
            self._built[name] = built_command(name, self._group)
        return self._built[name]

    def __setitem__(self, name: str, command) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        raise TypeError("the command table is fixed")

    def __iter__(self) -> Iterator[str]:
        return iter({**dict.fromkeys(SHORT_HELP), **self._built})

    def __len__(self) -> int:
        return len(list(iter(self)))


class LazyGroup(TyperGroup):
    """``inductor-bench`` itself: its commands from ``Commands``, its help from ``SHORT_HELP``."""

    def __init__(self, **attrs) -> None:
        super().__init__(**attrs)
        self.commands = Commands(self)

    def list_commands(self, ctx) -> list[str]:
        return list(self.commands)

    def format_commands(self, ctx, formatter) -> None:
        """The command list as click writes it, each command's short help from the table."""
        with formatter.section("Commands"):
            formatter.write_dl(list(SHORT_HELP.items()))
