"""A worker process's own side: its entry point (``worker_main``), its batches and its standby wait."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core import errors
from .stop import die_with_parent


def worker_main(
    handler: Callable[[dict[str, Any]], dict[str, Any]],
    prepare: Callable[[dict[str, Any]], None] | None = None,
) -> None:
    """Entry point of a worker module: read the request, run, write the response; with
    ``--batch BATCH PROGRESS``, every request of a batch in turn (``runner/batch.py``).

    ``--batch BATCH PROGRESS PREPARE`` starts a worker on standby before its batch exists:
    it calls ``prepare`` with the JSON in PREPARE (importing what every request needs),
    creates ``READY`` beside PROGRESS, and waits for BATCH to appear."""
    die_with_parent()
    _stacks_on_request()
    if sys.argv[1] == "--batch":
        batch, progress = Path(sys.argv[2]), Path(sys.argv[3])
        if len(sys.argv) > 4:
            _standby(prepare, Path(sys.argv[4]), batch, progress)
        _batch_main(handler, batch, progress)
    else:
        req_path, resp_path = Path(sys.argv[1]), Path(sys.argv[2])
        _answer(handler, json.loads(req_path.read_text()), resp_path)
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: compile workers and CUDA contexts can hang or crash there.
    os._exit(0)


def _stacks_on_request() -> None:
    """SIGUSR1 writes every thread's stack to stderr (the worker's log): ``stacks_to_log``."""
    import faulthandler

    usr1 = getattr(signal, "SIGUSR1", None)
    if usr1 is not None:
        with contextlib.suppress(ValueError, RuntimeError, OSError):
            faulthandler.register(usr1, all_threads=True)


READY = "ready"  # created beside a standby worker's progress file once it has prepared
AFTER = "after_ready"  # in a standby's prepare spec: the standbys it prepares after (wait_ready)
STANDBY_POLL_S = 0.02
READY_WAIT_S = 120.0  # the longest wait for standby workers to finish preparing


def wait_ready(specs: list[dict[str, Any]] | None, limit_s: float = READY_WAIT_S) -> float:
    """Wait until each standby worker of ``specs`` (``{"file": its ready file, "pid": its
    process}``) has prepared, so that its imports do not share the machine with what is
    measured next; returns the seconds waited. Stops waiting for one when it is gone, for all
    after ``limit_s``."""
    if not specs:
        return 0.0
    t0 = time.perf_counter()
    for one in specs:
        ready, pid = Path(one["file"]), int(one["pid"])
        while not ready.exists() and time.perf_counter() - t0 < limit_s:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            except PermissionError:
                pass
            time.sleep(0.01)
    return time.perf_counter() - t0


def _standby(
    prepare: Callable[[dict[str, Any]], None] | None, spec: Path, batch: Path, progress: Path
) -> None:
    """Prepare (after the standby the spec names, if any, is ready: two never import at once),
    say so, then wait for the batch; leave if the parent is gone."""
    try:
        request = json.loads(spec.read_text())
        wait_ready(request.pop(AFTER, None))
        if prepare is not None:
            prepare(request)
    except BaseException:  # the first request meets the same failure and reports it
        traceback.print_exc()
    finally:
        (progress.parent / READY).touch()
    parent = os.getppid()
    while not batch.exists():
        if os.getppid() != parent:
            os._exit(0)
        time.sleep(STANDBY_POLL_S)


def _batch_main(handler: Callable[[dict[str, Any]], dict[str, Any]], batch: Path, progress: Path) -> None:
    items = json.loads(batch.read_text())["batch"]
    for item in items:
        _progress(progress, f"start {item['key']}")
        _answer(handler, item["request"], Path(item["response"]))
        _progress(progress, f"done {item['key']}")


def _progress(path: Path, line: str) -> None:
    with open(path, "a") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


def _answer(
    handler: Callable[[dict[str, Any]], dict[str, Any]], request: dict[str, Any], resp_path: Path
) -> None:
    """Run one request and write its response (atomically)."""
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
