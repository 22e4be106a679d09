"""A list of names cut for one line: ``a, b, c and 4 more``. Pure."""

from __future__ import annotations

from collections.abc import Sequence


def first_few(words: Sequence[str], shown: int) -> str:
    """The first ``shown`` of ``words`` joined by commas, and how many more there are."""
    more = len(words) - shown
    return ", ".join(words[:shown]) + (f" and {more} more" if more > 0 else "")
