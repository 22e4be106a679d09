"""What differs between two command lines, option by option (pure; no torch).

``--dtype float32 --windows 5 --train`` against ``--dtype float32 --windows 5`` is one
change, ``--train``; a refusal names that change rather than both lines in full.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass


@dataclass(frozen=True)
class ArgChange:
    """One option that differs: its values on each side (``""``: a flag given without a value;
    None: not given on that side). ``option`` is empty for the words given before any option."""

    option: str
    there: str | None
    here: str | None

    def words(self, there: str = "there", here: str = "here") -> str:
        """``--train here, not there``; ``--dtype float32 there, bfloat16 here``."""
        a, b = self.there, self.here
        if a is None or b is None:
            side, other, value = (here, there, b) if a is None else (there, here, a)
            return f"{_given(self.option, value)} {side}, not {other}"
        if a and b and self.option:
            return f"{self.option} {a} {there}, {b} {here}"
        return f"{_given(self.option, a)} {there}, {_given(self.option, b)} {here}"


def _given(option: str, value: str | None) -> str:
    return " ".join(w for w in (option, value) if w) or "nothing"


def _options(args: list[str]) -> dict[str, str]:
    """Each option with its values (``--x=1`` as ``--x 1``; an option given twice, its values
    in order); the words before any option under ``""``."""
    out: dict[str, list[str]] = {}
    key = ""
    for a in args:
        if a.startswith("-") and len(a) > 1 and not _number(a):
            key, _, value = a.partition("=")
            out.setdefault(key, []).extend([value] if value else [])
        else:
            out.setdefault(key, []).append(a)
    return {k: shlex.join(v) for k, v in out.items()}


def _number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


def arg_changes(there: list[str], here: list[str]) -> list[ArgChange]:
    """Each option whose value differs between the two lines, in the order first given (there's
    options, then those only here). Two lines that differ only in their order give one change
    holding both lines whole."""
    a, b = _options(there), _options(here)
    keys = [*a, *(k for k in b if k not in a)]
    out = [ArgChange(k, a.get(k), b.get(k)) for k in keys if a.get(k) != b.get(k)]
    if not out and there != here:
        out = [ArgChange("", shlex.join(there), shlex.join(here))]
    return out
