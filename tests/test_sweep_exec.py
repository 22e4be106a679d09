"""The sweep's jobs on the ``local`` executor, with a stand-in job in place of compare
(``tests/sweep_standin.py``): slots pinned with CUDA_VISIBLE_DEVICES and run at once, one at a
time on the CPU, a job killed from outside or past its time limit marks its cell only, the
same sweep again retries just that cell, Ctrl-C stops the running jobs and saves them, a job
that cannot write the sweep's directory sends its run directory back."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from inductor_bench.core.errors import DeviceError, ResultError, UsageError
from inductor_bench.core.rundir import load_any
from inductor_bench.core.sweep import CellStatus
from inductor_bench.core.sweep_table import build_table
from inductor_bench.runner import sweep_job
from inductor_bench.runner.sweep_exec import LocalExecutor, local_device, local_slots, visible_gpus
from inductor_bench.runner.sweep_job import STOP_GRACE_S, Job, run_job, unpack
from inductor_bench.runner.sweep_run import load_results, load_sweep, run_sweep

from .sweep_helpers import Events, alive, grid, kill_when_started, ok, standin, where


def _run(tmp: Path, names, actions, slots, **kw):
    events = Events()
    s = run_sweep(
        tmp / "sweep",
        grid(names),
        lambda: LocalExecutor(slots),
        on_event=events,
        command=standin(actions),
        **kw,
    )
    return s, events


def test_slots_come_from_cuda_visible_devices():
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "2, 3"}) == ["2", "3"]
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": ""}) == []
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "-1"}) == []
    assert local_slots("cpu", {"CUDA_VISIBLE_DEVICES": "0,1"}) == [None]
    assert local_slots("auto", {"CUDA_VISIBLE_DEVICES": "0,1"}) == ["0", "1"]
    assert local_slots("auto", {"CUDA_VISIBLE_DEVICES": ""}) == [None]
    with pytest.raises(DeviceError, match="--device cuda: no GPU visible"):
        local_slots("cuda", {"CUDA_VISIBLE_DEVICES": ""})


def test_the_local_device_is_checked_and_auto_resolved():
    assert local_device("cpu", {"CUDA_VISIBLE_DEVICES": "0"}) == "cpu"
    assert local_device("auto", {"CUDA_VISIBLE_DEVICES": ""}) == "cpu"
    with pytest.raises(DeviceError, match="--device cuda: "):
        local_device("cuda", {"CUDA_VISIBLE_DEVICES": ""})


def test_each_gpu_slot_runs_one_job_at_once_pinned_to_its_gpu(tmp_path):
    names = ["a", "b", "c", "d"]
    meet = str(tmp_path / "meet")
    s, events = _run(tmp_path, names, {n: ok("--meet", meet, "4") for n in names}, ["0", "1", "2", "3"])
    assert [c.status for c in s.cells] == [CellStatus.DONE] * 4
    seen = {where(tmp_path / "sweep" / n)["CUDA_VISIBLE_DEVICES"] for n in names}
    assert seen == {"0", "1", "2", "3"}  # and all four met: they ran at the same time
    assert len(list(Path(meet).iterdir())) == 4
    assert [e[0] for e in events.seen].count("start") == 4 and events.seen[-1][2] == "4/4 done"
    saved = load_sweep(tmp_path / "sweep")
    assert [c.status for c in saved.cells] == [CellStatus.DONE] * 4
    assert {c.where.split(" ", 1)[1] for c in saved.cells} == {f"CUDA_VISIBLE_DEVICES={i}" for i in range(4)}
    table = build_table(saved, load_results(tmp_path / "sweep", saved))
    assert table.geomeans["default"][1] == 4


def test_on_the_cpu_jobs_run_one_at_a_time(tmp_path):
    names = ["a", "b", "c"]
    s, _ = _run(tmp_path, names, {n: ok("--hold", "0.3") for n in names}, [None])
    spans = sorted((w["start"], w["end"]) for w in (where(tmp_path / "sweep" / n) for n in names))
    assert len(spans) == 3 and all(prev[1] <= nxt[0] for prev, nxt in zip(spans, spans[1:], strict=False))
    assert [c.status for c in s.cells] == [CellStatus.DONE] * 3


def test_a_job_killed_mid_run_marks_its_cell_and_the_same_sweep_retries_it(tmp_path):
    pids = tmp_path / "pids"
    actions = {"a": ok("--hold", "1"), "b": ["--started", str(pids), "hang"], "c": ok()}
    killer = kill_when_started(pids, "b")
    s, events = _run(tmp_path, ["a", "b", "c"], actions, ["0", "1"])
    killer.join()
    status = {c.model: c for c in s.cells}
    assert (status["a"].status, status["c"].status) == (CellStatus.DONE, CellStatus.DONE)
    assert status["b"].status == CellStatus.KILLED and status["b"].exit_code == -signal.SIGKILL
    assert status["b"].reason == "compare was killed by SIGKILL (out of memory? the OOM killer sends SIGKILL)"
    assert events.seen[-1][2] == "2/3 done, 1 killed"
    log = (tmp_path / "sweep" / "logs" / "b.log").read_text()
    assert log == "stand-in hang for b\n"
    first_pids = {n: where(tmp_path / "sweep" / n)["pid"] for n in ("a", "c")}
    # the same sweep again: only b runs, in a directory of its own
    s2, events2 = _run(tmp_path, ["a", "b", "c"], {**actions, "b": ok()}, ["0", "1"])
    assert [c.status for c in s2.cells] == [CellStatus.DONE] * 3
    b = s2.cell("b")
    assert (b.attempts, b.run_dir) == (2, "b.try2") and (tmp_path / "sweep" / "b").is_dir()
    assert [e for e in events2.seen if e[0] == "start"] == [("start", "b", "2/3 done")]
    assert {n: where(tmp_path / "sweep" / n)["pid"] for n in ("a", "c")} == first_pids


def test_attempt_names_do_not_skip_when_a_job_died_before_writing_anything(tmp_path):
    """Attempt 1 killed before its compare made its run directory: the sweep made it as the job
    started, so the retry's b.try2 sits beside b (empty) and each has its log."""
    s, _ = _run(tmp_path, ["b"], {"b": ["vanish"]}, [None])
    b = s.cell("b")
    assert (b.status, b.attempts, b.run_dir, b.exit_code) == (CellStatus.KILLED, 1, "b", -signal.SIGKILL)
    d = tmp_path / "sweep"
    assert (d / "b").is_dir() and not any((d / "b").iterdir())
    with pytest.raises(ResultError) as e:  # report and diff, given it, say what it is
        load_any(d / "b")
    assert str(e.value) == (f"{d / 'b'}: an attempt of the sweep in {d} that ended before its compare "
                            f"wrote anything; its console output is {d / 'logs' / 'b.log'}")
    s2, _ = _run(tmp_path, ["b"], {"b": ok()}, [None])
    assert (s2.cell("b").status, s2.cell("b").attempts, s2.cell("b").run_dir) == (CellStatus.DONE, 2, "b.try2")
    assert sorted(p.name for p in d.iterdir() if p.is_dir()) == ["b", "b.try2", "logs"]
    assert sorted(p.name for p in (d / "logs").iterdir()) == ["b.log", "b.try2.log"]


def test_a_done_cell_whose_result_is_torn_or_gone_runs_again(tmp_path):
    """The same sweep again skipped a done cell whatever its directory then held: a torn
    compare.json or a removed one showed as done, every figure '-', exit 0."""
    _run(tmp_path, ["a", "b", "c"], {n: ok() for n in "abc"}, [None])
    d = tmp_path / "sweep"
    (d / "a" / "compare.json").write_text('{"schema": ')
    (d / "b" / "compare.json").rename(d / "b" / "moved.json")
    said = []
    s = run_sweep(d, grid(["a", "b", "c"]), lambda: LocalExecutor([None]), command=standin({n: ok() for n in "abc"}),
                  on_event=lambda what, cell, _: said.append((what, cell and cell.model, cell and cell.reason)))
    assert [e for e in said if e[0] == "lost"] == [
        ("lost", "a", f"{d / 'a' / 'compare.json'}: not readable as JSON (Expecting value: line 1 column 12 (char 11))"),
        ("lost", "b", f"{d / 'b' / 'compare.json'}: its result is gone")]
    assert [e[1] for e in said if e[0] == "start"] == ["a", "b"]
    assert [(c.status, c.attempts, c.run_dir, c.reason) for c in s.cells] == [
        (CellStatus.DONE, 2, "a.try2", None), (CellStatus.DONE, 2, "b.try2", None), (CellStatus.DONE, 1, "c", None)]
    assert (d / "a" / "compare.json").read_text() == '{"schema": '  # the damaged attempt is kept as it is
    assert all(r is not None for r in load_results(d, s).values())


def test_a_job_past_its_time_limit_is_stopped_as_ctrl_c_stops_it(tmp_path):
    """Stopped as Ctrl-C stops compare (exit 130: what it measured is saved), not killed."""
    t0 = time.monotonic()
    s, _ = _run(tmp_path, ["a", "b"], {"a": ["hang"], "b": ok()}, [None], timeout_s=1.0)
    assert s.cell("a").status == CellStatus.TIMEOUT and s.cell("b").status == CellStatus.DONE
    assert (s.cell("a").reason, s.cell("a").exit_code) == ("ran past --job-timeout and was stopped", 130)
    assert time.monotonic() - t0 < 60  # not the stand-in's hang


def test_a_job_deaf_to_ctrl_c_past_its_time_limit_is_killed_after_the_grace(tmp_path, monkeypatch):
    monkeypatch.setattr(sweep_job, "STOP_GRACE_S", 1.0)
    t0 = time.monotonic()
    s, _ = _run(tmp_path, ["a"], {"a": ["deaf"]}, [None], timeout_s=1.0)
    assert (s.cell("a").status, s.cell("a").exit_code) == (CellStatus.TIMEOUT, -signal.SIGKILL)
    assert time.monotonic() - t0 < 30


def test_a_failed_job_keeps_the_commands_error_line(tmp_path):
    s, _ = _run(tmp_path, ["a"], {"a": ["fail"]}, [None])
    assert s.cell("a").status == CellStatus.FAILED and s.cell("a").exit_code == 3
    assert s.cell("a").reason == "error: the stand-in model raised"


@pytest.fixture
def ctrl_c_raises():
    """Ctrl-C raises KeyboardInterrupt in this process, and the jobs it starts take SIGINT at
    its default, as in a terminal: a suite run as a background job of a non-interactive shell
    starts with SIGINT ignored, which the tool rightly keeps (its jobs do not: below)."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def test_a_sweep_started_ignoring_sigint_still_stops_its_jobs_as_ctrl_c_does(tmp_path):
    """A sweep run as a script's background job starts with SIGINT ignored (and keeps it so);
    its jobs take SIGINT at its default all the same: the sweep's stop (SIGINT) makes them save
    and exit 130 at once, not be killed past the grace with nothing saved."""
    pids = tmp_path / "pids"
    job = Job(model="a", argv=["tests.sweep_standin", "--started", str(pids), "hang"], out_dir=str(tmp_path / "a"))
    stop = threading.Event()

    def stop_when_started() -> None:
        deadline = time.monotonic() + 120
        while not (pids / "a.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # past the stand-in's start
        stop.set()

    threading.Thread(target=stop_when_started, daemon=True).start()
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        outcome = run_job(job, stop)
    finally:
        signal.signal(signal.SIGINT, old)
    assert (outcome.exit_code, outcome.stopped) == (130, True)
    assert outcome.seconds < STOP_GRACE_S


def test_ctrl_c_stops_the_running_jobs_saves_them_and_starts_no_other(tmp_path, ctrl_c_raises):
    pids = tmp_path / "pids"
    actions = {n: ["--started", str(pids), "hang"] for n in ("a", "b", "c")}

    def interrupt() -> None:
        deadline = time.monotonic() + 120
        while len(list(pids.glob("*.pid"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        _run(tmp_path, ["a", "b", "c"], actions, ["0", "1"])
    saved = load_sweep(tmp_path / "sweep")
    assert [c.status for c in saved.cells] == [CellStatus.INTERRUPTED] * 2 + [CellStatus.PENDING]
    assert [c.exit_code for c in saved.cells[:2]] == [130, 130]  # each stopped as Ctrl-C stops compare
    assert not any(alive(int(p.read_text())) for p in pids.glob("*.pid"))


def test_a_cell_the_stopped_sweep_did_not_reach_keeps_its_last_attempt(tmp_path, ctrl_c_raises):
    """a and b failed; the same sweep again runs a (one at a time) and is stopped: b, never
    started, is still the failed cell it was, with its reason, not a pending one."""
    pids = tmp_path / "pids"
    _run(tmp_path, ["a", "b"], {"a": ["fail"], "b": ["fail"]}, [None])

    def interrupt() -> None:
        deadline = time.monotonic() + 120
        while not (pids / "a.try2.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        _run(tmp_path, ["a", "b"], {"a": ["--started", str(pids), "hang"], "b": ok()}, [None])
    a, b = load_sweep(tmp_path / "sweep").cells
    assert (a.status, a.attempts, a.run_dir) == (CellStatus.INTERRUPTED, 2, "a.try2")
    assert (b.status, b.attempts, b.run_dir) == (CellStatus.FAILED, 1, "b")
    assert b.reason == "error: the stand-in model raised"


def test_a_job_that_cannot_see_the_sweep_sends_its_run_directory_back(tmp_path):
    out = tmp_path / "sweep" / "a"
    job = Job(
        model="a",
        argv=["tests.sweep_standin", *ok()],
        out_dir=str(out),
        marker=(str(tmp_path / "no-such-marker"), "token"),
    )
    outcome = run_job(job)
    assert outcome.exit_code == 0 and not out.exists() and outcome.archive is not None
    unpack(outcome.archive, out)
    assert json.loads((out / "compare.json").read_text())["schema"] == "inductor-bench/compare"
    with pytest.raises(FileExistsError):
        unpack(outcome.archive, out)  # a run directory is never overwritten


def test_a_directory_holding_something_else_or_a_running_sweep_is_refused(tmp_path):
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "x.txt").write_text("mine")
    with pytest.raises(UsageError, match="not empty and holds no sweep"):
        run_sweep(tmp_path / "other", grid(["a"]), lambda: LocalExecutor([None]), on_event=Events())
    busy = tmp_path / "busy"
    busy.mkdir()
    with open(busy / ".sweep.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with pytest.raises(UsageError, match="another sweep is running there"):
            run_sweep(busy, grid(["a"]), lambda: LocalExecutor([None]), on_event=Events())
