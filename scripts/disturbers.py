"""Processes that disturb a measurement on purpose, for the benchmarks and tests that check
the figures hold while other work runs.

- ``busy``: one process busy-looping on one core for the whole measurement (a CI neighbour, a
  data loader spinning);
- ``stall``: processes that now and then spin on every core for 20-100 ms, then sleep
  0.1-0.6 s, at random (a burst of another job: a compile, a checkpoint, a test suite);
- ``quiet``: none.

    with disturb("stall"):
        run_the_measurement()

Run as ``python scripts/disturbers.py busy|stall [SECONDS]`` to disturb by hand.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

KINDS = ("quiet", "busy", "stall")
STALL_MS = (20, 100)
PAUSE_S = (0.1, 0.6)

_BUSY = "while True: pass"


def _stall_code(seed: int) -> str:
    return (
        "import random, time\n"
        f"rng = random.Random({seed})\n"
        "while True:\n"
        f"    time.sleep(rng.uniform({PAUSE_S[0]}, {PAUSE_S[1]}))\n"
        f"    end = time.perf_counter() + rng.uniform({STALL_MS[0]}, {STALL_MS[1]}) / 1e3\n"
        "    while time.perf_counter() < end: pass\n"
    )


def commands(kind: str, seed: int = 0) -> list[list[str]]:
    """The processes of one kind of disturbance (none for ``quiet``)."""
    if kind not in KINDS:
        raise ValueError(f"unknown disturbance {kind!r}: one of {', '.join(KINDS)}")
    if kind == "busy":
        return [[sys.executable, "-c", _BUSY]]
    if kind == "stall":
        cores = os.cpu_count() or 1
        return [[sys.executable, "-c", _stall_code(seed + i)] for i in range(cores)]
    return []


@contextlib.contextmanager
def disturb(kind: str, seed: int | None = None) -> Iterator[list[subprocess.Popen]]:
    """Run the disturbance for the duration of the block; its processes are gone after it."""
    seed = random.randrange(1 << 30) if seed is None else seed
    procs = [subprocess.Popen(cmd, stdin=subprocess.DEVNULL) for cmd in commands(kind, seed)]
    try:
        time.sleep(0.2 if procs else 0.0)  # started and spinning before the block begins
        yield procs
    finally:
        for p in procs:
            p.send_signal(signal.SIGKILL)
        for p in procs:
            p.wait()


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "busy"
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 3600.0
    with disturb(what):
        time.sleep(seconds)
