"""Progress lines for long phases, on stderr so that stdout stays clean for reports and JSON."""

from __future__ import annotations

import contextlib
import shutil
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from typing import TextIO

from ..core.progress import Progress


class TerminalProgress(Progress):
    """``with progress.phase("compiling mlp.py"): ...`` prints the phase, then its outcome
    (``failed`` where it raised, or the phase's own words for it in ``["failed"]``;
    ``interrupted`` where a stop cut it short) and duration. On a terminal a spinner shows
    while the phase runs, with the seconds so far (a cold compile of a small GPT-2's training
    step ran 145 s behind a spinner alone) and, with ``follow``, that file's last line."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def note(self, msg: str) -> None:
        say(fitted(msg, self.stream), self.stream)

    @contextlib.contextmanager
    def phase(self, msg: str, follow: str | None = None) -> Iterator[dict[str, str]]:
        outcome: dict[str, str] = {}
        t0 = time.perf_counter()
        word = "failed"
        try:
            with self._showing(msg, follow):
                yield outcome
            word = outcome.get("done", "done")
        except KeyboardInterrupt:  # Ctrl-C, or a stop signal (runner/stop.py): cut short, not done
            word = "interrupted"
            raise
        except BaseException:
            word = outcome.get("failed", word)
            raise
        finally:
            say(fitted(f"{msg}: {word} ({time.perf_counter() - t0:.1f} s)", self.stream), self.stream)

    @contextlib.contextmanager
    def _showing(self, msg: str, follow: str | None) -> Iterator[None]:
        if not self._tty:
            say(f"{msg} ...", self.stream)
            yield
            return
        from rich.console import Console
        from rich.markup import escape

        with Console(file=self.stream).status(escape(f"{msg} ...")) as status:
            done = threading.Event()
            t0 = time.monotonic()

            def show() -> None:  # the seconds so far; under them, the followed file's last line
                while not done.wait(FOLLOW_EVERY_S):
                    line = last_line(follow) if follow is not None else ""
                    text = f"{msg} ... {time.monotonic() - t0:.0f} s" + (f"\n  {line}" if line else "")
                    status.update(escape(text))

            shower = threading.Thread(target=show, daemon=True)
            shower.start()
            try:
                yield
            finally:
                done.set()
                shower.join()


def fitted(line: str, stream: TextIO) -> str:
    """``line``, where ``stream`` is a terminal narrower than it, broken at spaces to its width,
    the lines after the first indented (a path or a name is never cut, and may run past it); a
    log keeps it whole."""
    tty = bool(getattr(stream, "isatty", lambda: False)())
    width = shutil.get_terminal_size().columns if tty else 0
    if not width or len(line) <= width:
        return line
    return textwrap.fill(line, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)


def note(line: str) -> None:
    """A line on stderr (a note beside the report), fitted to the terminal it may be."""
    say(fitted(line, sys.stderr), sys.stderr)


def say(line: str, stream: TextIO) -> None:
    """``line`` on ``stream``, or nowhere where it cannot be written (a closed pipe, ``2>&1 |
    head``): a progress line or a note is no result, and losing it must not stop a run midway,
    its graphs unprofiled."""
    with contextlib.suppress(OSError, ValueError):
        print(line, file=stream, flush=True)


FOLLOW_EVERY_S = 1.0
FOLLOW_CHARS = 70  # of the followed line, at most


def last_line(path: str, tail: int = 4096) -> str:
    """The last non-blank line of the file (of its last ``tail`` bytes), cut to
    ``FOLLOW_CHARS``; "" where it has none or cannot be read."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - tail))
            data = f.read().decode(errors="replace")
    except OSError:
        return ""
    lines = [ln.strip() for ln in data.replace("\r", "\n").splitlines() if ln.strip()]
    if not lines:
        return ""
    line = lines[-1]
    return line if len(line) <= FOLLOW_CHARS else line[: FOLLOW_CHARS - 1] + "…"
