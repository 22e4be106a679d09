"""Yardsticks for timing tests, measured by the test's own clock on the machine as loaded as it
is while the test runs: a bound taken from them judges a mechanism (the tool did not wait for
something), not how fast this machine happens to be."""

from __future__ import annotations

import subprocess
import sys
import time


def seconds_to_import_torch() -> float:
    """How long a fresh Python process takes to start and import torch here, now: what any
    step that waited for a process to get ready would cost at the least."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    return time.perf_counter() - t0
