"""Resuming a sweep whose sweep.json lags what its jobs left on disk (a stop whose saves failed
onto a full disk: a job finished, its compare.json is whole, but sweep.json still says the cell
is running, or pending where the job's start was not saved either): the cell is taken as done
from that attempt, said so on stderr, and its job is not run again under a new attempt name. An
attempt cut short (half unpacked from a job on another machine, a column stopped, another
job's result, still being written by a live process) is retried as before.

The sweep directories are synthetic, built by hand; each attempt's compare.json is the recorded
CPU compare of models/mlp.py (tests/fixtures/results/cpu_mlp_compare: eager, default,
max-autotune, reduce-overhead skipped on the CPU) with its model path set to the cell's. The
jobs that do run are the stand-in (tests/sweep_standin.py), whose directories never hold a
whole compare run."""

from __future__ import annotations

import datetime
import fcntl
import json
import os
from pathlib import Path

import pytest

from inductor_bench.commands.sweep_options import ExecutorKind
from inductor_bench.commands.sweep_progress import print_event
from inductor_bench.core.sweep import CellStatus
from inductor_bench.core.sweep_plan import new_sweep
from inductor_bench.runner.sweep_exec import LocalExecutor
from inductor_bench.runner.sweep_run import load_results, load_sweep, run_sweep

from .sweep_helpers import FIXTURE, Events, ok, standin

MODES = ["default", "max-autotune", "reduce-overhead"]  # the recorded compare's columns, less eager
COLUMNS = ("eager", "default", "max-autotune")  # those it measured, each with its directory


TOOK_S = 144  # synthetic: each whole attempt's last file is written this long after its compare's start


def _whole_attempt(run_dir: Path, model_path: str, **edit) -> None:
    """``run_dir`` as a compare that ran to its end leaves it: compare.json (the recorded one,
    its ``model_path`` the cell's; ``edit``: fields changed), meta.json, report.txt,
    index.html, and the directory of each column it measured; its files' times from its start
    (compare.json's ``created``) to ``TOOK_S`` after it, index.html last."""
    data = json.loads(Path(FIXTURE).read_text())
    data.update(model_path=model_path, **edit)
    run_dir.mkdir()
    (run_dir / "compare.json").write_text(json.dumps(data))
    (run_dir / "meta.json").write_text(json.dumps({"tool": "inductor-bench compare", "status": "partial"}))
    (run_dir / "report.txt").write_text("the compare's report\n")
    (run_dir / "index.html").write_text("<html></html>\n")
    start = datetime.datetime.fromisoformat(data["created"]).timestamp()
    for name, after in (("compare.json", 120), ("meta.json", 121), ("report.txt", 130), ("index.html", TOOK_S)):
        os.utime(run_dir / name, (start + after, start + after))
    for column in COLUMNS:
        (run_dir / column).mkdir()


def _stale(d: Path, status: str, attempts: int) -> None:
    """``d/sweep.json`` as a stop whose saves failed left it: ``a`` done (its attempt whole),
    ``mlp`` ``status`` after ``attempts`` attempts (the last one's run directory its run_dir)."""
    s = new_sweep(["/m/a.py", "/m/mlp.py"], ["a", "mlp"], MODES, [], device="cpu", shard=None,
                  executor="local", created="")
    a, m = s.cells
    a.status, a.run_dir, a.attempts, a.exit_code, a.seconds = CellStatus.DONE, "a", 1, 0, 60.0
    m.status, m.attempts = status, attempts
    m.run_dir = ("mlp" if attempts == 1 else f"mlp.try{attempts}") if attempts else ""
    d.mkdir()
    _whole_attempt(d / "a", "/m/a.py")
    (d / "sweep.json").write_text(s.to_json())


def _resume(d: Path) -> tuple:
    events = Events()
    s = run_sweep(d, load_sweep(d), lambda: LocalExecutor([None]), on_event=events,
                  command=standin({"a": ok(), "mlp": ok()}))
    return s, events


@pytest.mark.parametrize(("status", "attempts"), [(CellStatus.RUNNING, 1), (CellStatus.PENDING, 0)])
def test_a_job_that_finished_while_sweep_json_lagged_is_not_run_again(tmp_path, status, attempts):
    """mlp's job finished and saved its whole result in DIR/mlp, but the save of sweep.json
    after its end (running) or even its start (pending) failed. The same command ran it again
    as mlp.try2; it is now done from DIR/mlp and no job runs."""
    d = tmp_path / "s"
    _stale(d, status, attempts)
    _whole_attempt(d / "mlp", "/m/mlp.py")
    s, events = _resume(d)
    m = s.cell("mlp")
    assert (m.status, m.attempts, m.run_dir, m.exit_code, m.reason) == (CellStatus.DONE, 1, "mlp", 0, None)
    assert events.seen == [("found", "mlp", "2/2 done"), ("plan", None, "2/2 done")]
    assert sorted(p.name for p in d.iterdir() if p.is_dir()) == ["a", "mlp"]  # no mlp.try2, no logs
    saved = load_sweep(d).cell("mlp")
    assert (saved.status, saved.run_dir, saved.attempts) == (CellStatus.DONE, "mlp", 1)
    result = load_results(d, s)["mlp"]
    assert result is not None and result.model_path == "/m/mlp.py"


def test_the_newest_whole_attempt_is_taken_and_the_progress_line_says_so(tmp_path, capsys):
    """mlp was interrupted as mlp, then its second attempt mlp.try2 finished whole while
    sweep.json still said the first was interrupted (its start unsaved): it is done from
    mlp.try2, attempt 2, and stderr says so."""
    d = tmp_path / "s"
    _stale(d, CellStatus.INTERRUPTED, 1)
    data = json.loads(Path(FIXTURE).read_text())
    data["modes"][2]["status"] = "interrupted"
    _whole_attempt(d / "mlp", "/m/mlp.py", modes=data["modes"], errors=["interrupted"])
    _whole_attempt(d / "mlp.try2", "/m/mlp.py")
    seen = []
    say = print_event(ExecutorKind.local, d, queued=False)
    s = run_sweep(d, load_sweep(d), lambda: LocalExecutor([None]), command=standin({"mlp": ok()}),
                  on_event=lambda what, cell, sweep: (seen.append(what), say(what, cell, sweep)))
    m = s.cell("mlp")
    assert (m.status, m.attempts, m.run_dir) == (CellStatus.DONE, 2, "mlp.try2")
    assert seen == ["found", "plan"]
    assert capsys.readouterr().err.splitlines() == [
        f"sweep: mlp: found finished on disk, not re-run ({d / 'mlp.try2'} holds its whole result; "
        "its compare took 144 s by its files)",
        "sweep: 2 models x 3 modes, 2 done before, 0 to run on the local executor",
    ]


def _half_unpacked(run_dir: Path) -> None:
    """A run directory unpacked from a job on another machine up to its max-autotune column
    (members in name order: compare.json, default/, eager/, index.html, logs/, max-autotune/, ...)
    when the sweep unpacking it was killed: its lock file left, held by no one."""
    _whole_attempt(run_dir, "/m/mlp.py")
    for gone in ("meta.json", "report.txt"):
        (run_dir / gone).unlink()
    (run_dir / "max-autotune").rmdir()
    (run_dir / ".writing.lock").write_text("")


def _stopped_column(run_dir: Path) -> None:
    data = json.loads(Path(FIXTURE).read_text())
    data["modes"][2]["status"] = "interrupted"
    _whole_attempt(run_dir, "/m/mlp.py", modes=data["modes"], errors=["interrupted"])


def _ceilings_stopped(run_dir: Path) -> None:
    from inductor_bench.core.ceilings import STOPPED_NOTE

    _whole_attempt(run_dir, "/m/mlp.py", errors=[STOPPED_NOTE])


def _timing_failed(run_dir: Path) -> None:
    _whole_attempt(run_dir, "/m/mlp.py", errors=[
        "interleaved timing: the worker timed out after 600 s; each column's own samples are used"])


def _another_model(run_dir: Path) -> None:
    _whole_attempt(run_dir, "/m/other.py")


def _torn(run_dir: Path) -> None:
    _whole_attempt(run_dir, "/m/mlp.py")
    (run_dir / "compare.json").write_text('{"schema": ')


@pytest.mark.parametrize("partial", [_half_unpacked, _stopped_column, _ceilings_stopped, _timing_failed,
                                     _another_model, _torn])
def test_an_attempt_that_did_not_end_whole_is_retried(tmp_path, partial):
    d = tmp_path / "s"
    _stale(d, CellStatus.RUNNING, 1)
    partial(d / "mlp")
    s, events = _resume(d)
    m = s.cell("mlp")
    assert (m.status, m.attempts, m.run_dir) == (CellStatus.DONE, 2, "mlp.try2")
    assert [e[0] for e in events.seen] == ["plan", "start", "end"]
    assert (d / "mlp" / "compare.json").exists()  # the attempt is kept as it is


def test_an_attempt_a_live_process_still_writes_is_retried(tmp_path):
    """Its compare still holds it (the writing lock): not a result to take, however whole it reads."""
    d = tmp_path / "s"
    _stale(d, CellStatus.RUNNING, 1)
    _whole_attempt(d / "mlp", "/m/mlp.py")
    fd = os.open(d / "mlp" / ".writing.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        s, _ = _resume(d)
    finally:
        os.close(fd)
    assert (s.cell("mlp").status, s.cell("mlp").run_dir) == (CellStatus.DONE, "mlp.try2")


def test_the_command_again_says_the_job_was_found_finished_and_runs_none(tmp_path):
    """`sweep models/mlp.py ... --device cpu` after a stop whose save of mlp's end failed: exit 0,
    the table rendered from DIR/mlp, no job (no logs/, no mlp.try2)."""
    from .test_sweep_cli import _cli, _done_sweep

    model = Path(__file__).resolve().parents[1] / "models" / "mlp.py"
    d = _done_sweep(tmp_path / "s", models=[model])
    saved = json.loads((d / "sweep.json").read_text())
    saved["modes"] = MODES
    saved["cells"][0].update(status="running", exit_code=None)
    (d / "sweep.json").write_text(json.dumps(saved))
    (d / "mlp" / "compare.json").unlink()
    (d / "mlp").rmdir()
    _whole_attempt(d / "mlp", str(model))
    r = _cli(str(model), "--modes", ",".join(MODES), "--device", "cpu", "--out", str(d), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines() == [
        f"sweep: mlp: found finished on disk, not re-run ({d / 'mlp'} holds its whole result; "
        "its compare took 144 s by its files)",
        "sweep: 1 model x 3 modes, 1 done before, 0 to run on the local executor",
    ]
    assert sorted(p.name for p in d.iterdir() if p.is_dir()) == ["mlp"]
    assert json.loads((d / "sweep.json").read_text())["cells"][0]["status"] == "done"
    assert "1/1 done" in r.stdout
    assert "mlp: done in 144 s, found finished on disk (its compare's start to its last file) (mlp)" in r.stdout


def test_a_cell_found_finished_takes_its_time_from_its_files_not_an_earlier_attempts(tmp_path):
    """mlp's first attempt failed after 30 s (sweep.json kept its seconds as the second
    started); mlp.try2 finished whole, its end unsaved. Its time is what its files say, 144 s
    (compare.json's created to index.html), never attempt 1's 30 s; the notes say where it came
    from, and a job the sweep times again drops the mark."""
    from inductor_bench.core.sweep_table import build_table
    from inductor_bench.render.sweep import notes

    d = tmp_path / "s"
    _stale(d, CellStatus.RUNNING, 2)
    saved = json.loads((d / "sweep.json").read_text())
    saved["cells"][1]["seconds"] = 30.0
    (d / "sweep.json").write_text(json.dumps(saved))
    _whole_attempt(d / "mlp.try2", "/m/mlp.py", created="2026-12-07T10:00:00+00:00")
    s, _ = _resume(d)
    m = s.cell("mlp")
    assert (m.status, m.run_dir, m.seconds, m.found_on_disk) == (CellStatus.DONE, "mlp.try2", 144.0, True)
    assert (load_sweep(d).cell("mlp").seconds, load_sweep(d).cell("mlp").found_on_disk) == (144.0, True)
    lines = notes(build_table(load_sweep(d), load_results(d, load_sweep(d))))
    assert "mlp: done in 144 s, found finished on disk (its compare's start to its last file), attempt 2 " \
           "(mlp.try2)" in lines
    assert "a: done in 60.00 s (a)" in lines


def _copied(run_dir: Path, seconds_later: float) -> None:
    """``run_dir`` as ``cp -r`` leaves it, its times not kept: every file written ``seconds_later``
    after its compare's start (the copy's time, not the compare's)."""
    start = datetime.datetime.fromisoformat(json.loads((run_dir / "compare.json").read_text())["created"])
    for f in run_dir.iterdir():
        os.utime(f, (start.timestamp() + seconds_later,) * 2)


@pytest.mark.parametrize(("finished", "took", "by"), [
    ("2026-12-07T10:04:20+00:00", 260.0, "its compare.json"),  # the end its compare recorded
    (None, 348.0, "its files"),  # a result written before the end was recorded: the copy's times
])
def test_a_copied_sweep_takes_the_end_its_compare_recorded_else_its_files_times(tmp_path, capsys, finished,
                                                                               took, by):
    """Synthetic: mlp.try2's compare ran from 10:00:00 to 10:04:20 (260 s, ``finished`` in its
    compare.json), then the sweep was copied with ``cp -r`` 348 s after that start, and resumed.
    Its time is its compare's own, 260 s; a compare.json without ``finished`` falls back to its
    files' times (348 s), and the progress line and the notes say which."""
    from inductor_bench.core.sweep_table import build_table
    from inductor_bench.render.sweep import notes

    d = tmp_path / "s"
    _stale(d, CellStatus.RUNNING, 2)
    edit = {"finished": finished} if finished else {}
    _whole_attempt(d / "mlp.try2", "/m/mlp.py", created="2026-12-07T10:00:00+00:00", **edit)
    _copied(d / "mlp.try2", 348)
    say = print_event(ExecutorKind.local, d, queued=False)
    s = run_sweep(d, load_sweep(d), lambda: LocalExecutor([None]), command=standin({"mlp": ok()}), on_event=say)
    m = s.cell("mlp")
    assert (m.seconds, m.found_on_disk, m.end_recorded) == (took, True, finished is not None)
    assert capsys.readouterr().err.splitlines()[0] == (
        f"sweep: mlp: found finished on disk, not re-run ({d / 'mlp.try2'} holds its whole result; "
        f"its compare took {took:.0f} s by {by})")
    span = "start and end in its compare.json" if finished else "start to its last file"
    lines = notes(build_table(load_sweep(d), load_results(d, load_sweep(d))))
    assert f"mlp: done in {took:.0f} s, found finished on disk (its compare's {span}), attempt 2 " \
           "(mlp.try2)" in lines


def test_a_compare_records_when_it_wrote_its_result(tmp_path):
    """compare.json's ``finished``: when it was written, from its ``created`` on, read back as written."""
    from inductor_bench.core.compare import CompareResult
    from inductor_bench.core.rundir import load_compare
    from inductor_bench.runner.rundir import now, save_result

    before = datetime.datetime.now().astimezone().replace(microsecond=0)
    save_result(tmp_path, CompareResult(model="mlp", created=now()))
    after = datetime.datetime.now().astimezone()
    saved = json.loads((tmp_path / "compare.json").read_text())["finished"]
    assert before <= datetime.datetime.fromisoformat(saved) <= after
    assert load_compare(tmp_path).finished == saved
