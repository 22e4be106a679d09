"""`report` of a run directory that holds no result, is held by no writer and whose meta.json
still says its run is under way. Such a directory is not always one whose command was killed:
a sweep copied with `cp -r` while a job ran records that job's attempt as running, and a
compare run copied while its command still runs holds its claim (the process id). `report`
said of each that the command that made it was killed outright or the machine stopped, and
named its logs directory even where the copy had none.

The directories are synthetic, built by hand; the sweep's record is made by `new_sweep`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from inductor_bench.core.sweep import CellStatus
from inductor_bench.core.sweep_plan import new_sweep

from .test_damaged_digests import cli

CLAIM = {"tool": "inductor-bench", "status": "claimed", "created": "2026-12-07T23:51:43+00:00"}


def _copied_sweep(d: Path) -> Path:
    """``d`` as `cp -r` of a sweep copies it while its first job runs: sweep.json says ``mlp``
    is running in ``mlp`` (attempt 1), ``a`` pending; ``mlp`` holds the compare's claim of a
    process that has ended, and nothing else (no logs yet)."""
    s = new_sweep(["/m/mlp.py", "/m/a.py"], ["mlp", "a"], ["default"], [], device="cpu", shard=None,
                  executor="local", created="")
    s.cells[0].status, s.cells[0].run_dir, s.cells[0].attempts = CellStatus.RUNNING, "mlp", 1
    (d / "mlp").mkdir(parents=True)
    (d / "sweep.json").write_text(s.to_json())
    (d / ".sweep.lock").touch()  # copied, held by none
    (d / "mlp" / ".writing.lock").touch()
    (d / "mlp" / "meta.json").write_text(json.dumps(CLAIM | {"pid": _ended_pid()}))
    return d / "mlp"


def _ended_pid() -> int:
    p = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(p.stdout)


def test_an_attempt_of_a_copied_sweep_names_the_sweep_and_the_command_that_runs_it_again(tmp_path):
    run = _copied_sweep(tmp_path / "copy")
    r = cli("report", str(run))
    said = (f"inductor-bench: error: {run}: no result saved in it: an attempt the sweep in {tmp_path / 'copy'} "
            f"records as running, which no sweep runs now (a sweep stopped outright, or a copy of one made "
            f"while it ran); the same sweep command with --out {tmp_path / 'copy'} runs its cell again in a "
            "directory of its own")
    assert (r.returncode, r.stderr.splitlines()) == (2, [said]), r.stderr


def test_a_copy_of_a_run_whose_command_still_runs_says_so(tmp_path):
    """The process that claimed the run (here: this test's own, alive) still runs: the
    directory is a copy, not the remains of a killed command; its logs named as they are there."""
    run = tmp_path / "copy"
    (run / "logs").mkdir(parents=True)
    (run / "meta.json").write_text(json.dumps(CLAIM | {"pid": os.getpid()}))
    r = cli("report", str(run))
    said = (f"inductor-bench: error: {run}: no result saved in it, and the process that made it (pid "
            f"{os.getpid()}, in its meta.json) still runs: a copy of a run under way holds what was written "
            f"when it was copied; report the original once that process has ended; what its workers wrote "
            f"is in {run}/logs")
    assert (r.returncode, r.stderr.splitlines()) == (2, [said]), r.stderr


def test_a_run_whose_command_ended_unsaved_names_no_logs_it_does_not_have(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "meta.json").write_text(json.dumps(CLAIM | {"pid": _ended_pid()}))
    r = cli("report", str(run), "--reanalyze")
    said = (f"inductor-bench: error: {run}: the command that made it ended before saving any result (killed "
            "outright, or the machine stopped: its meta.json still says it is running)")
    assert (r.returncode, r.stderr.splitlines()) == (2, [said]), r.stderr
