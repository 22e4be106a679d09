"""A compile worker killed by --timeout names the phase that ran past it. A compare column that
compiled and then ran past its timeout while timing its steps (``--repeat 1000000``) had been
shown as ``compiling mlp.py (...): failed``, its report saying only that the compile worker was
killed, its compile time a dash in the table and 0 in the JSON."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from inductor_bench.commands.progress import TerminalProgress
from inductor_bench.core.compare import CompareResult, ModeResult
from inductor_bench.core.errors import WorkerTimeout
from inductor_bench.core.result_json import result_json
from inductor_bench.core.workload import WorkloadOptions
from inductor_bench.render.compare import render_compare
from inductor_bench.runner import compile_phase
from inductor_bench.runner.compile_phase import named_on_timeout, phase_file
from inductor_bench.runner.compile_run import compile_workload
from inductor_bench.runner.settings import RunSettings

KILLED = "capture worker exceeded --timeout 60s and was killed (log: /r/default/logs/compile-default.log)"


def _worker_reached(path: Path, *phases: tuple[str, float | None]) -> None:
    """The worker's side, as ``capture.py`` calls it: attached, then each phase entered."""
    compile_phase.attach(str(path))
    try:
        for phase, first_s in phases:
            compile_phase.enter(phase, first_s)
    finally:
        compile_phase.attach(None)


def _killed(path: Path, compiled: bool = True) -> tuple[WorkerTimeout, dict[str, str]]:
    outcome: dict[str, str] = {}
    with pytest.raises(WorkerTimeout) as e, named_on_timeout(path, 60.0, compiled, outcome):
        raise WorkerTimeout(KILLED)
    return e.value, outcome


def test_a_worker_killed_while_timing_its_steps_says_it_compiled_and_what_ran_past(tmp_path):
    path = phase_file(tmp_path / "compile-default.log")
    _worker_reached(path, (compile_phase.WAITING, 41.94), (compile_phase.TIMING, 41.94))
    err, outcome = _killed(path)
    assert str(err) == ("capture worker killed: compiled in 41.9 s, then timing its steps ran past --timeout "
                        "60s (log: /r/default/logs/compile-default.log)")
    assert err.partial == {"compile_s": 41.94}
    assert outcome == {"failed": "compiled in 41.9 s, then timing its steps ran past --timeout 60s"}


def test_each_phase_after_the_first_call_is_named_and_an_eager_run_did_not_compile(tmp_path):
    path = tmp_path / "p.json"
    _worker_reached(path, (compile_phase.TURNS, 2.5))
    assert _killed(path)[1]["failed"] == ("compiled in 2.5 s, then timing its step and graphs in turns ran "
                                          "past --timeout 60s")
    _worker_reached(path, (compile_phase.PROFILING, 0.25))
    assert _killed(path, compiled=False)[1]["failed"] == ("its first call took 0.2 s, then profiling a few "
                                                          "steps ran past --timeout 60s")


def test_a_worker_killed_in_its_first_call_or_before_keeps_its_error(tmp_path):
    path = tmp_path / "p.json"
    err, outcome = _killed(path)  # no phase file: the worker never got to write one (importing torch)
    assert str(err) == KILLED and outcome == {"failed": "ran past --timeout 60s (starting)"}
    _worker_reached(path)  # attached: its first call (the compile) running
    err, outcome = _killed(path)
    assert str(err) == KILLED and outcome == {"failed": "ran past --timeout 60s (compiling)"}
    assert not hasattr(err, "partial")
    assert _killed(path, compiled=False)[1] == {"failed": "ran past --timeout 60s (its first call)"}


def test_the_progress_line_of_a_phase_that_raised_takes_its_own_words():
    out = io.StringIO()
    with pytest.raises(WorkerTimeout), TerminalProgress(out).phase("compiling mlp.py") as ph:
        ph["failed"] = "compiled in 41.9 s, then timing its steps ran past --timeout 60s"
        raise WorkerTimeout(KILLED)
    assert out.getvalue().splitlines()[-1].rsplit(" (", 1)[0] == (
        "compiling mlp.py: compiled in 41.9 s, then timing its steps ran past --timeout 60s")


def test_the_report_and_the_json_keep_the_compile_time_of_a_column_killed_after_it():
    # synthetic: a compare whose default column compiled in 41.92 s and was killed while timing its steps
    killed = ModeResult(mode="default", status="timeout", compile_s=41.92,
                        reason="capture worker killed: compiled in 41.9 s, then timing its steps ran past "
                        "--timeout 60s (log: /r/default/logs/compile-default.log)")
    result = CompareResult(model="mlp", device="cpu", modes=[ModeResult(mode="eager", step_samples_ms=[1.0] * 20),
                                                             killed])
    text = render_compare(result)
    row = next(ln for ln in text.splitlines() if ln.startswith("compile (first call)"))
    assert row.split()[-2:] == ["41.92", "s"]
    assert f"default: timeout: {killed.reason}" in text
    assert json.loads(result_json(result))["modes"][1]["compile_s"] == 41.92


SLOW_STEP = '''
import time
import torch


class Slow(torch.nn.Module):
    def forward(self, x):
        time.sleep(0.05)
        return x + 1


def make_workload(device="cpu"):
    return Slow(), (torch.ones(4, device=device),)
'''


@pytest.mark.slow
def test_a_real_worker_killed_while_timing_its_steps_is_said_so(tmp_path):
    # the eager run of a model whose call sleeps 50 ms, 10**6 steps asked: its first call returns at
    # once, its timing runs past the timeout (45 s: a loaded machine takes up to 15 s to import torch)
    model = tmp_path / "slow_step.py"
    model.write_text(SLOW_STEP)
    out = io.StringIO()
    settings = RunSettings(timeout=45.0, steps=10**6, step_budget_s=None, min_steps=1, progress=TerminalProgress(out))
    outcome = compile_workload(WorkloadOptions(path=str(model), device="cpu", mode="eager"), tmp_path / "run",
                               settings)
    log = tmp_path / "run" / "logs" / "compile-eager.log"
    assert isinstance(outcome.error, WorkerTimeout)
    first_s = outcome.compile_s
    assert first_s is not None and 0.05 <= first_s < 45
    said = f"its first call took {first_s:.1f} s, then timing its steps ran past --timeout 45s"
    assert str(outcome.error) == f"capture worker killed: {said} (log: {log})"
    assert out.getvalue().splitlines()[-1].rsplit(" (", 1)[0].endswith(f"(inference, device cpu, mode eager, "
                                                                        f"float32): {said}")


def test_a_compare_whose_interleaved_timing_was_killed_says_why_its_columns_own_samples_are_used(
        tmp_path, monkeypatch):
    # seen in compare models/mlp.py --modes default --no-eager --repeat 10000 on a loaded 2-core machine:
    # the timing worker ran past --timeout 900s; the report said only "steps timed in each column's
    # compile worker, not interleaved: default (10000 calls)", the reason in compare.json's errors alone
    from inductor_bench.runner import compare as runner_compare

    def killed(*args, **kwargs):
        raise WorkerTimeout("timer worker exceeded --timeout 900s and was killed (log: /r/logs/timer.log)")

    monkeypatch.setattr(runner_compare.CompareRun, "time_sides", killed)
    column = ModeResult(mode="default", step_samples_ms=[1.0] * 20, run_dir=str(tmp_path))
    result = CompareResult(model="mlp", device="cpu", modes=[column])
    runner_compare._time_interleaved([(column, {})], runner_compare.CompareRun(repeat=20), tmp_path, result)
    assert result.errors == ["interleaved timing: timer worker exceeded --timeout 900s and was killed (log: "
                             "/r/logs/timer.log); each column's own samples are used"]
    assert ("steps timed in each column's compile worker, not interleaved (the interleaved timing failed: timer "
            "worker exceeded --timeout 900s and was killed (log: /r/logs/timer.log)): default (20 calls)"
            ) in render_compare(result).replace("\n", " ")


def test_a_compare_whose_interleaved_timing_was_killed_exits_as_a_worker_past_its_timeout(tmp_path, monkeypatch):
    # the same run had exited 0, where a worker past --timeout is exit 4 (README), as a column's is
    from inductor_bench.runner import compare as runner_compare

    timer_killed = WorkerTimeout("timer worker exceeded --timeout 900s and was killed (log: /r/logs/timer.log)")

    def killed(*args, **kwargs):
        raise timer_killed

    def one_column(opts, modes, run, run_dir, result, name, sides):
        column = ModeResult(mode="default", step_samples_ms=[1.0] * 20, run_dir=str(run_dir / "default"))
        result.modes.append(column)
        sides.append((column, {}))

    monkeypatch.setattr(runner_compare.CompareRun, "time_sides", killed)
    monkeypatch.setattr(runner_compare, "run_modes", one_column)
    model = tmp_path / "m.py"
    model.write_text(SLOW_STEP)
    result, _, err = runner_compare.run_compare(WorkloadOptions(path=str(model), device="cpu"),
                                                ["default"], root=tmp_path / "runs")
    assert err is timer_killed and err.exit_code == 4
    assert [m.step_samples_ms for m in result.modes] == [[1.0] * 20]


def test_the_progress_line_of_a_timing_worker_past_its_timeout_says_so(tmp_path, monkeypatch):
    # it had ended "timing its steps (10000 calls): failed (901.2 s)"
    from inductor_bench.runner import compare_timer

    def killed(*args, **kwargs):
        raise WorkerTimeout("timer worker exceeded --timeout 900s and was killed")

    monkeypatch.setattr(compare_timer, "run_worker", killed)
    out = io.StringIO()
    run = compare_timer.CompareRun(repeat=10000, settings=RunSettings(timeout=900.0, progress=TerminalProgress(out)))
    with pytest.raises(WorkerTimeout):
        run.time_sides([{}], "cpu", tmp_path, "timing its steps (10000 calls)")
    assert out.getvalue().splitlines()[-1].rsplit(" (", 1)[0] == (
        "timing its steps (10000 calls): ran past --timeout 900s")
