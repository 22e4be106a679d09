"""A stand-in worker for tests/test_worker_log_tail.py: it runs torch profiler sessions as a
profiling worker does, prints a last line, then dies without an answer."""

from __future__ import annotations

import os
import sys

from inductor_bench.runner.worker_entry import worker_main


def handle(request: dict) -> dict:
    import torch
    from torch.profiler import profile

    for _ in range(request["sessions"]):
        with profile():
            torch.ones(4) + 1
    print(request["last_words"], flush=True)
    sys.stderr.flush()
    os._exit(3)


if __name__ == "__main__":
    worker_main(handle)
