"""scripts/fault_matrix.py, run as a user runs it (its fast probes): every probe it registers
prints one line, PASS or SKIP (a probe needing root, without it), and it exits 0. A fault the
tool stopped handling would print FAIL and exit 1; a probe that no longer runs at all (its
command renamed, its fixture moved) would print FAIL with what broke it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from .conftest import ROOT

SCRIPT = ROOT / "scripts" / "fault_matrix.py"


def _registered_fast_probes() -> list[str]:
    spec = importlib.util.spec_from_file_location("fault_matrix", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [name for name, _ in module.PROBES if not name.startswith("e2e: ")]


@pytest.mark.slow  # runs every probe: tens of seconds (the quick suite's 15 minutes)
def test_every_fast_probe_passes_or_is_skipped():
    names = _registered_fast_probes()
    # an Inductor variable left in the shell: the tool notes it does not pass it on, a line the
    # script's probes must not take for the fault's
    env = {**os.environ, "TORCHINDUCTOR_UNIQUE_KERNEL_NAMES": "1"}
    p = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)
    lines = p.stdout.splitlines()
    assert p.returncode == 0, p.stdout + p.stderr
    assert len(lines) == len(names) >= 15
    for line, name in zip(lines, names, strict=True):
        word, rest = line.split("  ", 1)
        assert word in ("PASS", "SKIP"), line
        assert rest.startswith(name), (line, name)
