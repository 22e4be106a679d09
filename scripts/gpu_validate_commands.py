"""The driver's commands and time: the budget, each step's deadline, commands run in process
groups of their own (which a stop ends), and reading what they left."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gpu_validate_parts as parts

ROOT = Path(__file__).resolve().parent.parent
FINISH_RESERVE_S = parts.RESERVE_S  # kept for a step's overrun (stopping it), the bundles and the report

class Aborted(Exception):
    """SIGTERM / SIGINT / the watchdog: stop the step in flight, write what ran."""


class SkipStep(Exception):
    """The step cannot run (budget, or what it needs did not happen); the reason is the text."""


# -- time ----------------------------------------------------------------------------------


class Budget:
    def __init__(self, total_s: float, reserve_s: float = FINISH_RESERVE_S, t0: float | None = None) -> None:
        self.t0 = time.monotonic() if t0 is None else t0  # the driver's start: the probe counts too
        self.total_s, self.reserve_s = total_s, reserve_s

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def left(self) -> float:
        return self.total_s - self.reserve_s - self.elapsed()

    def grant(self, cap: float, need: float) -> float | None:
        """Seconds for a step that may use ``cap`` and is worth starting with ``need``."""
        t = min(cap, self.left())
        return t if t >= need else None


class Deadline:
    """One step's share of the budget; its commands take from it."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()

    def take(self, cap: float, need: float = 5.0) -> float:
        t = min(cap, self.left())
        if t < need:
            raise SkipStep(f"budget: {max(self.left(), 0):.0f} s left of this step's share")
        return t


# -- commands ------------------------------------------------------------------------------

_LIVE: set[subprocess.Popen] = set()
_LIVE_LOCK = threading.Lock()
_STOPPING = threading.Event()  # set when aborting: no new command starts


@dataclass
class CmdResult:
    rc: int | None
    seconds: float
    timed_out: bool
    log: Path


def _stop(p: subprocess.Popen) -> None:
    """SIGINT to the command's process group first (the CLI then stops its own workers, which
    run in sessions of their own), SIGKILL 10 s later."""
    for sig, wait in ((signal.SIGINT, 10), (signal.SIGKILL, 5)):
        if p.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(p.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(timeout=wait)


def stop_all() -> None:
    _STOPPING.set()
    with _LIVE_LOCK:
        live = list(_LIVE)
    for p in live:
        _stop(p)


def run_cmd(
    cmd: list[str], *, timeout: float, log: Path, env: dict[str, str], stdout: Path | None = None
) -> CmdResult:
    """Run ``cmd`` in the repository root, in a process group of its own; stderr (and stdout
    unless ``stdout`` is given) to ``log``."""
    if _STOPPING.is_set():
        raise Aborted("stopping")
    log.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    with open(log, "ab") as lf, open(stdout, "wb") if stdout else contextlib.nullcontext() as of:
        lf.write(f"$ {shlex.join(cmd)}   # timeout {timeout:.0f} s\n".encode())
        lf.flush()
        p = subprocess.Popen(
            cmd,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=of or lf,
            stderr=lf,
            start_new_session=True,
        )
        with _LIVE_LOCK:
            _LIVE.add(p)
        timed_out = False
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _stop(p)
        except BaseException:
            _stop(p)
            raise
        finally:
            with _LIVE_LOCK:
                _LIVE.discard(p)
    return CmdResult(p.returncode, time.monotonic() - t0, timed_out, log)


def last_line(path: Path, skip: tuple[str, ...] = ("$ ",)) -> str:
    try:
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines()]
    except OSError:
        return ""
    lines = [ln for ln in lines if ln and not ln.startswith(skip)]
    return lines[-1][:300] if lines else ""


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        d = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return d if isinstance(d, dict) else None
