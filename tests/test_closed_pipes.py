"""A closed stderr (``2>&1 | head``) loses lines, not the exit status, and a progress line that
cannot be written stops nothing: the run goes on and saves what it measures."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from inductor_bench.commands.progress import TerminalProgress

RUN = Path(__file__).parent / "fixtures" / "results" / "cpu_mlp_train_quiet"


def _closed_pipe() -> int:
    r, w = os.pipe()
    os.close(r)
    return w


def _run(args: list[str], *, stdout: int, stderr: int) -> int:
    try:
        return subprocess.run([sys.executable, "-m", "inductor_bench.cli", *args], stdout=stdout,
                              stderr=stderr, timeout=120).returncode
    finally:
        for fd in {stdout, stderr} - {subprocess.DEVNULL}:
            os.close(fd)


def test_bad_input_with_stderr_closed_still_exits_2():
    """Before, the error line's BrokenPipeError ended the process with Python's 1, the status of a
    regression found."""
    assert _run(["report", "/nonexistent-run"], stdout=subprocess.DEVNULL, stderr=_closed_pipe()) == 2


def test_a_report_onto_a_closed_pipe_exits_74_with_stderr_closed_too():
    w = _closed_pipe()
    assert _run(["report", str(RUN)], stdout=w, stderr=os.dup(w)) == 74


class ClosedStream(io.StringIO):
    def write(self, s: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_phase_whose_progress_lines_cannot_be_written_runs_to_its_end():
    ran = []
    progress = TerminalProgress(ClosedStream())
    with progress.phase("profiling graph 0-forward [1/2]") as outcome:
        ran.append("body")
        outcome["done"] = "3 x 100 iterations"
    progress.note("measuring the device's ceilings (bandwidth, matmul): cached")
    assert ran == ["body"]
