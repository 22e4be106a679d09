"""What a script writes to stderr, passed through and its end kept: a script that fails says why
there last (argparse's ``error:`` line before it exits with status 2), and its error quotes it."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any, TextIO

TAIL_CHARS = 4096  # of what was written last, kept: enough for the last line of any usual message
QUOTED_CHARS = 300  # of that line, at most, in the error


class StderrTail:
    """Stands in for ``sys.stderr``: writes go through to it, and their last characters are kept."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._tail = ""

    def write(self, text: str) -> int:
        n = self.stream.write(text)
        self._tail = (self._tail + text)[-TAIL_CHARS:]
        return n

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding ...
        return getattr(self.stream, name)

    def last_line(self) -> str:
        """The last non-blank line written, stripped and cut to ``QUOTED_CHARS``; "" if none."""
        return _last_line(self._tail)


@contextlib.contextmanager
def kept_stderr() -> Iterator[StderrTail]:
    """``sys.stderr`` is a ``StderrTail`` of itself within; the stream it was is put back after."""
    tail = StderrTail(sys.stderr)
    sys.stderr = tail
    try:
        yield tail
    finally:
        sys.stderr = tail.stream


def exit_error(code: object, last_line: str) -> str:
    """The error of a script that called ``sys.exit(code)`` with a failing code: its status and
    what it said last on stderr, or the message it exited with (``sys.exit("no data")``, which
    Python would print and exit with status 1)."""
    if not isinstance(code, int):
        return f"the script exited with status 1: {_last_line(str(code))}"
    code = int(code)  # sys.exit(not ok): True is status 1
    said = f", its last line on stderr: {last_line}" if last_line else ""
    return f"the script exited with status {code}{said}"


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.replace("\r", "\n").splitlines() if ln.strip()]
    line = lines[-1] if lines else ""
    return line if len(line) <= QUOTED_CHARS else line[: QUOTED_CHARS - 1] + "…"


def with_log(message: str, log: str | None) -> str:
    """``message (log: PATH)``: where the script's whole output and the traceback are kept."""
    return f"{message} (log: {log})" if log else message
