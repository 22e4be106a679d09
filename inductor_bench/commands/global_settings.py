"""The global options (before the command), kept in typer's context object.

Apart from ``options.py`` (which re-exports them) so that the command line can hold them
without importing what the commands' options need."""

from __future__ import annotations

from dataclasses import dataclass, field

import typer


@dataclass
class Settings:
    """Global options (before the command), kept in typer's context object."""

    verbose: bool = False
    # The user's Inductor variables no worker gets (``worker.scrubbed_variables``), as the
    # command line found them (torch sets some in a process that imports it).
    dropped_env: list[str] = field(default_factory=list)


def settings(ctx: typer.Context) -> Settings:
    return ctx.obj if isinstance(ctx.obj, Settings) else Settings()
