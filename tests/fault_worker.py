"""A stand-in worker for tests/test_signals.py: each request says how to behave, as a model
that starts processes of its own or hangs would."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from inductor_bench.runner.worker_entry import worker_main


def handle(request: dict) -> dict:
    """``fork``: start ``sleep`` (in the worker's process group, or in a session of its own
    with ``setsid``), write its pid to ``pidfile``, answer; ``hang``: the same, then hang."""
    child = subprocess.Popen(["sleep", "300"], start_new_session=bool(request.get("setsid")))
    Path(request["pidfile"]).write_text(str(child.pid))
    if request.get("do") == "hang":
        time.sleep(300)
    return {"pid": os.getpid(), "child": child.pid}


def prepare(spec: dict) -> None:
    """On standby: write the worker's pid, then take as long as ``sleep`` says (importing torch
    and a large model can take minutes)."""
    Path(spec["pidfile"]).write_text(str(os.getpid()))
    time.sleep(spec.get("sleep", 0))


if __name__ == "__main__":
    worker_main(handle, prepare)
