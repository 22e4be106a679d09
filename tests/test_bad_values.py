"""Values the tool must refuse in one line before doing anything with them: a --timeout that
is not a number of seconds above zero, and a saved result with numbers JSON does not have
(NaN, Infinity, 1e999) or nested absurdly deep."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from .conftest import FIXTURES, MODELS, ROOT

SAVED = FIXTURES / "results" / "cpu_mlp_slow_train" / "breakdown.json"


def cli(*args: str, cwd=ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's package, from any directory
    return subprocess.run([sys.executable, "-m", "inductor_bench.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120, env=env)


def one_line(p: subprocess.CompletedProcess) -> str:
    assert p.returncode == 2 and "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr
    (line,) = p.stderr.splitlines()
    return line


@pytest.mark.parametrize("value,shown", [("nan", "nan"), ("0", "0"), ("-1", "-1"), ("inf", "inf")])
def test_a_timeout_that_is_not_seconds_above_zero_is_refused(tmp_path, value, shown):
    """nan meant no timeout at all; 0 and -1 started a worker only to kill it."""
    p = cli("breakdown", str(MODELS / "mlp.py"), "--device", "cpu", "--timeout", value, cwd=tmp_path)
    assert one_line(p) == f"inductor-bench: error: --timeout must be a number of seconds above 0, not {shown}"
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("command,option", [("compare", "--step-budget"), ("sweep", "--step-budget"),
                                            ("sweep", "--job-timeout")])
@pytest.mark.parametrize("value,shown", [("0", "0"), ("-1", "-1"), ("nan", "nan")])
def test_a_time_option_that_is_not_seconds_above_zero_is_refused(tmp_path, command, option, value, shown):
    """--step-budget 0 timed only the minimum calls; --job-timeout 0 would stop every job at once."""
    out = ["--out", str(tmp_path / "sweep")] if command == "sweep" else []
    p = cli(command, str(MODELS / "mlp.py"), "--device", "cpu", *out, option, value, cwd=tmp_path)
    assert one_line(p) == f"inductor-bench: error: {option} must be a number of seconds above 0, not {shown}"
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("number,why", [
    ("NaN", "NaN is not a number a result holds (JSON has no NaN or Infinity)"),
    ("-Infinity", "-Infinity is not a number a result holds (JSON has no NaN or Infinity)"),
    ("1e999", "1e999 is not a finite number"),
])
def test_a_result_with_a_number_json_has_not_is_refused(tmp_path, number, why):
    text = SAVED.read_text()
    data = json.loads(text)
    g = data["graphs"][0]
    old = json.dumps(g["wall_ms"])
    assert text.count(f'"wall_ms": {old}') >= 1
    bad = tmp_path / "breakdown.json"
    bad.write_text(text.replace(f'"wall_ms": {old}', f'"wall_ms": {number}', 1))
    for fmt in ("text", "json"):
        assert one_line(cli("report", str(bad), "--format", fmt)) == f"inductor-bench: error: {bad}: damaged: {why}"


def test_a_result_nested_100000_deep_is_refused(tmp_path):
    bad = tmp_path / "breakdown.json"
    bad.write_text('{"schema": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert one_line(cli("report", str(bad))) == (
        f"inductor-bench: error: {bad}: damaged: JSON nested too deeply to be a result")


@pytest.mark.parametrize("where", ["events", "args"])
def test_a_trace_nested_100000_deep_is_one_line(tmp_path, where):
    """It used to be exit 70, internal error: RecursionError."""
    deep = "[" * 100_000 + "]" * 100_000
    trace = tmp_path / "trace.json"
    trace.write_text('{"traceEvents": ' + (deep if where == "events" else f'[{{"ph": "X", "args": {deep}}}]') + "}")
    assert one_line(cli("analyze", str(trace))) == "inductor-bench: error: input nested too deeply to read"


@pytest.mark.parametrize("command", [
    ["breakdown", str(MODELS / "mlp.py"), "--device", "cpu"],
    ["compare", str(MODELS / "mlp.py"), "--device", "cpu"],
    ["diff", str(SAVED), str(SAVED)],
    ["analyze", str(FIXTURES / "hta_small")],
    ["kernel", str(SAVED.parent), "triton_poi_fused_0"],
    ["sweep", str(MODELS / "mlp.py"), "--out", "sweep"],
])
@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_json_on_stdout_beside_a_report_on_stdout_is_refused_before_any_work(tmp_path, command, fmt):
    """Before: --json - with --format markdown printed the JSON alone, after the whole run."""
    p = cli(*command, "--json", "-", "--format", fmt, cwd=tmp_path)
    assert one_line(p) == (f"inductor-bench: error: --json - and --format {fmt} both write to stdout: give "
                           "--json a file (--json result.json), or leave out --format")
    assert list(tmp_path.iterdir()) == []  # no run directory, nothing written


@pytest.mark.parametrize("command", ["breakdown", "compare", "sweep"])
def test_a_json_path_already_there_is_refused_before_the_run(tmp_path, command):
    """--json onto an existing file was refused only after the whole run (a breakdown of 27 s,
    a compare of minutes, a sweep of hours), exit 2 at its end."""
    taken = tmp_path / "result.json"
    taken.write_text("mine")
    p = cli(command, str(MODELS / "mlp.py"), "--device", "cpu", "--out", str(tmp_path / "run"),
            "--json", str(taken), cwd=tmp_path)
    assert one_line(p) == f"inductor-bench: error: --json {taken}: already exists (results are never overwritten)"
    assert not (tmp_path / "run").exists() and taken.read_text() == "mine"
