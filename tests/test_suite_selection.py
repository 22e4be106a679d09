"""The README's test command leaves the tests marked slow out; --slow, -m or a node id brings
them back (tests/conftest.py). Checked on a synthetic two-test directory that uses this
project's conftest, collected by pytest in a subprocess."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CONFTEST = Path(__file__).resolve().parent / "conftest.py"
TESTS = '''
import pytest

def test_quick():
    pass

@pytest.mark.slow
def test_long():
    pass
'''


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("suite")
    shutil.copy(CONFTEST, d / "conftest.py")
    (d / "test_two.py").write_text(TESTS)
    (d / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: long\n    gpu: CUDA\n    e2e: compiles\n")
    return d


def _collected(suite: Path, *args: str) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
                         cwd=suite, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    return sorted(ln.split("::")[-1] for ln in out.stdout.splitlines() if "::" in ln)


@pytest.mark.parametrize(("args", "want"), [
    ((), ["test_quick"]),
    (("test_two.py",), ["test_quick"]),
    (("--slow",), ["test_long", "test_quick"]),
    (("-m", "slow"), ["test_long"]),
    (("-m", "not slow"), ["test_quick"]),
    (("-m", "not e2e"), ["test_long", "test_quick"]),  # any -m brings the slow tests back
    (("-m", "not e2e and not slow"), ["test_quick"]),  # the README's way to skip the e2e tests
    (("test_two.py::test_long",), ["test_long"]),
])
def test_slow_tests_run_only_when_asked(suite, args, want):
    assert _collected(suite, *args) == want
