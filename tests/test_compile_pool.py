"""Inductor's pool of compile processes never runs beside a measurement: the compile worker
stops it once the model is compiled (``capture.stop_compile_workers``), and the profiling
worker runs without one (``capture.measuring_env``). On torch 2.5 the pool's processes were
still importing torch while the first graph was profiled: a core taken, the forward graph's
profiler sessions 23.7 ms instead of 1.3 ms (docs/breakdown.md)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from inductor_bench.runner import graphs as graphs_mod
from inductor_bench.runner import standbys as standbys_mod
from inductor_bench.runner.capture import measuring_env
from inductor_bench.runner.machine import descendants
from inductor_bench.runner.settings import RunSettings

from .yardstick import seconds_to_import_torch

POOL_CHECK = r"""
import os, sys, time
from torch._inductor.async_compile import AsyncCompile
from inductor_bench.runner.capture import stop_compile_workers
from inductor_bench.runner.machine import descendants

AsyncCompile.warm_pool()  # what a compile does first
if sys.argv[1] == "busy":  # the pool has run a job: its executor's processes exist too
    print("job", AsyncCompile.process_pool().submit(int, "3").result(timeout=120), flush=True)
before = descendants(os.getpid())
t0 = time.monotonic()
stop_compile_workers()
print("STOPPED", time.monotonic() - t0, *before, flush=True)
time.sleep(60)  # stay alive: the pool's processes must be gone while their parent lives
"""


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has exited


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
@pytest.mark.parametrize("state", ["starting", "busy"])
def test_the_compile_pool_is_stopped_at_once_and_leaves_no_process(state):
    """Independent evidence: the processes below the worker, read from /proc before the stop,
    are all gone after it, whether the pool was still starting (importing torch) or had run a
    job; and the stop does not wait for a starting pool to finish importing: it takes less
    than half of what importing torch takes here now (a pool process's start)."""
    env = {**os.environ, "TORCHINDUCTOR_COMPILE_THREADS": "2"}
    p = subprocess.Popen([sys.executable, "-c", POOL_CHECK, state], stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = ""
        while not line.startswith("STOPPED"):
            line = p.stdout.readline()
            assert line, "the check ended early"
        _, took, *pids = line.split()
        assert pids, "warm_pool started no process here"
        deadline = time.monotonic() + 5
        while any(_alive(int(x)) for x in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [x for x in pids if _alive(int(x))], pids
    finally:
        p.kill()
        p.wait()
    importing = seconds_to_import_torch()
    assert float(took) < importing / 2, (took, importing)


def test_descendants_are_read_through_every_level():
    inner = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)']); time.sleep(30)"
    p = subprocess.Popen([sys.executable, "-c", inner])
    try:
        deadline, found = time.monotonic() + 10, []
        while not found and time.monotonic() < deadline:
            time.sleep(0.05)
            found = descendants(p.pid)
        assert len(found) == 1  # the process it started
        assert {p.pid, found[0]} <= set(descendants(os.getpid()))  # two levels below this one
    finally:
        for pid in descendants(p.pid):
            os.kill(pid, 9)
        p.kill()
        p.wait()


def test_the_profiling_worker_runs_without_a_compile_pool(tmp_path, monkeypatch):
    envs = {}

    class FakeStandby:
        def __init__(self, worker, spec, *, env, log_path, echo, after):
            envs["standby"], self.after = env, after

    monkeypatch.setattr(standbys_mod, "Standby", FakeStandby)
    monkeypatch.setattr(graphs_mod, "run_batch", lambda *a, env, **kw: envs.setdefault("batch", env))
    first, second = standbys_mod.profile_standbys(tmp_path, RunSettings(), tmp_path / "cache", None, cores=4)
    assert first.after is None and second.after is first  # one per process, each after the one before
    assert len(standbys_mod.profile_standbys(tmp_path, RunSettings(), tmp_path / "cache", None, cores=2)) == 1
    graphs_mod.profile_graphs([], tmp_path, RunSettings(), cache_dir=tmp_path / "cache")
    assert envs["standby"] == envs["batch"] == measuring_env(tmp_path / "cache")
    assert envs["batch"]["TORCHINDUCTOR_COMPILE_THREADS"] == "1"
    assert envs["batch"]["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "cache")


@pytest.mark.parametrize(("processes", "cores", "want"), [
    (2, 1, 1), (2, 2, 1), (2, 3, 1), (2, 4, 2), (2, 16, 2), (5, 6, 3), (5, 64, 5), (1, 64, 1)])
def test_a_further_standby_needs_two_cores_to_spare(processes, cores, want):
    """The first worker is always started on standby; each further one only where two more
    cores let its imports run beside the compile without slowing its timed first call."""
    assert standbys_mod.standby_count(processes, cores) == want
