"""A sweep stopped while its jobs run, on a disk too full to make its ``logs/`` directory (none
there yet): the stop's status (130) and line, the stopped job counted as stopped, the failed
mkdir named after it. The mkdir's raw OSError escaped the stop's records: the sweep exited 74
naming no path ("No space left on device"), the stop lost. So did a job's run directory that
did not fit as it was unpacked.

The full disk is synthetic: making a directory named ``logs``, or unpacking an archive, fails
with ENOSPC. The jobs are the stand-in (tests/sweep_helpers.py), hanging until stopped; the
signal is a real SIGINT."""

from __future__ import annotations

import errno
import os
import tarfile
from pathlib import Path

import pytest

from inductor_bench.core.sweep import CellStatus
from inductor_bench.runner.rundir import WriteError
from inductor_bench.runner.sweep_job import JobOutcome, pack
from inductor_bench.runner.sweep_run import record_outcome

from .sweep_helpers import grid, ok
from .test_stop_while_saving import _interrupt_when, _stopped_sweep_line, _sweep, signals  # noqa: F401

NO_SPACE = os.strerror(errno.ENOSPC)


def no_room_for_logs(monkeypatch) -> None:
    real = Path.mkdir

    def mkdir(self, *args, **kwargs):
        if self.name == "logs":
            raise OSError(errno.ENOSPC, NO_SPACE)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", mkdir)


def test_a_stopped_sweep_that_cannot_make_its_logs_directory_exits_130_naming_it(capsys, monkeypatch, tmp_path,
                                                                                 signals):  # noqa: F811
    out, pids = tmp_path / "sweep", tmp_path / "pids"
    no_room_for_logs(monkeypatch)
    _interrupt_when(lambda: (pids / "mlp.pid").exists())
    code, line = _sweep(capsys, monkeypatch, out, {"mlp": ["--started", str(pids), "hang"], "transformer_block": ok()})
    expected = _stopped_sweep_line(out, "0/2 done, 1 interrupted, 1 pending").replace(
        f"{out / 'sweep.json'}: cannot write", f"{out / 'logs'}: cannot create it")
    assert (code, line) == (130, expected)
    assert not (out / "logs").exists() and not (out / "transformer_block").exists()



def test_a_job_run_directory_that_cannot_be_unpacked_onto_a_full_disk_is_a_write_error(monkeypatch, tmp_path):
    """A job on another file system returns its run directory as an archive; its files that do
    not fit are a WriteError naming the directory (a raw OSError, the stopped jobs after it left
    unrecorded), the cell still saying how its job ended."""
    job_dir, sweep_dir = tmp_path / "job", tmp_path / "sweep"
    job_dir.mkdir()
    (job_dir / "compare.json").write_text("{}")
    sweep_dir.mkdir()
    cell = grid(["a"]).cells[0]
    cell.run_dir = "a"

    def extractall(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, NO_SPACE)

    monkeypatch.setattr(tarfile.TarFile, "extractall", extractall)
    with pytest.raises(WriteError) as failed:
        record_outcome(sweep_dir, cell, JobOutcome(exit_code=0, log="done\n", archive=pack(job_dir)))
    assert str(failed.value) == f"{sweep_dir / 'a'}: cannot write ({NO_SPACE})"
    assert cell.status == CellStatus.DONE and (sweep_dir / "logs" / "a.log").read_text() == "done\n"
