"""Many requests, one worker process: torch and the model file imported once.

Starting a worker costs seconds (importing torch, running the model file) whatever the
graph's size, so profiling a 4-graph script one worker per graph spent most of its time
starting workers. ``run_batch`` hands every request to one worker, which works through them
in order and reports each the moment it is done (``worker.batch_main``): a line
``start <key>`` / ``done <key>`` in a progress file, and the response in its own file.

A request that crashes the worker (a segfault, the OOM killer) or hangs past ``timeout``
costs that request only: it is answered with a ``WorkerError`` / ``WorkerTimeout``, the
worker is killed if need be, and a fresh worker takes the requests after it. Ctrl-C kills
the worker's process group and is raised again; the requests answered before it keep their
answers (``on_done`` has run for each).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core import errors
from .worker import describe_exit, kill_group, last_output, read_response, spawn

POLL_S = 0.05


@dataclass
class BatchItem:
    key: str  # unique in the batch
    request: dict[str, Any]


Answer = dict[str, Any] | errors.BenchError


def run_batch(
    module: str,
    items: list[BatchItem],
    *,
    timeout: float,
    env: dict[str, str] | None = None,
    log_path: Path | None = None,
    echo: bool = False,
    on_start: Callable[[str], None] = lambda key: None,
    on_done: Callable[[str, Answer], None] = lambda key, answer: None,
) -> dict[str, Answer]:
    """Answer every item, in order, with the worker's result or the error it met.
    ``timeout`` is per item (seconds from its start)."""
    answers: dict[str, Answer] = {}
    pending = list(items)
    name = module.rsplit(".", 1)[-1]
    with tempfile.TemporaryDirectory(prefix="inductor-bench-batch-") as tmp:
        attempt = 0
        while pending:
            attempt += 1
            wdir = Path(tmp) / str(attempt)
            wdir.mkdir()
            _run_one_worker(
                module, name, pending, wdir, timeout, env, log_path, echo, answers, on_start, on_done
            )
            pending = [it for it in pending if it.key not in answers]
    return answers


def _run_one_worker(
    module: str,
    name: str,
    items: list[BatchItem],
    wdir: Path,
    timeout: float,
    env: dict[str, str] | None,
    log_path: Path | None,
    echo: bool,
    answers: dict[str, Answer],
    on_start: Callable[[str], None],
    on_done: Callable[[str, Answer], None],
) -> None:
    batch = {
        "batch": [
            {"key": it.key, "request": it.request, "response": str(wdir / f"{i}.json")}
            for i, it in enumerate(items)
        ]
    }
    responses = {it.key: wdir / f"{i}.json" for i, it in enumerate(items)}
    req, progress = wdir / "batch.json", wdir / "progress.txt"
    req.write_text(json.dumps(batch))
    progress.touch()
    log = log_path or wdir / "worker.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    current: str | None = None
    started = 0.0
    seen = 0
    with open(log, "ab") as logf:
        proc = spawn([module, "--batch", str(req), str(progress)], logf, env=env, echo=echo)
        try:
            while True:
                lines = progress.read_text().splitlines()
                for line in lines[seen:]:
                    verb, _, key = line.partition(" ")
                    if verb == "start":
                        current, started = key, time.monotonic()
                        on_start(key)
                    elif verb == "done" and key in responses:
                        answers[key] = _answer(responses[key], log_path)
                        on_done(key, answers[key])
                        current = None
                seen = len(lines)
                rc = proc.poll()
                if rc is not None:
                    if len(progress.read_text().splitlines()) > seen:
                        continue  # read the last lines it wrote before leaving
                    break
                if current is not None and time.monotonic() - started > timeout:
                    kill_group(proc)
                    answers[current] = errors.WorkerTimeout(
                        f"{name} worker exceeded --timeout {timeout:g}s on {current} and was killed"
                        + (f" (log: {log_path})" if log_path else "")
                    )
                    on_done(current, answers[current])
                    return
                time.sleep(POLL_S)
        except KeyboardInterrupt:
            kill_group(proc)
            raise
    if current is not None:  # it died in the middle of an item
        answers[current] = errors.WorkerError(
            f"{name} worker {describe_exit(rc)} while working on {current}" + last_output(log, log_path)
        )
        on_done(current, answers[current])
    elif not any(it.key in answers for it in items):
        # it died before starting anything: every item would meet the same fate
        err = errors.WorkerError(
            f"{name} worker {describe_exit(rc)} before its first request" + last_output(log, log_path)
        )
        for it in items:
            answers[it.key] = err
            on_done(it.key, err)


def _answer(path: Path, log_path: Path | None) -> Answer:
    try:
        return read_response(path, log_path)
    except errors.BenchError as e:
        return e
