"""The sweep's ``ray`` executor on a real local Ray cluster on the CPU, started with four
logical GPUs (``num_gpus=4``), with the stand-in job (``tests/sweep_standin.py``): four jobs at
once get four different CUDA_VISIBLE_DEVICES, the results come back into the sweep's
directory, a job killed mid-run leaves the other cells done and the sweep resumable, a task
that cannot see the sweep's directory sends its run directory back, and on the CPU a job takes
the whole machine. Skipped without Ray (``pip install 'inductor-bench[ray]'``)."""

from __future__ import annotations

import json
import time

import pytest

from inductor_bench.core.sweep import CellStatus
from inductor_bench.runner.sweep_exec_ray import RayExecutor
from inductor_bench.runner.sweep_job import Job, unpack
from inductor_bench.runner.sweep_run import load_sweep, run_sweep

from .sweep_helpers import Events, grid, kill_when_started, ok, standin, where

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def cluster():
    # A cluster of this process alone: no token to guard it, so Ray writes none under the
    # user's home (``~/.ray/auth_token``).
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RAY_AUTH_MODE", "disabled")
        ray.init(num_cpus=2, num_gpus=4, include_dashboard=False, log_to_driver=False)
        yield
        ray.shutdown()


def _run(tmp, names, actions, device="cuda"):
    events = Events()
    s = run_sweep(
        tmp / "sweep",
        grid(names, device=device, executor="ray"),
        lambda: RayExecutor(device),
        on_event=events,
        command=standin(actions),
        shared_marker=True,
    )
    return s, events


def test_four_gpu_tasks_run_at_once_on_four_gpus(cluster, tmp_path):
    names = ["a", "b", "c", "d"]
    meet = str(tmp_path / "meet")
    s, events = _run(tmp_path, names, {n: ok("--meet", meet, "4") for n in names})
    assert [c.status for c in s.cells] == [CellStatus.DONE] * 4
    seen = [where(tmp_path / "sweep" / n)["CUDA_VISIBLE_DEVICES"] for n in names]
    assert sorted(seen) == ["0", "1", "2", "3"]
    saved = load_sweep(tmp_path / "sweep")
    assert sorted(c.where.split("CUDA_VISIBLE_DEVICES=")[1] for c in saved.cells) == ["0", "1", "2", "3"]
    for n in names:  # gathered: each compare result in the sweep's directory, each log too
        assert json.loads((tmp_path / "sweep" / n / "compare.json").read_text())["model"] == "mlp"
        assert (tmp_path / "sweep" / "logs" / f"{n}.log").read_text() == f"stand-in ok for {n}\n"
    assert events.seen[-1][2] == "4/4 done"


def test_a_task_killed_mid_run_leaves_the_others_done_and_the_sweep_resumable(cluster, tmp_path):
    pids = tmp_path / "pids"
    actions = {"a": ok("--hold", "1"), "b": ["--started", str(pids), "hang"], "c": ok()}
    killer = kill_when_started(pids, "b")
    s, _ = _run(tmp_path, ["a", "b", "c"], actions)
    killer.join()
    assert [c.status for c in s.cells] == [CellStatus.DONE, CellStatus.KILLED, CellStatus.DONE]
    s2, events = _run(tmp_path, ["a", "b", "c"], {**actions, "b": ok()})
    assert [c.status for c in s2.cells] == [CellStatus.DONE] * 3
    assert [e[1] for e in events.seen if e[0] == "start"] == ["b"]
    assert s2.cell("b").run_dir == "b.try2" and s2.cell("a").attempts == 1


def test_a_task_without_the_sweeps_file_system_sends_its_run_back(cluster, tmp_path):
    ex = RayExecutor("cuda")
    out = tmp_path / "sweep" / "a"
    handle = ex.launch(
        Job(
            model="a",
            argv=["tests.sweep_standin", *ok()],
            out_dir=str(out),
            marker=(str(tmp_path / "elsewhere"), "token"),
        ),
        None,
    )
    deadline = time.monotonic() + 120
    while (outcome := ex.poll(handle)) is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert outcome.exit_code == 0 and not out.exists()
    unpack(outcome.archive, out)
    assert json.loads((out / "where.json").read_text())["CUDA_VISIBLE_DEVICES"] in {"0", "1", "2", "3"}


def test_on_the_cpu_a_task_takes_the_whole_machine(cluster, tmp_path):
    ex = RayExecutor("cpu")
    assert ex.slots(5) == [None]  # one machine: one job at a time
    names = ["a", "b"]
    s, _ = _run(tmp_path, names, {n: ok("--hold", "0.3") for n in names}, device="cpu")
    spans = sorted((w["start"], w["end"]) for w in (where(tmp_path / "sweep" / n) for n in names))
    assert spans[0][1] <= spans[1][0] and [c.status for c in s.cells] == [CellStatus.DONE] * 2
