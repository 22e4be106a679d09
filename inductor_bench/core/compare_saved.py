"""Compare results saved by earlier versions of the tool, read as today's."""

from __future__ import annotations

from typing import Any


def one_file_named(result: Any) -> Any:
    """A compare of one model file given a name (``--names x``) saved before such a name titled
    the comparison: its columns were labelled ``x:eager`` while ``models`` stayed empty. Read as
    today's (the plain modes, the name its title), so ``diff`` matches its columns with those of a
    run saved since, and with another such run of another name, where it matched none."""
    named = {m.model for m in result.modes}
    if result.models or len(named) != 1 or not (name := named.pop()):
        return result
    for m in result.modes:
        m.model = ""
    result.model = name
    return result
