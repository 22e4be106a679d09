"""Worker processes: JSON in, JSON out, their own environment.

Everything that imports torch, compiles or launches kernels runs in a worker, so that a
crash, a hang or a poisoned device in the user's model becomes one clear error in the parent,
and Inductor config never leaks between runs. The parent calls ``run_worker``; the worker
module calls ``worker_main(handler)`` (``worker_entry.py``) from its ``__main__``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from ..core import errors
from . import python_start
from .machine import descendants
from .stop import PARENT_ENV

# Environment variables that would change what Inductor generates or where it caches:
# the parent's values never reach a worker unless the caller sets them on purpose.
_SCRUBBED_PREFIXES = ("TORCHINDUCTOR_", "TORCH_COMPILE_", "TRITON_CACHE_DIR", "TORCH_TRACE")
_LOG_TAIL_LINES = 12
# Kineto (torch 2.13+) writes one such line at every profiler session's start and stop; a
# profiling worker runs dozens of sessions, so they would fill the tail an error shows. The log
# file keeps them.
_PROFILER_MARKER = re.compile(r"^USDT:.*\] profiler_(start|stop)$")
# Seconds a worker may run before it is killed, unless --timeout says otherwise: compiling a
# large model, or autotuning a max-autotune space, can take many minutes.
DEFAULT_TIMEOUT_S = 900.0


def scrubbed_variables() -> list[str]:
    """The variables of this environment that no worker gets (``_SCRUBBED_PREFIXES``)."""
    return sorted(k for k in os.environ if k.startswith(_SCRUBBED_PREFIXES))


# The host heap on transparent huge pages (glibc 2.35+, where the kernel offers THP: "madvise"
# or "always"; elsewhere glibc ignores it). On 4 KiB pages where a process's buffers land in
# physical memory decides their cache conflicts: in 7 of 16 fresh processes a C++ kernel of
# models/mlp.py's backward ran 25-110% slower for the whole process, on huge pages in none
# (docs/statistics.md, "One process against the next"). A user's own setting of it is kept.
HEAP_TUNABLE = "glibc.malloc.hugetlb"
HEAP_ON_HUGE_PAGES = f"{HEAP_TUNABLE}=1"


def host_heap_tunables(current: str | None) -> str:
    """``GLIBC_TUNABLES`` for a worker: the user's own, with the heap on huge pages unless they
    set it themselves."""
    kept = [t for t in (current or "").split(":") if t]
    if any(t.split("=", 1)[0] == HEAP_TUNABLE for t in kept):
        return ":".join(kept)
    return ":".join([*kept, HEAP_ON_HUGE_PAGES])


def worker_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUBBED_PREFIXES)}
    env["PYTHONUNBUFFERED"] = "1"
    env["GLIBC_TUNABLES"] = host_heap_tunables(env.get("GLIBC_TUNABLES"))
    env.update(extra or {})
    return env


def tail(path: Path, n: int = _LOG_TAIL_LINES) -> str:
    """The log's last ``n`` lines, less the profiler's session markers."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join([line for line in lines if not _PROFILER_MARKER.match(line)][-n:])


def last_output(log: Path, log_path: Path | None) -> str:
    """What ends a worker's error after its first line: where its log is kept (on that first
    line, which is what reports keep), then the log's last lines."""
    t = tail(log)
    return (f" (log: {log_path})" if log_path else "") + (f"\nlast output:\n{t}" if t else "")


def run_worker(
    module: str,
    request: dict[str, Any],
    *,
    timeout: float,
    env: dict[str, str] | None = None,
    log_path: Path | None = None,
    echo: bool = False,
) -> dict[str, Any]:
    """Run ``python -m module request.json response.json`` and return the response.

    Raises WorkerTimeout past ``timeout`` seconds (the whole process group is killed),
    WorkerError when the process dies without a response, and the worker's own error class
    (UsageError, DeviceError, WorkloadError ...) when it reports one.
    """
    with tempfile.TemporaryDirectory(prefix="inductor-bench-") as tmp:
        req = Path(tmp) / "request.json"
        resp = Path(tmp) / "response.json"
        req.write_text(json.dumps(request))
        log = log_path or Path(tmp) / "worker.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as logf:
            proc = spawn([module, str(req), str(resp)], logf, env=env, echo=echo)
            try:
                rc = wait_ended(proc, timeout)
            except subprocess.TimeoutExpired:
                stacks_to_log(proc)
                kill_group(proc)
                raise errors.WorkerTimeout(
                    f"{module.rsplit('.', 1)[-1]} worker exceeded --timeout {timeout:g}s and was killed"
                    + (f" (log: {log_path})" if log_path else "")
                ) from None
            except KeyboardInterrupt:
                kill_group(proc)
                raise
        if resp.exists():
            try:
                return read_response(resp, log_path)
            except _Unreadable:
                pass
        raise errors.WorkerError(
            f"{module.rsplit('.', 1)[-1]} worker {describe_exit(rc)} without a result"
            + ended_by_code(rc) + last_output(log, log_path)
        )


def ended_by_code(rc: int) -> str:
    """Why a worker that exited with code ``rc`` gave no answer, where its code says: it exits
    with 0 only once its answer is written (``worker_main``), and Python with 1 on an error of
    its own (the traceback in its log), so 0 and the codes up to 127 are the model or script
    ending the process itself (``os._exit(3)``); '' for any other."""
    if rc == 0 or 2 <= rc < 128:
        return (f": the model or script it ran ended the process itself (os._exit({rc})) before it "
                "could answer")
    return ""


def spawn(args: list[str], logf: Any, *, env: dict[str, str] | None, echo: bool) -> subprocess.Popen:
    """``python -m <args>`` in its own session (so its whole process group can be killed),
    writing to ``logf`` (or to the terminal with ``echo``), with ``worker_env(env)``. It imports
    this very package, wherever this process found it, and a script it runs gets the
    ``sys.path`` that ``python`` gives it (``python_start.py``). It dies with this process
    (``stop.die_with_parent``)."""
    return subprocess.Popen(
        python_start.command(args[0], args[1:]),
        stdin=subprocess.DEVNULL,
        stdout=None if echo else logf,
        stderr=None if echo else subprocess.STDOUT,
        env=worker_env({**(env or {}), PARENT_ENV: str(os.getpid())}),
        start_new_session=True,
    )


END_POLL_S = 0.02


def exited(proc: subprocess.Popen) -> bool:
    """Whether the worker has ended, without reaping it: until ``kill_group`` reaps it, its
    pid (its process group's id) cannot be another process's."""
    if proc.returncode is not None:
        return True
    if not hasattr(os, "waitid"):  # macOS
        return proc.poll() is not None
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return proc.poll() is not None


def wait_ended(proc: subprocess.Popen, timeout: float) -> int:
    """Wait for the worker to end (TimeoutExpired past ``timeout`` seconds), then end what is
    left of its process group; its exit status."""
    deadline = time.monotonic() + timeout
    while not exited(proc):
        if time.monotonic() > deadline:
            raise subprocess.TimeoutExpired(proc.args, timeout)
        time.sleep(END_POLL_S)
    return kill_group(proc)


# Seconds a timed-out worker is given to write its threads' stacks to its log before it is killed.
STACKS_WAIT_S = 1.0


def stacks_to_log(proc: subprocess.Popen, wait_s: float = STACKS_WAIT_S) -> None:
    """Ask a worker that ran past its time to write every thread's Python stack to its log
    (``faulthandler`` on SIGUSR1, registered in ``worker_entry.worker_main``), so that the log of a killed
    worker says where it was; waits ``wait_s`` for the writing."""
    usr1 = getattr(signal, "SIGUSR1", None)
    if usr1 is None or exited(proc):
        return
    with contextlib.suppress(OSError):
        os.kill(proc.pid, usr1)
        time.sleep(wait_s)


def kill_group(proc: subprocess.Popen) -> int:
    """Kill the worker's process group and every process below it (whatever it or the model
    started, in the group or in sessions of their own) and reap the worker; its exit status."""
    if proc.returncode is None:
        for pid in descendants(proc.pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            proc.kill()
    return proc.wait()


# What a signal that ended a worker most likely means, for the one line a user reads. The
# kernel's OOM killer ends a process with SIGKILL and says so only in the kernel log.
_SIGNAL_CAUSES = {
    signal.SIGKILL: "out of memory? the OOM killer sends SIGKILL",
    signal.SIGSEGV: "segmentation fault",
    signal.SIGBUS: "bus error",
    signal.SIGABRT: "aborted",
    signal.SIGFPE: "arithmetic fault",
    signal.SIGILL: "illegal instruction",
}


def describe_exit(rc: int) -> str:
    """How a worker process ended, e.g. ``was killed by SIGSEGV (segmentation fault)``."""
    if rc < 0:
        try:
            sig = signal.Signals(-rc)
        except ValueError:
            return f"was killed by signal {-rc}"
        cause = _SIGNAL_CAUSES.get(sig)
        return f"was killed by {sig.name}" + (f" ({cause})" if cause else "")
    return f"exited with code {rc}"


class _Unreadable(errors.WorkerError):
    """A response file that is not a worker's JSON answer (torn or empty)."""


def read_response(path: Path, log_path: Path | None = None) -> dict[str, Any]:
    """The result in a worker's response file, or the worker's own error raised."""
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        data = None
    if not isinstance(data, dict):
        raise _Unreadable(f"{path}: not a worker response")
    return _unwrap(data, log_path)


def _unwrap(data: dict[str, Any], log_path: Path | None) -> dict[str, Any]:
    if data.get("ok"):
        return data["result"]
    cls = getattr(errors, str(data.get("error_type")), None)
    if not (isinstance(cls, type) and issubclass(cls, errors.BenchError)):
        cls = errors.WorkerError
    err = cls(data.get("error") or "worker failed")
    err.worker_traceback = data.get("traceback", "")  # type: ignore[attr-defined]
    err.partial = data.get("partial")  # type: ignore[attr-defined]
    raise err
