"""scripts/html_screenshot.py without the test extra: one line naming the extra, not a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WITHOUT_PYTEST = """
import runpy, sys
sys.modules["pytest"] = None  # as on an install without the test extra
sys.argv = ["html_screenshot.py", "--help"]
runpy.run_path("scripts/html_screenshot.py", run_name="__main__")
"""


def test_the_script_without_pytest_names_the_test_extra_in_one_line():
    done = subprocess.run([sys.executable, "-c", WITHOUT_PYTEST], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("html_screenshot.py needs the test extra (pip install -e '.[test]')")
