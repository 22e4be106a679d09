"""One job of a sweep: ``python -m inductor_bench compare ... --out RUN_DIR`` in a process of
its own, wherever an executor runs it (a thread here, a Ray task, a Slurm job).

``run_job`` is the same function everywhere: it starts the compare in its own session (so a
crash or a kill of one job touches no other), dies with it if the process running it dies,
waits for it, kills it past the job's time limit, stops it the way Ctrl-C does when asked, and
returns what happened (``JobOutcome``: the exit status, the console output). Where the job
cannot see the sweep's directory (a Ray worker on another machine without a shared file
system), the compare writes into a temporary directory, returned whole as a tar archive that
the sweep unpacks into its own directory (``unpack``).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import socket
import subprocess
import tarfile
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from . import python_start
from .rundir import WRITING_LOCK, lock_writing, writing
from .stop import _set_parent_death_signal
from .worker import END_POLL_S, exited, kill_group, worker_env

# Seconds a stopped compare gets to save what it measured (it takes well under one) before
# its process group is killed.
STOP_GRACE_S = 20.0
# The end of a job's console output that comes back with its outcome.
LOG_KEEP_BYTES = 64 * 1024


@dataclass
class Job:
    """What one job runs: ``python -m <argv> --out <its run directory>``."""

    model: str
    argv: list[str]  # after ``python -m``, without --out
    out_dir: str  # the run directory, absolute, in the sweep's directory
    timeout_s: float | None = None  # killed past this many seconds (None: no limit)
    cuda_devices: str | None = None  # CUDA_VISIBLE_DEVICES for it (None: as the job inherits)
    marker: tuple[str, str] | None = None  # (path, text): the job sees out_dir when it reads so


@dataclass
class JobOutcome:
    exit_code: int | None  # negative: killed by that signal; None: it never ran
    timed_out: bool = False
    stopped: bool = False  # it was asked to stop (the sweep was interrupted)
    seconds: float = 0.0
    where: str = ""  # host, and CUDA_VISIBLE_DEVICES as the compare saw it
    log: str = ""  # the end of its console output
    archive: bytes | None = None  # its run directory, when the job could not write it in place
    error: str | None = None  # the job could not run or report (the executor's words)


def run_job(job: Job, stop: threading.Event | None = None) -> JobOutcome:
    """Run ``job`` to its end (see the module's docstring). ``stop``: set it to stop the job
    as Ctrl-C would (a KeyboardInterrupt in this thread, as Ray's cancel raises, does too)."""
    in_place = _sees(job.marker)
    env = {"CUDA_VISIBLE_DEVICES": job.cuda_devices} if job.cuda_devices is not None else {}
    with tempfile.TemporaryDirectory(prefix="inductor-bench-job-") as tmp:
        target = Path(job.out_dir) if in_place else Path(tmp) / "run"
        log = Path(tmp) / "console.log"
        t0 = time.monotonic()
        with open(log, "wb") as logf:
            proc = _start([*job.argv, "--out", str(target)], logf, env)
            rc, timed_out, stopped = _wait(proc, job.timeout_s, stop)
        outcome = JobOutcome(
            exit_code=rc,
            timed_out=timed_out,
            stopped=stopped,
            seconds=time.monotonic() - t0,
            where=where(env),
            log=_tail(log),
        )
        if not in_place and target.is_dir():
            outcome.archive = pack(target)
        return outcome


def _start(args: list[str], logf: object, env: dict[str, str]) -> subprocess.Popen:
    """``python -m args`` (``python_start.py``) in a session of its own, its output to
    ``logf``; it gets SIGTERM (and stops as on Ctrl-C) when the thread that started it ends."""
    return subprocess.Popen(
        python_start.command(args[0], args[1:]),
        stdin=subprocess.DEVNULL,
        stdout=logf,
        stderr=subprocess.STDOUT,
        env=worker_env(env),
        start_new_session=True,
        preexec_fn=_in_job,
    )


def _in_job() -> None:
    """In the job's process, before the compare starts: it dies with the thread that started
    it, and Ctrl-C (SIGINT, which ``stop_job`` sends) stops it, even where the sweep was started
    ignoring SIGINT (a script's background job): in its own session no terminal's Ctrl-C reaches
    it, and a job deaf to the sweep's SIGINT would be killed past the grace, nothing saved."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    _set_parent_death_signal(signal.SIGTERM)


def _wait(
    proc: subprocess.Popen, timeout_s: float | None, stop: threading.Event | None
) -> tuple[int, bool, bool]:
    """(exit status, timed out, stopped)."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    try:
        while not exited(proc):
            if stop is not None and stop.is_set():
                return stop_job(proc), False, True
            if deadline is not None and time.monotonic() > deadline:
                return stop_job(proc), True, False  # what it measured saved, as on Ctrl-C
            time.sleep(END_POLL_S)
    except KeyboardInterrupt:
        return stop_job(proc), False, True
    return kill_group(proc), False, False  # what is left of its group goes with it


def stop_job(proc: subprocess.Popen) -> int:
    """Stop the compare as Ctrl-C does (it saves what it measured and exits 130), then end
    what is left of its process group; its exit status."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGINT)
    deadline = time.monotonic() + STOP_GRACE_S
    while not exited(proc) and time.monotonic() < deadline:
        time.sleep(END_POLL_S)
    return kill_group(proc)


def where(env: dict[str, str]) -> str:
    """``host`` and, where it is set, ``CUDA_VISIBLE_DEVICES=...`` as the job's compare sees it."""
    visible = env.get("CUDA_VISIBLE_DEVICES", os.environ.get("CUDA_VISIBLE_DEVICES"))
    return socket.gethostname() + (f" CUDA_VISIBLE_DEVICES={visible}" if visible is not None else "")


def _sees(marker: tuple[str, str] | None) -> bool:
    """Whether this process sees the sweep's directory: it reads the marker the sweep wrote."""
    if marker is None:
        return True
    try:
        return Path(marker[0]).read_text() == marker[1]
    except OSError:
        return False


def _tail(path: Path) -> str:
    with open(path, "rb") as f:
        f.seek(max(0, path.stat().st_size - LOG_KEEP_BYTES))
        return f.read().decode(errors="replace")


def pack(run_dir: Path) -> bytes:
    """A directory as a gzipped tar archive (paths relative to it)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(run_dir, arcname=".")
    return buf.getvalue()


def unpack(archive: bytes, dest: Path) -> None:
    """A job's run directory into ``dest``, which must not exist yet; members that would land
    outside it, links out of it or device files are refused (tarfile's ``data`` filter). It and
    its columns are held as being written (``rundir.WRITING_LOCK``) until the last file is out:
    meanwhile `report` says its result is not final and a re-analysis is refused. The job's own
    lock files, held by no one here, are left in the archive."""
    dest.mkdir(parents=True)
    with writing(), tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        lock_writing(dest)
        members = [m for m in tar.getmembers() if PurePosixPath(m.name).name != WRITING_LOCK]
        for m in members:  # a column (a directory at the top) held before its files land
            parts = PurePosixPath(m.name).parts
            if m.isdir() and len(parts) == 1 and parts[0] != "..":
                (dest / parts[0]).mkdir(exist_ok=True)
                lock_writing(dest / parts[0])
        tar.extractall(dest, members=members, filter="data")
