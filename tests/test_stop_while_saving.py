"""A stop signal that arrives while a run saves what it measured is held back until the save
ends; where that save fails (a full disk), the run exits with the stop's status (128 + the
signal) and its one line says the stop, where what was measured is saved, and the write that
failed (its path and error). It said a bare "interrupted" (breakdown; the write's error was
replaced by the stop raised after it; compare, whose save held no stop back), or exit 74 naming
only the write (a sweep, whose stopped jobs' saves then failed too; a breakdown or compare
stopped before its save failed).

Nothing compiles: the breakdown's result is the recorded cpu_mlp_train_quiet one, returned
where its profiling would have measured it; the compare measures no column; the sweep's jobs
are the stand-in
(tests/sweep_standin.py) copying the recorded cpu_mlp_compare. The signal is real, sent to
this process by the rename that then fails with ENOSPC (the full disk is synthetic)."""

from __future__ import annotations

import errno
import functools
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from inductor_bench.commands import breakdown as breakdown_command
from inductor_bench.commands import compare as compare_command
from inductor_bench.commands import sweep as sweep_command
from inductor_bench.core.errors import WorkerError
from inductor_bench.core.rundir import load_breakdown
from inductor_bench.core.sweep import CellStatus
from inductor_bench.core.sweep_cells import progress_line
from inductor_bench.runner import compare as compare_runner
from inductor_bench.runner import pipeline, roofline, stop
from inductor_bench.runner.rundir import WriteError
from inductor_bench.runner.sweep_exec import LocalExecutor
from inductor_bench.runner.sweep_run import load_sweep, run_sweep

from .conftest import MODELS
from .sweep_helpers import alive, grid, ok, standin
from .test_output_paths_first import RESULTS, _run

NO_SPACE = os.strerror(errno.ENOSPC)
DIED = "graph 0-forward: profiling worker was killed by SIGKILL"


@pytest.fixture
def signals():
    """The tool's stop signals routed as the command line routes them, put back after."""
    before = {sig: signal.getsignal(sig) for sig in stop.STOP_SIGNALS}
    for sig in stop.STOP_SIGNALS:
        signal.signal(sig, signal.default_int_handler)  # not ignored: a background suite ignores SIGINT
    stop.install()
    yield
    for sig, handler in before.items():
        signal.signal(sig, handler)
    stop.reset()


def full_disk(monkeypatch, fails, sig: signal.Signals | None = signal.SIGINT) -> None:
    """A rename onto a path ``fails(path)`` says fails with ENOSPC, the first after ``sig``
    reached this process (None: no signal)."""
    real, sent = os.replace, []

    def replace(src, dst, *args, **kwargs):
        if not fails(Path(dst)):
            return real(src, dst, *args, **kwargs)
        if not sent and sig is not None:
            sent.append(sig)
            os.kill(os.getpid(), sig)
        raise OSError(errno.ENOSPC, NO_SPACE)

    monkeypatch.setattr(os, "replace", replace)


class _Compiled:
    def close(self) -> None:
        pass


def _breakdown(capsys, monkeypatch, tmp_path, profiled, ceilings=None, error=None) -> tuple[int, str, Path]:
    """`breakdown mlp.py --out RUN` whose profiling ``profiled`` (returns the recorded result, or
    raises) and met ``error``, its ceilings ``ceilings`` (None: not measured); the exit status and
    the last line on stderr."""
    recorded = load_breakdown(RESULTS / "cpu_mlp_train_quiet")
    monkeypatch.setattr(pipeline, "compile_workload", lambda *a, **k: _Compiled())
    monkeypatch.setattr(pipeline, "breakdown_from_outcome", lambda *a, **k: (profiled(recorded), error))
    if ceilings is None:
        monkeypatch.setattr(breakdown_command, "add_roofline", lambda *a, **k: None)
    else:
        monkeypatch.setattr(roofline, "measured_roofline", ceilings)
    run = tmp_path / "run"
    code, _, err = _run(capsys, "breakdown", str(MODELS / "mlp.py"), "--device", "cpu", "--out", str(run))
    return code, err.splitlines()[-1], run


@pytest.mark.parametrize("sig,status,said", [(signal.SIGINT, 130, ""), (signal.SIGTERM, 143, " (by SIGTERM)")])
@pytest.mark.parametrize("name", ["breakdown.json", "report.txt"])
def test_a_signal_held_while_a_breakdown_is_saved_onto_a_full_disk_says_both(capsys, monkeypatch, tmp_path, signals,
                                                                             name, sig, status, said):
    full_disk(monkeypatch, lambda p: p.name == name, sig)
    code, line, run = _breakdown(capsys, monkeypatch, tmp_path, lambda recorded: recorded)
    assert (code, line) == (status, f"inductor-bench: error: interrupted as the result was saved; what was "
                                    f"measured is saved in {run}; also, {run / name}: cannot write ({NO_SPACE}){said}")


def test_a_signal_held_while_a_failed_breakdown_is_saved_onto_a_full_disk_names_all_three(capsys, monkeypatch,
                                                                                           tmp_path, signals):
    """The run ended (a worker died) before the stop came: its failure is said too."""
    full_disk(monkeypatch, lambda p: p.name == "breakdown.json")
    code, line, run = _breakdown(capsys, monkeypatch, tmp_path, lambda recorded: recorded, error=WorkerError(DIED))
    assert (code, line) == (130, f"inductor-bench: error: interrupted as the result was saved; what was measured "
                                 f"is saved in {run}; also, {DIED}; also, {run / 'breakdown.json'}: cannot write "
                                 f"({NO_SPACE})")


def test_a_breakdown_stopped_then_saved_onto_a_full_disk_exits_130_saying_both(capsys, monkeypatch, tmp_path,
                                                                                signals):
    def stopped(recorded):
        os.kill(os.getpid(), signal.SIGINT)
        raise AssertionError("the signal did not stop the run")

    full_disk(monkeypatch, lambda p: p.name == "breakdown.json")
    code, line, run = _breakdown(capsys, monkeypatch, tmp_path, stopped)
    assert (code, line) == (130, f"inductor-bench: error: interrupted; no graph was measured; see {run}; also, "
                                 f"{run / 'breakdown.json'}: cannot write ({NO_SPACE})")


def test_a_stop_while_the_ceilings_are_measured_then_a_full_disk_exits_130_saying_both(capsys, monkeypatch,
                                                                                      tmp_path, signals):
    """Every graph saved, then Ctrl-C as the ceilings are measured: the result saved again with
    its note fails (it exited 74, naming the write alone)."""
    def measuring(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)
        raise AssertionError("the signal did not stop the run")

    full_disk(monkeypatch, lambda p: p.name == "breakdown.json" and stop.received() is not None, None)
    code, line, run = _breakdown(capsys, monkeypatch, tmp_path, lambda recorded: recorded, measuring)
    assert (code, line) == (130, f"inductor-bench: error: interrupted; what was measured is saved in {run}; also, "
                                 f"{run / 'breakdown.json'}: cannot write ({NO_SPACE})")
    assert load_breakdown(run).status == "ok"  # as saved before the stop


def _sweep(capsys, monkeypatch, out: Path, actions: dict[str, list[str]]) -> tuple[int, str]:
    """`sweep mlp.py transformer_block.py --modes default --device cpu --out OUT`, its jobs the
    stand-in doing ``actions``; the exit status and the last line on stderr."""
    monkeypatch.setattr(sweep_command, "run_sweep", functools.partial(run_sweep, command=standin(actions)))
    code, _, err = _run(capsys, "sweep", str(MODELS / "mlp.py"), str(MODELS / "transformer_block.py"), "--modes",
                        "default", "--device", "cpu", "--out", str(out))
    return code, err.splitlines()[-1]


def _stopped_sweep_line(out: Path, progress: str) -> str:
    return (f"inductor-bench: error: sweep stopped ({progress}); what was measured is saved in {out}, and the same "
            f"command resumes it; also, {out / 'sweep.json'}: cannot write ({NO_SPACE})")


def test_a_signal_held_while_a_sweep_is_saved_onto_a_full_disk_exits_130_saying_both(capsys, monkeypatch, tmp_path,
                                                                                      signals):
    """The first save after a job ended (its log written) holds Ctrl-C back, and fails: the
    sweep's own line, then the write. The count is the sweep's as it is (mlp done), not as last
    saved (it read '0/2 done, 1 running, 1 pending', mlp's result beside it)."""
    out = tmp_path / "sweep"
    full_disk(monkeypatch, lambda p: p.name == "sweep.json" and (p.parent / "logs").is_dir())
    code, line = _sweep(capsys, monkeypatch, out, {"mlp": ok(), "transformer_block": ok()})
    assert (code, line) == (130, _stopped_sweep_line(out, "1/2 done, 1 pending"))
    assert (out / "mlp" / "compare.json").is_file() and not (out / "transformer_block" / "compare.json").exists()
    assert progress_line(load_sweep(out)) == "0/2 done, 1 running, 1 pending"  # as last saved


def test_a_sweep_stopped_then_saving_its_stopped_job_onto_a_full_disk_exits_130_saying_both(capsys, monkeypatch,
                                                                                            tmp_path, signals):
    """Ctrl-C while a job runs; saving the job it stopped fails (it exited 74, naming the write
    alone); the count has the job stopped (it read '1 running')."""
    out, pids = tmp_path / "sweep", tmp_path / "pids"
    full_disk(monkeypatch, lambda p: p.name == "sweep.json" and (p.parent / "logs").is_dir(), None)
    _interrupt_when(lambda: (pids / "mlp.pid").exists())
    code, line = _sweep(capsys, monkeypatch, out, {"mlp": ["--started", str(pids), "hang"], "transformer_block": ok()})
    assert (code, line) == (130, _stopped_sweep_line(out, "0/2 done, 1 interrupted, 1 pending"))
    assert not (out / "transformer_block").exists()  # never started


def test_a_sweep_whose_first_save_fails_as_it_is_stopped_names_the_write(capsys, monkeypatch, tmp_path, signals):
    """Ctrl-C held back while the new sweep's first sweep.json is written, which fails: nothing
    started, and the line names the write too (it said the stop alone)."""
    out = tmp_path / "sweep"
    full_disk(monkeypatch, lambda p: p.name == "sweep.json")
    code, line = _sweep(capsys, monkeypatch, out, {"mlp": ok(), "transformer_block": ok()})
    assert (code, line) == (130, "inductor-bench: error: sweep stopped before any job started; "
                                 f"also, {out / 'sweep.json'}: cannot write ({NO_SPACE})")
    assert not (out / "sweep.json").exists() and not (out / "mlp").exists()


def test_each_job_stopped_with_the_sweep_is_recorded_though_the_first_record_fails(monkeypatch, tmp_path, signals):
    """Two jobs at once (two slots), Ctrl-C, and no room for either job's log: both are still
    recorded as stopped (the first failed record ended the loop, leaving b running and unsaid),
    and the stop carries both failed writes in one line."""
    out, pids, live = tmp_path / "sweep", tmp_path / "pids", []
    full_disk(monkeypatch, lambda p: p.parent.name == "logs", None)
    _interrupt_when(lambda: len(list(pids.glob("*.pid"))) == 2)
    with pytest.raises(stop.Stopped) as stopped:
        run_sweep(out, grid(["a", "b"]), lambda: LocalExecutor(["0", "1"]),
                  on_event=lambda what, cell, sweep: live.append(sweep),
                  command=standin({n: ["--started", str(pids), "hang"] for n in "ab"}))
    a, b = live[-1].cells
    assert [(c.status, c.exit_code, c.reason) for c in (a, b)] == [(CellStatus.INTERRUPTED, 130, "stopped by SIGINT")] * 2
    failed = {f"{out / 'logs' / n}.log: cannot write ({NO_SPACE})" for n in "ab"}
    assert set(str(stopped.value.unsaved).split("; also, ")) == failed
    assert isinstance(stopped.value.unsaved, WriteError)
    assert not any(alive(int(p.read_text())) for p in pids.glob("*.pid"))


def _interrupt_when(ready) -> None:
    """Ctrl-C to this process, from a thread, once ``ready()``."""

    def interrupt() -> None:
        deadline = time.monotonic() + 120
        while not ready() and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()


def _compare(capsys, monkeypatch, tmp_path, measured) -> tuple[int, str, Path]:
    """`compare mlp.py --modes default --out RUN` whose columns ``measured()`` (returns, measuring
    nothing, or raises); the exit status and the last line on stderr."""
    monkeypatch.setattr(compare_runner, "run_modes", lambda *a, **k: measured())
    monkeypatch.setattr(compare_runner, "_time_interleaved", lambda *a, **k: None)
    monkeypatch.setattr(compare_command, "add_compare_roofline", lambda *a, **k: None)
    run = tmp_path / "run"
    code, _, err = _run(capsys, "compare", str(MODELS / "mlp.py"), "--modes", "default", "--device", "cpu",
                        "--out", str(run))
    return code, err.splitlines()[-1], run


def test_a_signal_held_while_a_compare_is_saved_onto_a_full_disk_says_both(capsys, monkeypatch, tmp_path, signals):
    """compare's save held no stop back: the signal cut it short wherever it landed."""
    full_disk(monkeypatch, lambda p: p.name == "compare.json")
    code, line, run = _compare(capsys, monkeypatch, tmp_path, lambda: None)
    assert (code, line) == (130, f"inductor-bench: error: interrupted as the result was saved; what was measured "
                                 f"is saved in {run}; also, {run / 'compare.json'}: cannot write ({NO_SPACE})")


def test_a_compare_stopped_then_saved_onto_a_full_disk_exits_130_saying_both(capsys, monkeypatch, tmp_path, signals):
    def stopped():
        os.kill(os.getpid(), signal.SIGINT)
        raise AssertionError("the signal did not stop the run")

    full_disk(monkeypatch, lambda p: p.name == "compare.json", None)
    code, line, run = _compare(capsys, monkeypatch, tmp_path, stopped)
    assert (code, line) == (130, f"inductor-bench: error: interrupted; what was measured is saved in {run}; also, "
                                 f"{run / 'compare.json'}: cannot write ({NO_SPACE})")
