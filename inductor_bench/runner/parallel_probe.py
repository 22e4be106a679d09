"""How long parallel work takes on the host's intra-op threads against one thread, read around
each window on the host (``runner/profile.py``).

Inductor's C++ kernels and ATen's ops run their loops in OpenMP parallel regions, and a region
ends only when its last thread does. When other processes hold the cores, a thread waits for
one, and the region with it: every iteration slows alike, so no iteration stands out to be
left out, and the machine's other readings (the cores others kept busy, the speed of fixed
single-threaded work) say only that the machine was busy, not by how much the kernels slowed.
Measured on this project's 2-core machine while a test suite kept 1.5 cores busy: a 2-layer
GPT-2 training step's forward took 802.7 ms a call on 2 threads and 24.1 ms on one; this probe
read 15-20 (an add of 1M floats, 7.8 ms on 2 threads, 0.4 ms on one), where a quiet machine
reads under 1.

The probe is one parallel op, timed on all the threads and then on one (the fastest of a few
repetitions each); the ratio of the two is the figure, read before and after each window and
the higher kept (as the speed probe's slower reading is); a window's reading after it is the
next one's before, unless the speed watch waited between them. Between windows only: nothing
of it runs beside a measurement.
"""

from __future__ import annotations

import time

ELEMENTS = 1 << 20  # 4 MiB a tensor: above ATen's grain, so the add runs on every thread
REPS = 5  # adds a timing
TRIES = 3  # timings, the fastest kept: a preemption in one does not decide the figure


def parallel_x() -> float | None:
    """Seconds of the add on all the intra-op threads over seconds on one; None with one thread."""
    import torch

    threads = torch.get_num_threads()
    if threads < 2:
        return None
    a, b = torch.ones(ELEMENTS), torch.ones(ELEMENTS)
    out = torch.empty(ELEMENTS)
    on_all = _fastest(lambda: torch.add(a, b, out=out))
    torch.set_num_threads(1)
    try:
        on_one = _fastest(lambda: torch.add(a, b, out=out))
    finally:
        torch.set_num_threads(threads)
    return on_all / on_one if on_one > 0 else None


def slower(before: float | None, after: float | None) -> float | None:
    """The higher of two readings, rounded; None where neither was read."""
    known = [x for x in (before, after) if x is not None]
    return round(max(known), 2) if known else None


def _fastest(op) -> float:
    best = float("inf")
    for _ in range(TRIES):
        t0 = time.perf_counter()
        for _ in range(REPS):
            op()
        best = min(best, time.perf_counter() - t0)
    return best / REPS
