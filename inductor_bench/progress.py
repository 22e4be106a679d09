"""Progress lines for long phases, on stderr so that stdout stays clean for reports and JSON."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from typing import TextIO


class Progress:
    """``with progress.phase("compiling mlp.py"): ...`` prints the phase, then its outcome
    and duration. On a terminal a spinner shows while the phase runs."""

    def __init__(self, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def note(self, msg: str) -> None:
        if self.enabled:
            print(msg, file=self.stream, flush=True)

    @contextlib.contextmanager
    def phase(self, msg: str) -> Iterator[dict[str, str]]:
        """Yields a dict; set ``["done"]`` to a short outcome to print after the duration."""
        outcome: dict[str, str] = {}
        t0 = time.perf_counter()
        status_cm = contextlib.nullcontext()
        if self.enabled and self._tty:
            from rich.console import Console

            status_cm = Console(file=self.stream).status(f"{msg} ...")
        elif self.enabled:
            print(f"{msg} ...", file=self.stream, flush=True)
        failed = True
        try:
            with status_cm:
                yield outcome
            failed = False
        finally:
            if self.enabled:
                dt = time.perf_counter() - t0
                word = "failed" if failed else outcome.get("done", "done")
                print(f"{msg}: {word} ({dt:.1f} s)", file=self.stream, flush=True)


QUIET = Progress(enabled=False)
