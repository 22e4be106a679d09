"""What a long phase reports while it runs: the interface the runner calls, silent here.

The runner announces phases and notes through a ``Progress`` it is given; the commands
give it one that prints (``commands/progress.py``), tests and nested runs the silent one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


class Progress:
    """Silent: phases run, nothing is shown. Subclasses show them."""

    def note(self, msg: str) -> None:
        """A line of information between phases."""

    @contextlib.contextmanager
    def phase(self, msg: str, follow: str | None = None) -> Iterator[dict[str, str]]:
        """Yields a dict; set ``["done"]`` to a short outcome to show after the phase, and
        ``["failed"]`` what to show instead of ``failed`` where the phase then raises.
        ``follow``: a file the phase writes to (a script's output), whose last line a
        terminal may show while the phase runs."""
        yield {}


QUIET = Progress()
