"""Stopping a run on a signal, the same way whichever signal it is.

Ctrl-C (SIGINT), ``kill`` and CI cancellation (SIGTERM) and a closed terminal (SIGHUP) all
raise ``Stopped`` (a KeyboardInterrupt) in the main process, so every path that already
stops its workers and saves what was measured on Ctrl-C does so on each of them. Only the
first signal stops the run: later ones (a user pressing Ctrl-C again, a supervisor repeating
TERM) are noted and ignored, so they cannot land in the code that saves the result.
``shielded()`` holds a first signal back while a result is written and raises it after, carrying
the error of a save that failed meanwhile (``saved_first`` says both in the stop's line).

The exit status of a stopped run is 128 + the signal's number (130 for Ctrl-C, 143 for TERM).
Workers die with the process that started them (``die_with_parent``, in the worker)."""

from __future__ import annotations

import contextlib
import copy
import ctypes
import ctypes.util
import os
import signal
from collections.abc import Iterator

from ..core import errors

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
PARENT_ENV = "INDUCTOR_BENCH_PARENT_PID"  # set for every worker: the pid it must outlive not
_PR_SET_PDEATHSIG = 1


class Stopped(KeyboardInterrupt):
    """A stop signal reached the main process; ``unsaved``: the error of the save it was held
    back during (a full disk), which raising the stop replaced."""

    def __init__(self, signum: int, unsaved: BaseException | None = None) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.unsaved = unsaved


class _State:
    first: int | None = None  # the signal that stopped the run
    shield_depth = 0
    held: int | None = None  # a first signal that arrived under shielded()
    finished = False  # the command has ended: only cleaning up is left


def install() -> None:
    """Route every stop signal to ``Stopped``. A signal the process was started ignoring
    stays ignored (``nohup`` ignores SIGHUP; a background job of a non-interactive shell
    SIGINT)."""
    for sig in STOP_SIGNALS:
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, _on_signal)


def _on_signal(signum: int, frame: object) -> None:
    if _State.first is not None or _State.finished:
        return  # already stopping: the save that follows must not be cut short
    if _State.shield_depth:
        _State.held = _State.held or signum
        return
    _State.first = signum
    raise Stopped(signum)


@contextlib.contextmanager
def shielded() -> Iterator[None]:
    """Hold a stop signal back until the block ends (writing a result), then raise it, carrying
    the error the block ended with, if any (``Stopped.unsaved``)."""
    _State.shield_depth += 1
    failed: BaseException | None = None
    try:
        yield
    except BaseException as e:
        failed = e
        raise
    finally:
        _State.shield_depth -= 1
        held, _State.held = _State.held, None
        if held is not None and not _State.shield_depth and _State.first is None:
            _State.first = held
            raise Stopped(held, failed)


@contextlib.contextmanager
def saved_first(failure: errors.BenchError | None, kept: str) -> Iterator[None]:
    """The block saves what a run measured once it ended (``failure``: its error, an
    ``Interrupted`` where a stop ended it), a stop signal held back meanwhile (``shielded``). A
    save that fails (a full disk) once a stop came, before or held back during it, leaves the stop
    the exit status (128 + the signal), not the write's 74: an ``Interrupted`` whose line says the
    stop, the run's failure where the run ended before the stop, then the failed write. ``kept``:
    where what was measured is saved, as a stop held back during the save says it."""
    try:
        with shielded():
            yield
    except Stopped as e:
        if not isinstance(e.unsaved, errors.BenchError):
            raise
        also = f"; also, {failure}" if failure is not None else ""
        line = f"interrupted as the result was saved; {kept}{also}; also, {e.unsaved}"
        raise errors.Interrupted(line) from None
    except errors.BenchError as e:
        if not isinstance(failure, errors.Interrupted) or isinstance(e, errors.Interrupted):
            raise
        raise errors.Interrupted(f"{failure}; also, {e}") from None


def with_unsaved(stopped: KeyboardInterrupt, *failed: BaseException) -> KeyboardInterrupt:
    """``stopped``, its ``unsaved`` saying in one line every save that failed (its own, then
    ``failed``: the saves made as the stop was handled), each line once; ``stopped`` itself
    where none failed."""
    errors = [e for e in (getattr(stopped, "unsaved", None), *failed) if e is not None]
    if not errors:
        return stopped
    unsaved = copy.copy(errors[0])  # its kind, so what reads it tells a failed write
    unsaved.args = ("; also, ".join(dict.fromkeys(str(e) for e in errors)),)
    return Stopped(getattr(stopped, "signum", None) or received() or signal.SIGINT, unsaved)


def received() -> int | None:
    """The signal that stopped the run, if one did."""
    return _State.first


def exit_status(signum: int | None) -> int:
    """128 + the signal's number, the shell's convention; 130 (Ctrl-C) when unknown."""
    return 128 + (signum or signal.SIGINT)


def reset() -> None:
    """Forget a stop (tests that run commands in one process)."""
    _State.first, _State.held, _State.shield_depth, _State.finished = None, None, 0, False


# -- processes the run leaves behind ------------------------------------------------------------

_PR_SET_CHILD_SUBREAPER = 36


def adopt_orphans() -> None:
    """Linux: processes a worker or the model starts that lose their parent (a daemon that
    forked twice, a child of a killed worker) become this process's children instead of
    init's, so that ``end_leftovers`` finds them."""
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def end_leftovers() -> list[int]:
    """Once the command has ended: stop signals are ignored from now on (Python would put
    back their default action, death, while it shuts down), every process still below this
    one is killed and reaped; the pids it killed."""
    from .machine import descendants

    _State.finished = True
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    left = descendants(os.getpid())
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    for pid in left:
        with contextlib.suppress(ChildProcessError, OSError):  # not our child: init reaps it
            os.waitpid(pid, 0)
    return left


# -- in the worker ------------------------------------------------------------------------------


def die_with_parent() -> None:
    """In a worker, first thing: when the process that started it dies, the worker's whole
    process group (the model's children included) is killed. Linux delivers SIGTERM on the
    parent's death (``prctl(PR_SET_PDEATHSIG)``); the handler kills the group. A parent already
    gone before this ran is seen by its pid (``PARENT_ENV``), and the worker leaves."""
    expected = os.environ.pop(PARENT_ENV, "")
    if not expected.isdigit():  # not started by ``worker.spawn``: nothing to die with
        return
    signal.signal(signal.SIGTERM, _kill_own_group)
    _set_parent_death_signal(signal.SIGTERM)
    if os.getppid() != int(expected):
        _kill_own_group(signal.SIGTERM, None)


@contextlib.contextmanager
def sigint_noted() -> Iterator[dict[str, bool]]:
    """In a worker, around the user's code: a SIGINT that reaches the process still raises
    KeyboardInterrupt, and the state it yields says ``received``, so that a KeyboardInterrupt the
    code raised itself is told apart from one a signal raised. (A user's Ctrl-C never reaches a
    worker: it runs in a session of its own, and the tool kills it.) A SIGINT the worker was
    started ignoring stays ignored."""
    state = {"received": False}

    def note(signum: int, frame: object) -> None:
        state["received"] = True
        raise KeyboardInterrupt

    before = signal.getsignal(signal.SIGINT)
    if before is signal.default_int_handler:
        signal.signal(signal.SIGINT, note)
    try:
        yield state
    finally:
        if before is signal.default_int_handler:
            signal.signal(signal.SIGINT, before)


def _set_parent_death_signal(sig: int) -> bool:
    return _prctl(_PR_SET_PDEATHSIG, int(sig))


def _prctl(option: int, value: int) -> bool:
    """Linux's prctl(2); False elsewhere (the standby worker also polls for its parent)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _kill_own_group(signum: int, frame: object) -> None:
    """The worker's group, itself included, when it leads one (``spawn`` starts a session)."""
    try:
        if os.getpgid(0) == os.getpid():
            os.killpg(0, signal.SIGKILL)
    finally:
        os._exit(128 + signum)
