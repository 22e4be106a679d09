"""A script killed by --timeout while it ran (a training loop that runs on long after its
compiles): the line says the script ran past the timeout and names --script-seconds, the way to
profile a long script, and the report still says it ran a script. It had read "capture worker
exceeded --timeout 45s and was killed", the progress line "ran past --timeout 45s (compiling)"
35 s after the compile had ended, and the report's header "inference · mode default · float32",
a factory model's, for the script that picks its own dtype."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from inductor_bench.commands.progress import TerminalProgress
from inductor_bench.core.errors import WorkerTimeout
from inductor_bench.core.workload import WorkloadOptions
from inductor_bench.runner import compile_phase, compile_run
from inductor_bench.runner.compile_phase import named_on_timeout, phase_file
from inductor_bench.runner.settings import RunSettings

KILLED = "capture worker exceeded --timeout 45s and was killed (log: /r/logs/compile-default.log)"
SAID = ("the script ran past --timeout 45s and was killed (--script-seconds S stops a long script after S "
        "seconds, its graphs' calls counted up to then) (log: /r/logs/compile-default.log)")


def _killed(path: Path, script: bool) -> tuple[WorkerTimeout, dict[str, str]]:
    outcome: dict[str, str] = {}
    with pytest.raises(WorkerTimeout) as e, named_on_timeout(path, 45.0, True, outcome, script=script):
        raise WorkerTimeout(KILLED)
    return e.value, outcome


def _attached(path: Path) -> None:
    """The worker's side, as ``capture.py`` calls it before it runs the script."""
    compile_phase.attach(str(path))
    compile_phase.attach(None)


def test_a_script_killed_while_it_ran_is_said_so_and_told_of_script_seconds(tmp_path):
    path = tmp_path / "p.json"
    err, outcome = _killed(path, script=True)  # killed importing torch: not the script's doing
    assert str(err) == KILLED and outcome == {"failed": "ran past --timeout 45s (starting)"}
    _attached(path)
    err, outcome = _killed(path, script=True)
    assert str(err) == SAID and outcome == {"failed": "ran past --timeout 45s (running the script)"}
    assert _killed(path, script=False)[1] == {"failed": "ran past --timeout 45s (compiling)"}


def test_the_outcome_of_a_killed_script_worker_says_a_script_ran(tmp_path, monkeypatch):
    script = tmp_path / "loop.py"
    script.write_text("while True:\n    pass\n")

    def killed_while_running(module, request, **kwargs):
        kwargs["log_path"].parent.mkdir(parents=True)  # as run_worker makes it
        _attached(Path(request["phase_file"]))
        raise WorkerTimeout(f"capture worker exceeded --timeout 45s and was killed (log: {kwargs['log_path']})")

    monkeypatch.setattr(compile_run, "run_worker", killed_while_running)
    out = io.StringIO()
    outcome = compile_run.compile_workload(WorkloadOptions(path=str(script), device="cpu"), tmp_path / "run",
                                           RunSettings(timeout=45.0, progress=TerminalProgress(out)))
    log = tmp_path / "run" / "logs" / "compile-default.log"
    assert outcome.script is True and outcome.modules == []
    assert str(outcome.error) == SAID.replace("/r/logs/compile-default.log", str(log))
    assert out.getvalue().splitlines()[-1].rsplit(" (", 1)[0] == (
        "compiling loop.py (a script, device cpu, mode default): ran past --timeout 45s (running the script)")
    assert phase_file(log).exists()
