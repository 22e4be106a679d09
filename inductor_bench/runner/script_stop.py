"""Stop a script after a time (``breakdown --script-seconds``): a long training loop need not
run to its end for its graphs to be compiled, called and recorded. What it compiled by then is
profiled, and its calls are counted up to then.

When the time is up the script stops as the next call of a compiled graph returns
(``after_graph_call``, from the compile worker's wrapper of every compiled module's ``call``):
a graph it has compiled has been called, and no compile is cut in half. A script that calls no
graph of its own (its graphs replayed as CUDA graphs, or hours of eager code) is stopped
wherever it is once as long again has passed."""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Iterator
from typing import Any

RETRY_S = 1.0
_AT_NEXT_CALL = [False]  # the time is up: the next graph call to return stops the script


class ScriptStopped(BaseException):
    """Raised in the script when its time is up: a ``BaseException``, as ``KeyboardInterrupt``
    is, so that the script's own ``except Exception`` does not swallow it."""


def after_graph_call() -> None:
    """Stop the script here if its time is up."""
    if _AT_NEXT_CALL[0]:
        raise ScriptStopped


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
        if not state["running"]:
            return
        state["due"] = _AT_NEXT_CALL[0] = True
        if time.perf_counter() - t0 >= 2 * seconds:  # no graph call came; again every RETRY_S
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
        state["running"] = _AT_NEXT_CALL[0] = False  # from now on no alarm or call stops anything
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
