"""Stop a script after a time (``breakdown --script-seconds``): a long training loop need not
run to its end for its graphs to be compiled, called and recorded. What it compiled by then is
profiled, and its calls are counted up to then."""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Iterator
from typing import Any

RETRY_S = 1.0


class ScriptStopped(BaseException):
    """Raised in the script when its time is up: a ``BaseException``, as ``KeyboardInterrupt``
    is, so that the script's own ``except Exception`` does not swallow it."""


@contextlib.contextmanager
def stopped_after(seconds: float | None) -> Iterator[dict[str, Any]]:
    """Run the body, stopped after ``seconds`` (None: to its end). The state it yields holds
    ``stopped_s``: when it was stopped, or None where the body ended by itself."""
    state: dict[str, Any] = {"stopped_s": None, "due": False, "running": True}
    if not seconds:
        yield state
        return
    t0 = time.perf_counter()

    def time_up(signum: int, frame: Any) -> None:
        if state["running"]:  # again every RETRY_S, should the script catch it and go on
            state["due"] = True
            raise ScriptStopped

    before = signal.signal(signal.SIGALRM, time_up)
    signal.setitimer(signal.ITIMER_REAL, seconds, RETRY_S)
    try:
        yield state
    except ScriptStopped:
        state["stopped_s"] = time.perf_counter() - t0
    except Exception:
        if not state["due"]:
            raise
        state["stopped_s"] = time.perf_counter() - t0  # torch turned the stop into an error of its own
    finally:
        state["running"] = False  # an alarm from now on changes nothing
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
