"""The sweep's ``slurm`` executor through submitit, on submitit's local executor (no Slurm
here), with the stand-in job (``tests/sweep_standin.py``): four jobs on four logical GPUs get
four different CUDA_VISIBLE_DEVICES, a job killed mid-run leaves the other cells done and the
sweep resumable; the options become submitit's parameters. Skipped without submitit (``pip
install 'inductor-bench[slurm]'``)."""

from __future__ import annotations

import shutil

import pytest

from inductor_bench.core.errors import UsageError
from inductor_bench.core.sweep import CellStatus
from inductor_bench.runner.sweep_exec_slurm import SlurmExecutor, slurm_params
from inductor_bench.runner.sweep_run import run_sweep

from .sweep_helpers import Events, grid, kill_when_started, ok, standin, where

pytest.importorskip("submitit")


def _run(tmp, names, actions, slots):
    events = Events()
    folder = tmp / "sweep" / ".submitit"

    def make():
        return SlurmExecutor(folder, gpu=True, cluster="local", slots=slots, params={"timeout_min": 10})

    s = run_sweep(
        tmp / "sweep",
        grid(names, device="cuda", executor="slurm"),
        make,
        on_event=events,
        command=standin(actions),
        shared_marker=True,
    )
    return s, events


def test_four_local_jobs_get_four_gpus(tmp_path):
    names = ["a", "b", "c", "d"]
    meet = str(tmp_path / "meet")
    s, events = _run(tmp_path, names, {n: ok("--meet", meet, "4") for n in names}, ["0", "1", "2", "3"])
    assert [c.status for c in s.cells] == [CellStatus.DONE] * 4
    assert sorted(where(tmp_path / "sweep" / n)["CUDA_VISIBLE_DEVICES"] for n in names) == [
        "0",
        "1",
        "2",
        "3",
    ]
    assert events.seen[-1][2] == "4/4 done"


def test_a_job_killed_mid_run_leaves_the_others_done_and_the_sweep_resumable(tmp_path):
    pids = tmp_path / "pids"
    actions = {"a": ok("--hold", "1"), "b": ["--started", str(pids), "hang"], "c": ok()}
    killer = kill_when_started(pids, "b")
    s, _ = _run(tmp_path, ["a", "b", "c"], actions, ["0", "1"])
    killer.join()
    assert [c.status for c in s.cells] == [CellStatus.DONE, CellStatus.KILLED, CellStatus.DONE]
    s2, events = _run(tmp_path, ["a", "b", "c"], {**actions, "b": ok()}, ["0", "1"])
    assert [c.status for c in s2.cells] == [CellStatus.DONE] * 3
    assert [e[1] for e in events.seen if e[0] == "start"] == ["b"]


def test_submitit_logs_nothing_on_stdout_which_holds_the_report():
    import subprocess
    import sys

    code = (
        "import logging; from inductor_bench.runner.sweep_exec_slurm import import_submitit; "
        "import_submitit(); logging.getLogger('submitit').warning('sacct failed')"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert r.stdout == "" and "sacct failed" in r.stderr


def test_the_options_become_submitits_parameters():
    p = slurm_params("gpu-h100", 90, ["mem_gb=64", "account=perf", "constraint=h100", "local_setup=x"])
    assert p == {
        "slurm_partition": "gpu-h100",
        "timeout_min": 90,
        "mem_gb": 64.0,
        "slurm_account": "perf",
        "slurm_constraint": "h100",
        "local_setup": "x",
    }
    assert slurm_params(None, None, ["cpus_per_task=8"]) == {"cpus_per_task": 8}
    with pytest.raises(UsageError, match="give KEY=VALUE"):
        slurm_params(None, None, ["mem_gb"])
    with pytest.raises(UsageError, match="cpus_per_task takes a int"):
        slurm_params(None, None, ["cpus_per_task=many"])


@pytest.mark.skipif(shutil.which("sbatch") is None, reason="needs Slurm (sbatch)")
def test_an_unknown_parameter_is_one_line(tmp_path):
    with pytest.raises(UsageError, match="--slurm-opt: Unknown argument 'colour'"):
        SlurmExecutor(tmp_path, gpu=False, cluster="slurm", params={"slurm_colour": "red"})


@pytest.mark.skipif(shutil.which("sbatch") is not None, reason="Slurm is installed here")
def test_slurm_without_slurm_says_so(tmp_path):
    with pytest.raises(UsageError, match="no Slurm here \\(sbatch is not on PATH\\)"):
        SlurmExecutor(tmp_path, gpu=True)


def _slurm_up() -> bool:
    if shutil.which("sinfo") is None:
        return False
    import subprocess

    try:
        r = subprocess.run(["sinfo", "-h", "-o", "%a"], capture_output=True, text=True, timeout=30, check=False)
    except subprocess.TimeoutExpired:
        return False
    return r.returncode == 0 and "up" in r.stdout


@pytest.mark.slow
@pytest.mark.skipif(not _slurm_up(), reason="no Slurm cluster answering here (sinfo)")
def test_a_real_slurm_runs_cpu_jobs_one_per_node_and_a_killed_one_is_retried(tmp_path):
    pids = tmp_path / "pids"
    actions = {"a": ok("--hold", "1"), "b": ["--started", str(pids), "hang"], "c": ok("--hold", "1")}

    def make():
        return SlurmExecutor(tmp_path / "sweep" / ".submitit", gpu=False, params={"timeout_min": 10})

    def run(acts):
        events = Events()
        s = run_sweep(
            tmp_path / "sweep",
            grid(["a", "b", "c"], device="cpu", executor="slurm"),
            make,
            on_event=events,
            command=standin(acts),
            shared_marker=True,
        )
        return s, events

    killer = kill_when_started(pids, "b", timeout=300)
    s, events = run(actions)
    killer.join()
    assert [c.status for c in s.cells] == [CellStatus.DONE, CellStatus.KILLED, CellStatus.DONE]
    assert [e[0] for e in events.seen[:4]] == ["plan", "start", "start", "start"]  # all submitted at once
    spans = sorted((w["start"], w["end"]) for w in (where(tmp_path / "sweep" / n) for n in ("a", "c")))
    assert spans[0][1] <= spans[1][0]  # --exclusive: one CPU job on the node at a time
    s2, events2 = run({**actions, "b": ok()})
    assert [c.status for c in s2.cells] == [CellStatus.DONE] * 3
    assert [e[1] for e in events2.seen if e[0] == "start"] == ["b"] and s2.cell("b").run_dir == "b.try2"
