"""The tail of a worker's log that an error shows leaves out Kineto's profiler session markers
(torch 2.13+ writes two per session, and a profiling worker runs dozens): the lines the worker
wrote before it died are what the user sees. The log file keeps every line."""

from __future__ import annotations

from pathlib import Path

import pytest

from inductor_bench.core import errors
from inductor_bench.runner.worker import run_worker, tail

# Lines as torch 2.13.0+cpu's Kineto wrote them into a profiling worker's log.
MARKERS = [
    "USDT:2026-12-05 00:27:33 21537:21537 SyncActivityProfilerHandler.cpp:52] profiler_start",
    "USDT:2026-12-05 00:27:33 21537:21537 SyncActivityProfilerHandler.cpp:59] profiler_stop",
]


def test_the_tail_skips_the_markers_and_keeps_every_other_line(tmp_path):
    log = tmp_path / "profile.log"
    other = [f"line {i}" for i in range(20)]
    lines = other[:10] + MARKERS * 30 + other[10:15] + MARKERS * 5 + other[15:]
    log.write_text("\n".join(lines) + "\n")
    assert tail(log, 12).splitlines() == other[-12:]
    # A line that only mentions the profiler is the worker's own and stays.
    log.write_text("USDT: profiler_start was never called\nTraceback (most recent call last):\n")
    assert tail(log, 12).splitlines() == ["USDT: profiler_start was never called", "Traceback (most recent call last):"]


def test_a_worker_that_profiled_then_died_shows_its_last_words(tmp_path):
    log = tmp_path / "logs" / "profile.log"
    words = "the model's last line before the crash"
    with pytest.raises(errors.WorkerError) as err:
        run_worker("tests.profiler_crash_worker", {"sessions": 20, "last_words": words}, timeout=120, log_path=log)
    message = str(err.value)
    assert message.splitlines()[0].startswith("profiler_crash_worker worker exited with code 3 without a result")
    shown = message.split("last output:\n", 1)[1]
    assert words in shown.splitlines()
    assert "profiler_start" not in shown and "profiler_stop" not in shown
    kept = Path(log).read_text()
    assert words in kept
    assert kept.count("profiler_start") in (0, 20)  # torch before 2.13 writes none
