"""Signals and the processes of a run: SIGTERM and SIGHUP stop a run as Ctrl-C does (exit
128 + the signal, what was measured saved), a repeated signal cannot cut the save short, and
no worker, nor any process the model started, outlives the run or the process that started it.
The fast tests use a stand-in worker (tests/fault_worker.py); those marked e2e run the tool."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from inductor_bench.core.rundir import TRACE_FILE
from inductor_bench.runner.batch import BatchItem, run_batch
from inductor_bench.runner.worker import run_worker

from .conftest import ROOT
from .processes import alive, as_in_a_terminal, children, group_members, start_breakdown
from .yardstick import seconds_to_import_torch

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
WORKER = "tests.fault_worker"
# How long a process may take to be gone after its parent is: a deadline on a state waited
# for, a tenth of the 300 s the stand-in processes would otherwise live, so that it judges
# whether they end, not how fast a busy machine gets round to ending them.
GONE_S = 30.0


def gone_within(pids: list[int], limit: float = GONE_S) -> bool:
    deadline = time.monotonic() + limit
    while any(alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def read_pid(path: Path, limit: float = 60.0) -> int:
    deadline = time.monotonic() + limit
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"{path} never written"
        time.sleep(0.05)
    return int(path.read_text())


# -- the stop signals, in one process --------------------------------------------------------

STOP_SCRIPT = textwrap.dedent("""
    import os, signal, sys, time
    from inductor_bench.runner import stop
    stop.install()
    me = os.getpid()
    try:
        os.kill(me, signal.SIG{first})
        time.sleep(5)
        print("not stopped")
    except stop.Stopped as e:
        print("stopped by", signal.Signals(e.signum).name)
        os.kill(me, signal.SIGINT)
        os.kill(me, signal.SIGTERM)
        time.sleep(0.1)
        print("saved after 2 more signals")
    with stop.shielded():
        pass
    print("exit status", stop.exit_status(stop.received()))
""")


@pytest.mark.parametrize("sig,status", [("TERM", 143), ("HUP", 129), ("INT", 130)])
def test_every_stop_signal_stops_once_and_later_ones_wait(sig, status):
    r = subprocess.run([sys.executable, "-c", STOP_SCRIPT.format(first=sig)], capture_output=True,
                       text=True, cwd=ROOT, timeout=60, preexec_fn=as_in_a_terminal)
    assert r.stdout.splitlines() == [f"stopped by SIG{sig}", "saved after 2 more signals",
                                     f"exit status {status}"], r.stderr


SHIELD_SCRIPT = textwrap.dedent("""
    import os, signal, time
    from inductor_bench.runner import stop
    stop.install()
    saved = []
    try:
        with stop.shielded():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.1)
            saved.append("result")
    except stop.Stopped as e:
        print(saved, signal.Signals(e.signum).name)
""")


def test_a_signal_during_a_save_waits_for_the_save():
    r = subprocess.run([sys.executable, "-c", SHIELD_SCRIPT], capture_output=True, text=True,
                       cwd=ROOT, timeout=60)
    assert r.stdout == "['result'] SIGTERM\n", r.stderr


def test_a_signal_ignored_at_start_stays_ignored():
    """nohup starts a program with SIGHUP ignored: a closed terminal must not stop it."""
    script = ("import os, signal, time\nfrom inductor_bench.runner import stop\nstop.install()\n"
              "os.kill(os.getpid(), signal.SIGHUP)\ntime.sleep(0.1)\nprint('still running')\n")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                       timeout=60, preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    assert r.stdout == "still running\n", r.stderr


# -- what the model starts does not outlive the worker -----------------------------------------


def test_a_child_the_model_started_ends_with_its_worker(tmp_path):
    """In the worker's process group, it is killed with the group when the worker ends."""
    pidfile = tmp_path / "child.pid"
    out = run_worker(WORKER, {"do": "fork", "pidfile": str(pidfile)}, timeout=60)
    assert out["child"] == read_pid(pidfile)
    assert gone_within([out["child"]])


SWEEP_SCRIPT = textwrap.dedent("""
    import sys
    from inductor_bench.runner import stop
    from inductor_bench.runner.worker import run_worker
    stop.adopt_orphans()
    out = run_worker("tests.fault_worker", {"do": "fork", "setsid": True, "pidfile": sys.argv[1]}, timeout=60)
    print(out["child"], stop.end_leftovers())
""")


def test_a_child_in_a_session_of_its_own_ends_with_the_command(tmp_path):
    """A child that left the worker's group (setsid) outlives the worker, becomes the command's
    (it adopts orphans) and is ended with the rest when the command ends."""
    r = subprocess.run([sys.executable, "-c", SWEEP_SCRIPT, str(tmp_path / "child.pid")],
                       capture_output=True, text=True, cwd=ROOT, timeout=60)
    child = read_pid(tmp_path / "child.pid")
    assert r.stdout == f"{child} [{child}]\n", r.stderr
    assert not alive(child)


def test_a_child_of_a_batch_worker_ends_with_it(tmp_path):
    items = [BatchItem(f"g{i}", {"do": "fork", "pidfile": str(tmp_path / f"{i}.pid")}) for i in range(2)]
    out = run_batch(WORKER, items, timeout=60, log_path=tmp_path / "w.log")
    kids = [out[f"g{i}"]["child"] for i in range(2)]
    assert kids == [read_pid(tmp_path / f"{i}.pid") for i in range(2)]
    assert gone_within(kids)


def test_a_timed_out_worker_takes_its_session_children_along(tmp_path):
    """A hang past --timeout kills the worker's whole tree, a child in its own session too."""
    pidfile = tmp_path / "child.pid"
    with pytest.raises(Exception, match="exceeded --timeout 2s"):
        run_worker(WORKER, {"do": "hang", "setsid": True, "pidfile": str(pidfile)}, timeout=2)
    assert gone_within([read_pid(pidfile)])


# -- workers die with the process that started them --------------------------------------------

PARENT_SCRIPT = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from inductor_bench.runner.batch import Standby
    from inductor_bench.runner.worker import run_worker
    what, tmp = sys.argv[1], Path(sys.argv[2])
    if what == "standby":
        standby = Standby("tests.fault_worker", {{"pidfile": str(tmp / "worker.pid"), "sleep": 300}})
        time.sleep(300)
    else:
        run_worker("tests.fault_worker", {{"do": "hang", "pidfile": str(tmp / "child.pid")}}, timeout=300)
""")


@pytest.mark.parametrize("what", ["standby", "worker"])
def test_workers_die_with_a_parent_killed_outright(tmp_path, what):
    """SIGKILL leaves the parent no chance to stop anything: the standby profiling worker,
    still preparing, and a working worker with the child its model started, end by
    themselves (it used to wait until prepared, 20 minutes and more, with PPID 1)."""
    parent = subprocess.Popen([sys.executable, "-c", PARENT_SCRIPT.format(), what, str(tmp_path)],
                              cwd=ROOT)
    pid = read_pid(tmp_path / ("worker.pid" if what == "standby" else "child.pid"))
    below = children(parent.pid)
    assert pid in below, (pid, below)
    parent.kill()
    parent.wait()
    assert gone_within(sorted(below)), [p for p in below if alive(p)]


# -- the tool, stopped by a signal (e2e: compiles models/mlp.py) -------------------------------

def stop_bound_s() -> float:
    """From the signal to the exit the run kills its workers' groups, saves and writes the
    report: bounded by twice what starting a process that imports torch takes here now, as
    loaded as the machine is (1 to 4.4 s were seen for the stop while other processes kept
    both cores busy). A run that waited for its compile worker instead would take that
    worker's whole import and compile."""
    return 2 * seconds_to_import_torch()


def the_run(runs: Path) -> Path:
    (d,) = [x for x in runs.iterdir() if x.is_dir()]
    return d


# Long enough that the signal sent half a second after the backward graph's profiling starts
# finds it still running: 3 to 5 windows of 1,000 iterations of about 1 ms (with the default
# 100 the whole graph took 0.4 s on a loaded machine and the signal came after it).
MID_PROFILE = ["--windows", "5", "--iterations", "1000"]


@pytest.mark.e2e
@pytest.mark.slow  # compiles a script: tens of seconds (the quick suite's 15 minutes)
def test_sigterm_mid_profile_saves_the_finished_graph(tmp_path):
    p, seen, below = start_breakdown(tmp_path, "profiling graph 0-backward", MID_PROFILE)
    t0 = time.monotonic()
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    took = time.monotonic() - t0
    bound = stop_bound_s()
    assert p.returncode == 143 and took < bound, (p.returncode, took, bound, err[-2000:])
    last = err.splitlines()[-1]
    assert last.startswith("inductor-bench: error: interrupted;") and last.endswith("(by SIGTERM)"), err
    assert "Traceback" not in err
    assert not [w for w in below if alive(w)] and not group_members(below)
    run = the_run(tmp_path)
    assert json.loads((run / "meta.json").read_text())["status"] == "interrupted"
    result = json.loads((run / "breakdown.json").read_text())
    assert result["status"] == "interrupted"
    assert [g["id"] for g in result["graphs"]] == ["0-forward"] and result["graphs"][0]["kernels"]
    assert not (run / "graphs" / "0-backward" / TRACE_FILE).exists()  # its worker stopped, not waited for
    r = subprocess.run([sys.executable, "-m", "inductor_bench.cli", "report", str(run)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "interrupted" in r.stdout.lower() and "0-forward" in r.stdout


def _standby_dirs(pids: set[int]) -> list[Path]:
    """The directories of the standby profiling workers among ``pids`` (by their --batch)."""
    dirs = []
    for pid in pids:
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--batch" in args:
            dirs.append(Path(args[args.index(b"--batch") + 1].decode()).parent.parent)
    return dirs


@pytest.mark.e2e
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_mid_compile_ends_the_standby_worker_too(tmp_path, sig):
    """The profiling worker waits on standby while the model compiles: it goes with the
    compile worker, and so does its directory in /tmp."""
    p, _, below = start_breakdown(tmp_path, "compiling mlp.py", ["--fresh-cache"])
    deadline = time.monotonic() + 600
    while not (standby_dirs := _standby_dirs(below)) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # it starts beside the compile worker: waited for, not assumed
        below = children(p.pid)
    assert standby_dirs, "the standby profiling worker should be running"
    t0 = time.monotonic()
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    took = time.monotonic() - t0
    bound = stop_bound_s()
    assert p.returncode == 128 + sig and took < bound, (p.returncode, took, bound, err[-2000:])
    assert err.splitlines()[-1].endswith(f"(by {signal.Signals(sig).name})"), err
    assert "interrupted; no graph was measured; see " in err.splitlines()[-1], err
    assert not [w for w in below if alive(w)] and not group_members(below)
    assert not any(d.exists() for d in standby_dirs)
    assert json.loads((the_run(tmp_path) / "meta.json").read_text())["status"] == "interrupted"


@pytest.mark.slow
@pytest.mark.e2e
def test_ctrl_c_every_25_ms_still_saves_the_result(tmp_path):
    """Signals that keep coming while the run stops and saves: the first stops it, the rest
    cannot cut the save short (2 of 15 such runs used to end without a result)."""
    p, _, below = start_breakdown(tmp_path, "profiling graph 0-backward", MID_PROFILE)
    sent = 0
    while p.poll() is None:
        p.send_signal(signal.SIGINT)
        sent += 1
        time.sleep(0.025)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130 and sent >= 2, (p.returncode, sent, err[-2000:])
    assert "Traceback" not in err
    run = the_run(tmp_path)
    result = json.loads((run / "breakdown.json").read_text())
    assert result["status"] == "interrupted" and [g["id"] for g in result["graphs"]] == ["0-forward"]
    assert json.loads((run / "meta.json").read_text())["status"] == "interrupted"
    assert "interrupted" in (run / "report.txt").read_text().lower()
    assert not [w for w in below if alive(w)] and not group_members(below)


def test_a_stopped_run_starts_no_autotuning(tmp_path, monkeypatch, capsys):
    """--autotune-top after a run a signal stopped: the measured graphs are reported, nothing
    more is started (it used to re-tune kernels after Ctrl-C)."""
    from inductor_bench.cli import main
    from inductor_bench.commands import breakdown as breakdown_cmd
    from inductor_bench.core.errors import Interrupted
    from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat

    k = KernelStat(name="cpp_fused_relu_0", category="cpp_pointwise", calls=1, ms=0.5)
    g = GraphResult(id="0-forward", role="forward", frame_id=0, kernels=[k], wall_ms=1.0, kernel_ms=0.5)
    result = BreakdownResult(model="mlp", device="cpu", graphs=[g], status="interrupted")
    stopped = Interrupted(f"interrupted; what was measured is saved in {tmp_path}")
    monkeypatch.setattr(breakdown_cmd, "run_breakdown", lambda *a, **kw: (result, tmp_path, stopped))
    retuned = []
    monkeypatch.setattr(breakdown_cmd, "add_autotune_top", lambda *a, **kw: retuned.append(a))
    with pytest.raises(SystemExit) as exited:
        main(["breakdown", str(ROOT / "models" / "mlp.py"), "--device", "cpu", "--autotune-top", "2"])
    assert exited.value.code == 130 and retuned == []
    assert capsys.readouterr().err.splitlines()[-1] == f"inductor-bench: error: {stopped}"


@pytest.mark.slow
@pytest.mark.e2e
def test_sigterm_while_the_ceilings_are_measured_stops_the_run(tmp_path):
    """A stop after every graph was measured, in the ceilings' phase: exit 143 with its line
    (it used to end with exit 0 and nothing said: typer returns 130 for a KeyboardInterrupt
    instead of raising it), every graph saved, and the result saying the ceilings are missing."""
    from inductor_bench.runner.roofline import STOPPED_NOTE

    p, _, below = start_breakdown(tmp_path, "measuring the device's ceilings", ["--refresh-peaks"])
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 143, (p.returncode, err[-2000:])
    assert err.splitlines()[-1] == "inductor-bench: interrupted (by SIGTERM)", err
    assert "Traceback" not in err
    assert not [w for w in below if alive(w)] and not group_members(below)
    result = json.loads((the_run(tmp_path) / "breakdown.json").read_text())
    assert [g["id"] for g in result["graphs"]] == ["0-forward", "0-backward"]
    assert all(g["status"] == "ok" for g in result["graphs"])
    assert STOPPED_NOTE in result["errors"] and not (result.get("extras") or {}).get("roofline")
