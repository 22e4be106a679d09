"""Hostile input gets one line naming the file and what is wrong, and the documented exit 2
(bad input; README's exit table), never an internal error (70) or a "cannot write" (74). The
traces here are synthetic: hand-built events, one step and one kernel, with one field broken."""

from __future__ import annotations

import errno
import json
import shutil
from pathlib import Path

import pytest

from inductor_bench.runner import rundir as runner_rundir

from .test_saved_run_faults import run_cli

FIXTURES = Path(__file__).parent / "fixtures"
RUN = FIXTURES / "runs" / "cpu_mlp_train_stalled"
TRACE = FIXTURES / "hta" / "triton_example_triton_example.json.gz"
STEP = '{"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100}'


def _trace(tmp_path: Path, kernel: str, name: str = "t.json") -> Path:
    """A trace of one step and one kernel event, written as raw JSON text (``kernel`` its body)."""
    p = tmp_path / name
    p.write_text('{"traceEvents": [' + STEP + ', {"ph": "X", "cat": "kernel", "pid": 0, "tid": 7, '
                 + kernel + "}]}")
    return p


@pytest.mark.parametrize("fields", [
    '"name": "k", "ts": 10, "dur": "inf", "args": {"correlation": 5}',
    '"name": "k", "ts": "NaN", "dur": 5, "args": {"correlation": 5}',
    '"name": "k", "ts": 10, "dur": "Infinity", "args": {"correlation": 5}',
    '"name": "k", "ts": NaN, "dur": 5, "args": {"correlation": 5}',
    '"name": "k", "ts": 10, "dur": 1e999, "args": {"correlation": 5}',
], ids=["inf-string", "nan-string", "infinity-string", "nan-literal", "overflow-literal"])
def test_a_time_that_is_not_finite_is_refused(capsys, tmp_path, fields):
    path = _trace(tmp_path, fields)
    code, out, err = run_cli(capsys, "analyze", str(path))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith(f"inductor-bench: error: {path}: complete event 'k' has a ts or dur that is not finite (ts ")


def test_a_kernel_named_by_a_number_is_refused(capsys, tmp_path):
    path = _trace(tmp_path, '"name": 12, "ts": 10, "dur": 5, "args": {"correlation": 5}')
    code, _, err = run_cli(capsys, "analyze", str(path))
    assert code == 2
    assert f"{path}: complete event 12 has no numeric ts/dur or a name that is not a string" in err


@pytest.mark.parametrize("value", ['{"a": 1}', "[1, 2]"])
def test_an_id_that_is_an_object_is_refused(capsys, tmp_path, value):
    path = _trace(tmp_path, f'"name": "k", "ts": 10, "dur": 5, "args": {{"correlation": {value}}}')
    code, _, err = run_cli(capsys, "analyze", str(path))
    assert code == 2
    assert f"{path}: event 'k': args.correlation is not an id (a number or a string)" in err


def _damaged_run(tmp_path: Path, change) -> Path:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    doc = json.loads((run / "breakdown.json").read_text())
    change(doc["graphs"][0])
    (run / "breakdown.json").write_text(json.dumps(doc))
    return run


@pytest.mark.parametrize("change, bad, n", [
    (lambda g: g["left_out"].append(len(g["wall_samples_ms"]) + 100), 139, 39),
    (lambda g: g.update(wall_samples_ms=[]), 0, 0),
], ids=["left-out-past-the-samples", "no-samples"])
@pytest.mark.parametrize("command", ["report", "diff"])
def test_a_left_out_iteration_the_samples_do_not_hold_is_damage(capsys, tmp_path, change, bad, n, command):
    run = _damaged_run(tmp_path, change)
    argv = ["report", str(run)] if command == "report" else ["diff", str(RUN), str(run)]
    code, _, err = run_cli(capsys, *argv)
    assert code == 2
    first = json.loads((RUN / "breakdown.json").read_text())["graphs"][0]
    assert len(first["wall_samples_ms"]) == 39 and first["left_out"][0] == 0  # the fixture as assumed
    assert (f"{run / 'breakdown.json'}: damaged: graphs[0-forward].left_out: {bad} is no iteration of "
            f"its {n} wall_samples_ms") in err


def test_a_directory_that_cannot_be_read_is_bad_input(capsys, tmp_path, monkeypatch):
    (tmp_path / "t.json").write_text("{}")
    real = Path.iterdir

    def refused(self):
        if self == tmp_path:
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "iterdir", refused)
    code, _, err = run_cli(capsys, "analyze", str(tmp_path))
    assert code == 2
    assert err.strip() == f"inductor-bench: error: {tmp_path}: cannot read this directory (Permission denied)"


def test_json_that_cannot_be_written_is_named_as_asked(capsys, tmp_path, monkeypatch):
    def refused(path, *a, **k):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(runner_rundir, "open", refused, raising=False)
    out = tmp_path / "out.json"
    code, _, err = run_cli(capsys, "analyze", str(TRACE), "--json", str(out))
    assert code == 74
    assert err.strip() == f"inductor-bench: error: {out}: cannot write (Permission denied)"


def test_a_run_directory_is_pointed_to_report(capsys):
    code, _, err = run_cli(capsys, "analyze", str(RUN))
    assert code == 2
    assert f"`inductor-bench report {RUN}` shows it" in err


def test_a_json_file_that_is_no_trace_is_skipped_and_named(capsys, tmp_path):
    shutil.copy(TRACE, tmp_path / TRACE.name)
    (tmp_path / "config.json").write_text('{"lr": 0.1}')
    code, out, err = run_cli(capsys, "analyze", str(tmp_path), "--format", "json")
    assert code == 0
    assert json.loads(out)["trace"] == str(tmp_path / TRACE.name)  # the one trace, read alone
    assert f"analyze: skipped {tmp_path / 'config.json'}: not a profiler trace (no traceEvents)" in err
    (tmp_path / TRACE.name).unlink()
    code, _, err = run_cli(capsys, "analyze", str(tmp_path))
    assert code == 2
    assert "no trace files (*.json, *.json.gz) in this directory (config.json: no traceEvents)" in err
