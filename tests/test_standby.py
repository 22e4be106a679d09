"""The compile worker waits for the standby profiling worker to finish importing before it
times steps (runner/capture.py ``wait_ready``), so the two never measure at the same time."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from inductor_bench.runner.capture import wait_ready


def test_waits_until_the_ready_file_appears(tmp_path):
    ready = tmp_path / "ready"
    threading.Timer(0.4, ready.touch).start()
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        waited = wait_ready({"file": str(ready), "pid": proc.pid}, limit_s=20)
    finally:
        proc.kill()
        proc.wait()
    assert ready.exists() and 0.35 <= waited < 5


def test_stops_waiting_when_the_worker_is_gone(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    t0 = time.monotonic()
    wait_ready({"file": str(tmp_path / "never"), "pid": proc.pid}, limit_s=20)
    assert time.monotonic() - t0 < 2


def test_stops_waiting_at_the_limit(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        waited = wait_ready({"file": str(tmp_path / "never"), "pid": proc.pid}, limit_s=0.3)
    finally:
        proc.kill()
        proc.wait()
    assert 0.3 <= waited < 2


def test_no_standby_means_no_wait():
    assert wait_ready(None) == 0.0
