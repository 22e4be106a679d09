"""A saved result, a kernel file or a peaks file given as a device or a FIFO is refused in one
line by its metadata, never opened: ``report``, ``diff`` and ``kernel`` read /dev/zero until
the machine ran out of memory (22 GB, then the OOM killer), and waited on a FIFO for a writer
forever."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import FIXTURES, ROOT
from .test_model_files import cli, refused

RUN = FIXTURES / "runs" / "cpu_fft_inference"
needs_zero = pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
NOT_REGULAR = "not a regular file (a device, FIFO or socket)"


@needs_zero
@pytest.mark.parametrize("args, named", [
    (["report", "/dev/zero"], "/dev/zero"),
    (["diff", "/dev/zero", "RUN"], "BASE /dev/zero"),
    (["diff", "RUN", "/dev/zero"], "HEAD /dev/zero"),
])
def test_a_device_given_as_a_result_is_refused_unread(args, named):
    line = refused(cli(*[str(RUN) if a == "RUN" else a for a in args]))
    assert line == f"inductor-bench: error: {named}: {NOT_REGULAR}: a result is the JSON file a run saved"


@pytest.mark.parametrize("command", ["report", "diff"])
def test_a_fifo_in_a_run_directory_is_refused_without_waiting_for_a_writer(tmp_path, command):
    run = tmp_path / "run"
    run.mkdir()
    os.mkfifo(run / "breakdown.json")
    args = [command, str(run)] + ([str(run)] if command == "diff" else [])
    line = refused(cli(*args, timeout=30))
    assert line.endswith(f"{run / 'breakdown.json'}: {NOT_REGULAR}: a result is the JSON file a run saved")


@needs_zero
def test_a_device_given_as_a_kernel_file_is_refused_unread(tmp_path):
    os.mkfifo(tmp_path / "k.py")
    for given in ("/dev/zero", str(tmp_path / "k.py")):
        line = refused(cli("kernel", given, timeout=30))
        assert line == f"inductor-bench: error: {given}: {NOT_REGULAR}: a kernel file is a .py file"


def test_a_fifo_given_as_a_peaks_file_is_refused_without_waiting_for_a_writer(tmp_path):
    """In a process of its own: opening the FIFO would block this one for good."""
    os.mkfifo(tmp_path / "peaks.json")
    code = ("from inductor_bench.core.errors import UsageError\n"
            "from inductor_bench.core.peaks import load_peaks_file\n"
            "try:\n"
            f"    load_peaks_file({str(tmp_path / 'peaks.json')!r})\n"
            "except UsageError as e:\n"
            "    print(e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert done.stdout == (f"--peaks-file {tmp_path / 'peaks.json'}: not a regular file "
                           "(a directory, device, FIFO or socket)\n"), done.stderr
