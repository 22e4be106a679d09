"""Progress lines for long phases, on stderr so that stdout stays clean for reports and JSON."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from typing import TextIO

from ..core.progress import Progress


class TerminalProgress(Progress):
    """``with progress.phase("compiling mlp.py"): ...`` prints the phase, then its outcome
    and duration. On a terminal a spinner shows while the phase runs."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def note(self, msg: str) -> None:
        print(msg, file=self.stream, flush=True)

    @contextlib.contextmanager
    def phase(self, msg: str) -> Iterator[dict[str, str]]:
        outcome: dict[str, str] = {}
        t0 = time.perf_counter()
        failed = True
        try:
            with self._showing(msg):
                yield outcome
            failed = False
        finally:
            word = "failed" if failed else outcome.get("done", "done")
            print(f"{msg}: {word} ({time.perf_counter() - t0:.1f} s)", file=self.stream, flush=True)

    def _showing(self, msg: str) -> contextlib.AbstractContextManager:
        if self._tty:
            from rich.console import Console

            return Console(file=self.stream).status(f"{msg} ...")
        print(f"{msg} ...", file=self.stream, flush=True)
        return contextlib.nullcontext()
