"""Worker processes: JSON in, JSON out, their own environment.

Everything that imports torch, compiles or launches kernels runs in a worker, so that a
crash, a hang or a poisoned device in the user's model becomes one clear error in the parent,
and Inductor config never leaks between runs. The parent calls ``run_worker``; the worker
module calls ``worker_main(handler)`` from its ``__main__``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core import errors

# Environment variables that would change what Inductor generates or where it caches:
# the parent's values never reach a worker unless the caller sets them on purpose.
_SCRUBBED_PREFIXES = ("TORCHINDUCTOR_", "TORCH_COMPILE_", "TRITON_CACHE_DIR", "TORCH_TRACE")
_LOG_TAIL_LINES = 12
# Seconds a worker may run before it is killed, unless --timeout says otherwise: compiling a
# large model, or autotuning a max-autotune space, can take many minutes.
DEFAULT_TIMEOUT_S = 900.0


def worker_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUBBED_PREFIXES)}
    env["PYTHONUNBUFFERED"] = "1"
    # The worker must import this very package, wherever the parent found it.
    pkg_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_root, env.get("PYTHONPATH", "")) if p)
    env.update(extra or {})
    return env


def _tail(path: Path, n: int = _LOG_TAIL_LINES) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-n:])


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
        cmd = [sys.executable, "-m", module, str(req), str(resp)]
        with open(log, "ab") as logf:
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=None if echo else logf,
                stderr=None if echo else subprocess.STDOUT,
                env=worker_env(env),
                start_new_session=True,
            )
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                raise errors.WorkerTimeout(
                    f"{module.rsplit('.', 1)[-1]} worker exceeded --timeout {timeout:g}s and was killed"
                    + (f" (log: {log_path})" if log_path else "")
                ) from None
            except KeyboardInterrupt:
                _kill_group(proc)
                raise
        if resp.exists():
            try:
                data = json.loads(resp.read_text())
            except json.JSONDecodeError:
                data = None
            if isinstance(data, dict):
                return _unwrap(data, log_path)
        detail = _describe_exit(rc)
        tail = _tail(log)
        raise errors.WorkerError(
            f"{module.rsplit('.', 1)[-1]} worker {detail} without a result"
            + (f"; last output:\n{tail}" if tail else "")
            + (f"\n(full log: {log_path})" if log_path else "")
        )


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def _describe_exit(rc: int) -> str:
    if rc < 0:
        try:
            return f"was killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"was killed by signal {-rc}"
    return f"exited with code {rc}"


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


def worker_main(handler: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Entry point of a worker module: read the request, run, write the response."""
    req_path, resp_path = Path(sys.argv[1]), Path(sys.argv[2])
    request = json.loads(req_path.read_text())
    started = time.perf_counter()
    try:
        result = handler(request)
        payload: dict[str, Any] = {"ok": True, "result": result}
    except errors.BenchError as e:
        traceback.print_exc()
        payload = {
            "ok": False,
            "error_type": type(e).__name__,
            "error": str(e),
            "traceback": traceback.format_exc(),
            "partial": getattr(e, "partial", None),
        }
    except BaseException as e:  # the user's code can raise anything, SystemExit included
        traceback.print_exc()
        payload = {
            "ok": False,
            "error_type": "WorkerError",
            "error": f"{type(e).__name__}: {e}",
            "traceback": traceback.format_exc(),
        }
    payload["seconds"] = time.perf_counter() - started
    tmp = resp_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload))
    tmp.replace(resp_path)
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: compile workers and CUDA contexts can hang or crash there.
    os._exit(0)
