"""Many requests, one worker process: torch and the model file imported once.

Starting a worker costs seconds (importing torch, running the model file) whatever the
graph's size, so profiling a 4-graph script one worker per graph spent most of its time
starting workers. ``run_batch`` hands every request to one worker, which works through them
in order and reports each the moment it is done (``worker_entry.py``): a line
``start <key>`` / ``done <key>`` in a progress file, and the response in its own file.

A request that crashes the worker (a segfault, the OOM killer) or hangs past ``timeout``
costs that request only: it is answered with a ``WorkerError`` / ``WorkerTimeout``, the
worker is killed if need be, and a fresh worker takes the requests after it. Ctrl-C kills
the worker's process group and is raised again; the requests answered before it keep their
answers (``on_done`` has run for each).

A worker can be started on ``Standby`` before its requests are known: it imports torch and
the model file while the compile worker compiles (on another core), and takes the batch the
moment it is written. The compile worker waits for it to be ready (``Standby.ready_file``)
before timing steps, so the two never measure at the same time.
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
from .worker import (
    describe_exit,
    exited,
    kill_group,
    last_output,
    read_response,
    spawn,
    stacks_to_log,
)
from .worker_entry import AFTER, READY

POLL_S = 0.05


@dataclass
class BatchItem:
    key: str  # unique in the batch
    request: dict[str, Any]


Answer = dict[str, Any] | errors.BenchError


class Standby:
    """A batch worker started before its batch: the constructor spawns it (it prepares, then
    waits for the batch file); ``run_batch(..., standby=...)`` hands it the batch; ``close``
    kills it if it was never used, and removes its directory. Usable once."""

    def __init__(
        self,
        module: str,
        prepare: dict[str, Any],
        *,
        env: dict[str, str] | None = None,
        log_path: Path | None = None,
        echo: bool = False,
        after: Standby | None = None,
    ) -> None:
        """With ``after``, the worker prepares once that one is ready (``worker_entry.wait_ready``)."""
        if after is not None:
            prepare = {**prepare, AFTER: [after.ready_spec]}
        self._tmp = tempfile.TemporaryDirectory(prefix="inductor-bench-batch-")
        self.wdir = Path(self._tmp.name) / "1"
        self.wdir.mkdir()
        spec, progress = self.wdir / "prepare.json", self.wdir / "progress.txt"
        spec.write_text(json.dumps(prepare))
        progress.touch()
        log = log_path or self.wdir / "worker.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        self._logf = open(log, "ab")  # noqa: SIM115 - closed in close()
        # the batch file and progress file _run_one_worker writes and reads in wdir
        self.proc: Any = spawn(
            [module, "--batch", str(self.wdir / "batch.json"), str(progress), str(spec)],
            self._logf,
            env=env,
            echo=echo,
        )
        self.used = False

    @property
    def ready_file(self) -> Path:
        """Created once the worker has prepared (or failed to: its first request will say)."""
        return self.wdir / READY

    @property
    def ready_spec(self) -> dict[str, Any]:
        """What ``worker_entry.wait_ready`` waits on: the ready file and the process."""
        return {"file": str(self.ready_file), "pid": self.proc.pid}

    def take(self) -> Any:
        """The process, for the batch about to be written; None if it is used or gone."""
        if self.used or exited(self.proc):
            return None
        self.used = True
        return self.proc

    def close(self) -> None:
        kill_group(self.proc)
        self._logf.close()
        self._tmp.cleanup()


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
    standby: Standby | None = None,
) -> dict[str, Answer]:
    """Answer every item, in order, with the worker's result or the error it met.
    ``timeout`` is per item (seconds from its start). With ``standby`` (started with the same
    module and environment), its worker takes the batch; a fresh one takes what is left."""
    answers: dict[str, Answer] = {}
    pending = list(items)
    name = module.rsplit(".", 1)[-1]
    proc = standby.take() if standby is not None else None
    with tempfile.TemporaryDirectory(prefix="inductor-bench-batch-") as tmp:
        attempt = 0
        while pending:
            attempt += 1
            if proc is not None and standby is not None:
                wdir = standby.wdir  # its worker waits for the batch there
            else:
                wdir = Path(tmp) / str(attempt)
                wdir.mkdir()
            _run_one_worker(
                module, name, pending, wdir, timeout, env, log_path, echo, answers, on_start, on_done, proc
            )
            proc = None
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
    proc: Any = None,
) -> None:
    batch = {
        "batch": [
            {"key": it.key, "request": it.request, "response": str(wdir / f"{i}.json")}
            for i, it in enumerate(items)
        ]
    }
    responses = {it.key: wdir / f"{i}.json" for i, it in enumerate(items)}
    req, progress = wdir / "batch.json", wdir / "progress.txt"
    tmp_req = wdir / "batch.json.tmp"
    tmp_req.write_text(json.dumps(batch))
    tmp_req.replace(req)  # whole or absent: a standby worker is polling for it
    progress.touch()
    log = log_path or wdir / "worker.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    current: str | None = None
    started = 0.0
    seen = 0
    with open(log, "ab") as logf:
        if proc is None:
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
                if exited(proc):
                    if len(progress.read_text().splitlines()) > seen:
                        continue  # read the last lines it wrote before leaving
                    rc = kill_group(proc)  # and whatever it left in its process group
                    break
                if current is not None and time.monotonic() - started > timeout:
                    stacks_to_log(proc)
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
