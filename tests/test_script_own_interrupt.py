"""A script that ends itself: ``raise KeyboardInterrupt`` (a training loop's own stop condition)
is the script's failure, as any other exception it raises (exit 3, what it compiled kept), not a
crashed worker; a SIGINT that reaches the worker is still a stop. ``os._exit(0)`` says the script
ended the process, not only "exited with code 0". A user's Ctrl-C is tests/test_interrupt.py's."""

from __future__ import annotations

import json
import signal

import pytest

from inductor_bench.core import errors
from inductor_bench.core.workload import WorkloadOptions
from inductor_bench.runner.capture import _describe
from inductor_bench.runner.compile_run import COMPILE_WORKER
from inductor_bench.runner.stop import sigint_noted
from inductor_bench.runner.worker import run_worker

from .test_cli_errors import cli, one_error_line


def _run_script(tmp_path, text: str) -> dict:
    script = tmp_path / "own_end.py"
    script.write_text(text)
    request = {"options": WorkloadOptions(str(script)).to_dict(), "modules_log": str(tmp_path / "modules.jsonl"),
               "log": str(tmp_path / "compile.log")}
    return run_worker(COMPILE_WORKER, request, timeout=300, log_path=tmp_path / "compile.log")


def test_the_scripts_own_keyboard_interrupt_is_its_failure_with_what_it_recorded(tmp_path):
    with pytest.raises(errors.WorkloadError) as err:
        _run_script(tmp_path, "raise KeyboardInterrupt('patience ran out at epoch 3')\n")
    assert str(err.value) == ("the script raised KeyboardInterrupt itself (not a Ctrl-C: no signal reached it): "
                              f"patience ran out at epoch 3 (log: {tmp_path / 'compile.log'})")
    assert err.value.partial["script"] is True and err.value.partial["modules"] == []


@pytest.fixture
def sigint_default():
    """SIGINT as an interactive shell leaves it (Python's KeyboardInterrupt), here and in the
    workers started meanwhile: a job started in the background (``cmd &``, as CI may run the
    suite) starts with SIGINT ignored, which its children inherit and ``sigint_noted`` keeps."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_a_sigint_that_reaches_the_worker_still_stops_it(tmp_path, sigint_default):
    """The signal's KeyboardInterrupt is not taken for the script's own (it ends the worker
    without an answer of the script's failure, as before)."""
    with pytest.raises(errors.WorkerError) as err:
        _run_script(tmp_path, "import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(30)\n")
    assert type(err.value) is errors.WorkerError
    assert str(err.value).startswith("KeyboardInterrupt")


@pytest.mark.parametrize("code", [0, 3])
def test_os_exit_says_the_script_ended_the_process(tmp_path, code):
    with pytest.raises(errors.WorkerError) as err:
        _run_script(tmp_path, f"import os\nos._exit({code})\n")
    assert str(err.value).splitlines()[0] == (
        f"capture worker exited with code {code} without a result: the model or script it ran ended the process "
        f"itself (os._exit({code})) before it could answer (log: {tmp_path / 'compile.log'})")


def test_sigint_noted_tells_a_signal_from_a_raise(sigint_default):
    with pytest.raises(KeyboardInterrupt), sigint_noted() as state:
        raise KeyboardInterrupt
    assert state == {"received": False}
    with pytest.raises(KeyboardInterrupt), sigint_noted() as state:
        signal.raise_signal(signal.SIGINT)
    assert state == {"received": True}
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_sigint_noted_keeps_a_sigint_the_worker_was_started_ignoring():
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with sigint_noted() as state:
            signal.raise_signal(signal.SIGINT)  # ignored: nothing raised
        assert state == {"received": False} and signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)


def test_describe_names_the_scripts_own_keyboard_interrupt():
    assert _describe(KeyboardInterrupt(), "the script") == (
        "the script raised KeyboardInterrupt itself (not a Ctrl-C: no signal reached it)")


COMPILES_THEN_STOPS = """
import torch

torch.compile(lambda x: x.sin() + 1)(torch.randn(8))
raise KeyboardInterrupt
"""


@pytest.mark.slow
@pytest.mark.e2e
def test_a_script_that_compiles_then_raises_keyboard_interrupt_keeps_its_graph(tmp_path):
    """It ended `error: KeyboardInterrupt: ` with exit 4 (a crashed worker) and nothing kept."""
    (tmp_path / "stops.py").write_text(COMPILES_THEN_STOPS)
    p = cli("breakdown", str(tmp_path / "stops.py"), "--runs-dir", str(tmp_path / "runs"), "--iterations", "5",
            "--windows", "1", "--processes", "1", "--json", str(tmp_path / "r.json"))
    assert p.returncode == 3
    r = json.loads((tmp_path / "r.json").read_text())
    assert one_error_line(p) == (
        "inductor-bench: error: the script raised KeyboardInterrupt itself (not a Ctrl-C: no signal reached it) "
        f"(log: {r['run_dir']}/logs/compile-default.log)")
    assert (r["status"], r["script"], [g["status"] for g in r["graphs"]]) == ("partial", True, ["ok"])
