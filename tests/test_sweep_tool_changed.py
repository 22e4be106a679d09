"""A sweep whose tool changes on disk while it runs (``pip install -U inductor-bench`` during a
long sweep) launches no other job: every later job would import the new code beside the old one
and fail alike. It says so in one line with the version and source digest before and now, keeps
the finished cells, exits 4, and the same command resumes with the new code. The package tree
changed here is synthetic (two small .py files in a temporary directory); the jobs are the
stand-in (``tests/sweep_standin.py``), whose result is the recorded CPU compare of models/mlp.py."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import pytest

from inductor_bench import cli
from inductor_bench.commands import sweep as sweep_command
from inductor_bench.core.sweep import CellStatus
from inductor_bench.runner import sweep_run, sweep_tool
from inductor_bench.runner.sweep_exec import LocalExecutor
from inductor_bench.runner.sweep_run import LaunchesStopped, load_sweep, run_sweep

from .sweep_helpers import Events, grid, ok, standin

ROOT = Path(__file__).resolve().parents[1]


def _package(tmp: Path) -> Path:
    pkg = tmp / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "timer.py").write_text("def started(job, slot):\n    pass\n")
    return pkg


def _upgrade(pkg: Path) -> None:
    """What a newer release leaves: ``started`` takes two more arguments."""
    (pkg / "sub" / "timer.py").write_text("def started(job, slot, clock, budget):\n    pass\n")


def _digest(pkg: Path) -> str:
    """The source digest computed here: each file's path under the package and its bytes."""
    h = hashlib.sha256()
    for rel in ("__init__.py", "sub/timer.py"):
        h.update(rel.encode() + b"\0" + (pkg / rel).read_bytes() + b"\0")
    return h.hexdigest()[:12]


def _upgrading_after_first_start(pkg: Path, events, first: str = "a"):
    def on_event(what, cell, sweep):
        events(what, cell, sweep)
        if what == "start" and cell.model == first:
            _upgrade(pkg)
    return on_event


def test_the_tool_state_is_its_version_and_a_digest_of_its_sources(tmp_path):
    pkg = _package(tmp_path)
    before = sweep_tool.tool_state(pkg)
    assert before.digest == _digest(pkg)
    _upgrade(pkg)
    after = sweep_tool.tool_state(pkg)
    assert after.digest == _digest(pkg) != before.digest
    assert after.version == before.version
    assert sweep_tool.changed_since(before, before) is None
    assert sweep_tool.changed_since(before, after) == (
        f"the tool changed on disk since the sweep started (inductor-bench {before.version}, "
        f"source digest {before.digest} then, inductor-bench {after.version}, source digest {after.digest} now)")


def test_no_job_is_launched_once_the_tool_changed_and_the_same_sweep_resumes(tmp_path):
    pkg, d, events = _package(tmp_path), tmp_path / "sweep", Events()
    old = _digest(pkg)
    command = standin({n: ok() for n in "abc"})
    with pytest.raises(LaunchesStopped) as stopped:
        run_sweep(d, grid(["a", "b", "c"]), lambda: LocalExecutor([None]), command=command,
                  on_event=_upgrading_after_first_start(pkg, events), may_launch=sweep_tool.launch_check(pkg))
    new = _digest(pkg)
    assert f"source digest {old} then" in str(stopped.value) and f"source digest {new} now" in str(stopped.value)
    assert [(w, m) for w, m, _ in events.seen if w in ("start", "end")] == [("start", "a"), ("end", "a")]
    saved = load_sweep(d)
    assert [(c.model, c.status, c.attempts) for c in saved.cells] == [
        ("a", CellStatus.DONE, 1), ("b", CellStatus.PENDING, 0), ("c", CellStatus.PENDING, 0)]
    assert not (d / "b").exists() and not (d / "c").exists()

    again = run_sweep(d, grid(["a", "b", "c"]), lambda: LocalExecutor([None]), command=command,
                      on_event=Events(), may_launch=sweep_tool.launch_check(pkg))  # the new code's sweep
    assert [(c.model, c.status, c.attempts, c.run_dir) for c in again.cells] == [
        ("a", CellStatus.DONE, 1, "a"), ("b", CellStatus.DONE, 1, "b"), ("c", CellStatus.DONE, 1, "c")]


def test_the_command_says_it_in_one_line_exits_4_and_resumes(tmp_path, monkeypatch, capsys):
    pkg, out = _package(tmp_path), tmp_path / "sweep"
    models = [str(ROOT / "models" / "mlp.py"), str(ROOT / "models" / "transformer_block.py")]

    def run_with_standin(*args, on_event, **kw):
        told = _upgrading_after_first_start(pkg, on_event, first="mlp")
        return run_sweep(*args, on_event=told, command=standin({"mlp": ok(), "transformer_block": ok()}), **kw)

    monkeypatch.setattr(sweep_command, "run_sweep", run_with_standin)
    monkeypatch.setattr(sweep_command, "launch_check", functools.partial(sweep_tool.launch_check, pkg))
    argv = ["sweep", *models, "--modes", "default,max-autotune", "--device", "cpu", "--out", str(out)]
    old = _digest(pkg)
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    err = capsys.readouterr().err.strip().splitlines()  # the progress lines, then the error line
    assert exited.value.code == 4
    assert [ln for ln in err if ln.startswith("sweep: transformer_block")] == []  # never launched
    assert err[-1:] == [
        f"inductor-bench: error: sweep launched no other job: the tool changed on disk since the sweep started "
        f"(inductor-bench {sweep_tool.tool_state(pkg).version}, source digest {old} then, "
        f"inductor-bench {sweep_tool.tool_state(pkg).version}, source digest {_digest(pkg)} now); "
        f"1/2 done, 1 pending; the finished cells are kept in {out}: to finish with the tool it "
        "started with, install that again and run the same command; to go on with this one, "
        "run the same command (it resumes)"]
    assert [c.status for c in sweep_run.load_sweep(out).cells] == [CellStatus.DONE, CellStatus.PENDING]

    cli.main(argv)  # the new code resumes: the pending cell runs, the finished one is kept
    assert [(c.status, c.attempts) for c in sweep_run.load_sweep(out).cells] == [
        (CellStatus.DONE, 1), (CellStatus.DONE, 1)]
