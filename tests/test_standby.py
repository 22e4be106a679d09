"""The compile worker waits for the standby profiling workers to finish importing before it
times steps (runner/worker_entry.py ``wait_ready``), so they never measure at the same time.

Each wait is checked against this test's own clock around the call and against its limit,
never against a fixed number of seconds: on a busy machine a thread's timer or a process's
start can come late, and the wait must still end for the right reason."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from inductor_bench.runner.worker_entry import wait_ready

LIMIT_S = 20.0  # the wait's limit where the test wants it to end for another reason
WORKER_S = 30  # how long the stand-in worker lives


def stand_in_worker() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({WORKER_S})"])


def test_waits_until_the_ready_file_appears(tmp_path):
    """It returns after the file was made (the moment taken just before making it), well
    before its limit, and what it says it waited is the time it spent."""
    ready = tmp_path / "ready"
    made_at: list[float] = []

    def make() -> None:
        made_at.append(time.perf_counter())
        ready.touch()

    proc = stand_in_worker()
    try:
        t0 = time.perf_counter()
        threading.Timer(0.4, make).start()
        waited = wait_ready([{"file": str(ready), "pid": proc.pid}], limit_s=LIMIT_S)
        t1 = time.perf_counter()
    finally:
        proc.kill()
        proc.wait()
    assert made_at and t0 <= made_at[0] <= t1, (t0, made_at, t1)  # not before the file
    assert t1 - made_at[0] < LIMIT_S / 2  # after it, not at the limit
    assert 0 <= waited <= t1 - t0


def test_stops_waiting_when_the_worker_is_gone(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    t0 = time.perf_counter()
    waited = wait_ready([{"file": str(tmp_path / "never"), "pid": proc.pid}], limit_s=LIMIT_S)
    assert waited <= time.perf_counter() - t0 < LIMIT_S / 2  # not at the limit


def test_stops_waiting_at_the_limit(tmp_path):
    proc = stand_in_worker()
    try:
        t0 = time.perf_counter()
        waited = wait_ready([{"file": str(tmp_path / "never"), "pid": proc.pid}], limit_s=0.3)
        t1 = time.perf_counter()
        assert proc.poll() is None  # the worker still lives: the limit ended the wait
    finally:
        proc.kill()
        proc.wait()
    assert 0.3 <= waited <= t1 - t0


def test_no_standby_means_no_wait():
    assert wait_ready(None) == 0.0


def test_waits_for_every_worker_of_a_list(tmp_path):
    """One file made at once, the other later: the wait ends after the later one."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.touch()
    made_at: list[float] = []

    def make() -> None:
        made_at.append(time.perf_counter())
        second.touch()

    procs = [stand_in_worker(), stand_in_worker()]
    try:
        t0 = time.perf_counter()
        threading.Timer(0.4, make).start()
        waited = wait_ready([{"file": str(f), "pid": p.pid} for f, p in zip((first, second), procs, strict=True)],
                            limit_s=LIMIT_S)
        t1 = time.perf_counter()
    finally:
        for p in procs:
            p.kill()
            p.wait()
    assert made_at and t0 <= made_at[0] <= t1
    assert 0 <= waited <= t1 - t0 and t1 - made_at[0] < LIMIT_S / 2
