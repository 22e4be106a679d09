"""Where the compile worker had got to when ``--timeout`` killed it.

The worker runs the model's first call (the compile), then times its steady steps (and, where
the device table says so, its step and graphs in turns, then a few steps profiled). Killed, it
answers nothing, so each phase it enters is written to a small file beside its log (its log
alone would not do: ``--verbose`` sends the worker's output to the terminal). A column that
compiled in 42 s and ran past its timeout while timing 10**6 steps had been shown as
``compiling mlp.py (...): failed``, its report saying only that the compile worker was killed,
its compile time left out: the phase named now is the one that ran past the timeout.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..core.errors import WorkerTimeout

FIRST_CALL = "first call"
WAITING = "waiting for its profiling workers to start"
TIMING = "timing its steps"
TURNS = "timing its step and graphs in turns"
PROFILING = "profiling a few steps"

_path: Path | None = None  # the worker's phase file (``attach``)
# What a script killed by --timeout is told: the way to profile a long script without its end.
SCRIPT_SECONDS = ("--script-seconds S stops a long script after S seconds, its graphs' calls counted "
                  "up to then")


def phase_file(log_path: Path) -> Path:
    """The phase file of the worker whose log is ``log_path``."""
    return log_path.with_name(log_path.stem + ".phase.json")


# -- the worker's side -------------------------------------------------------------------------


def attach(path: str | None) -> None:
    """Write the phases of this worker to ``path`` (None: nowhere)."""
    global _path
    _path = Path(path) if path else None
    enter(FIRST_CALL)


def enter(phase: str, first_call_s: float | None = None) -> None:
    """The worker is now in ``phase``; ``first_call_s``: its first call's seconds, once known."""
    if _path is None:
        return
    with contextlib.suppress(OSError):  # where it got to is an addition: its loss loses nothing else
        _path.write_text(json.dumps({"phase": phase, "first_call_s": first_call_s}))


# -- the parent's side -------------------------------------------------------------------------


def read(path: Path) -> dict[str, Any]:
    """The last phase written to ``path``: {"phase", "first_call_s"}, or {} where none was."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@contextlib.contextmanager
def named_on_timeout(
    path: Path, timeout: float, compiled: bool, outcome: dict[str, str], *, script: bool = False
) -> Iterator[None]:
    """Around the compile worker's run: where ``WorkerTimeout`` stops it after its first call
    finished, the error raised instead says which phase ran past ``timeout`` (and how long the
    first call took: ``partial["compile_s"]``), and ``outcome["failed"]`` the progress line's
    word for it. ``compiled``: whether the first call compiled (not an eager run). Killed
    before, the error stands, and the progress line says where the worker was; a ``script``
    killed while it ran is said to be (not "compiling": a training loop runs on long after its
    compiles), and ``--script-seconds`` named."""
    try:
        yield
    except WorkerTimeout as e:
        seen = read(path)
        first_s = seen.get("first_call_s")
        if script and seen:
            outcome["failed"] = f"ran past --timeout {timeout:g}s (running the script)"
            killed = f"the script ran past --timeout {timeout:g}s and was killed"
            raise WorkerTimeout(f"{killed} ({SCRIPT_SECONDS}){_log_words(str(e))}") from None
        if seen.get("phase") in (None, FIRST_CALL) or not isinstance(first_s, (int, float)):
            where = "starting" if not seen else "compiling" if compiled else "its first call"
            outcome["failed"] = f"ran past --timeout {timeout:g}s ({where})"
            raise
        done = f"compiled in {first_s:.1f} s" if compiled else f"its first call took {first_s:.1f} s"
        what = f"{done}, then {seen['phase']} ran past --timeout {timeout:g}s"
        outcome["failed"] = what
        worker = str(e).split(" exceeded ", 1)[0]  # "capture worker"
        err = WorkerTimeout(f"{worker} killed: {what}{_log_words(str(e))}")
        err.partial = {"compile_s": float(first_s)}  # type: ignore[attr-defined]
        raise err from None


def _log_words(message: str) -> str:
    """`` (log: PATH)`` of a worker error's message, where it has one."""
    at = message.rfind(" (log: ")
    return message[at:] if at >= 0 else ""
