"""A stand-in worker for tests/test_batch.py: each request says how to behave."""

from __future__ import annotations

import os
import time

from inductor_bench.core.errors import WorkloadError
from inductor_bench.runner.worker_entry import worker_main

STARTED_AT = time.time()
PREPARED: dict = {}
HANG_S = 60  # how long a hanging request sleeps


def handle(request: dict) -> dict:
    what = request["do"]
    if what == "crash":
        os._exit(139)  # as a segfault in a graph's harness would end the process
    if what == "hang":
        time.sleep(HANG_S)
    if what == "raise":
        raise WorkloadError("the graph raised")
    return {"pid": os.getpid(), "value": request.get("value"), "prepared": PREPARED}


def prepare(spec: dict) -> None:
    """On standby: take a while (as importing torch does), or fail as a broken import would."""
    started = time.time()
    time.sleep(spec.get("sleep", 0))
    if spec.get("fail"):
        raise ImportError("no module named broken")
    PREPARED.update(spec, started=started, at=time.time())


if __name__ == "__main__":
    worker_main(handle, prepare)
