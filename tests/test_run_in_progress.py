"""A run directory still being written by its breakdown or compare (compiling, profiling,
measuring ceilings, re-tuning with --autotune-top) is held as such (``.writing.lock``, an
flock released however the process ends): `report --reanalyze` refuses it in one line, exit 2,
where it re-analysed the result saved so far and kept it as the run's own; `report RUN` renders
what is saved, saying it is not final. Built from the recorded run in tests/fixtures/runs."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from inductor_bench.runner.rundir import being_written, new_run_dir, writing

from .conftest import FIXTURES, ROOT
from .test_damaged_digests import cli

RUN = FIXTURES / "runs" / "cpu_fft_inference"
MODEL = FIXTURES / "models" / "sleepy.py"

# `inductor-bench breakdown MODEL --out RUN` whose run is the recorded one (copied into the
# directory the command claimed) and which stops as it measures the ceilings, after the result
# was first saved, until a file named GO appears beside the run.
_PAUSED = """
import shutil, sys, time
from pathlib import Path
import inductor_bench.commands.breakdown as breakdown
from inductor_bench.cli import main
from inductor_bench.core.rundir import load_breakdown
from inductor_bench.runner.rundir import new_run_dir
recorded, run = Path(sys.argv[1]), Path(sys.argv[2])
def run_breakdown(opts, settings, out, root):
    d = new_run_dir("m", "default", out=out)
    shutil.copytree(recorded, d, dirs_exist_ok=True)
    return load_breakdown(d), d, None
def add_roofline(*args, **kwargs):
    (run.parent / "paused").touch()
    while not (run.parent / "GO").exists():
        time.sleep(0.05)
breakdown.run_breakdown = run_breakdown
breakdown.add_roofline = add_roofline
sys.argv = ["inductor-bench", "breakdown", sys.argv[3], "--out", str(run)]
sys.exit(main())
"""


def paused_breakdown(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    run = tmp_path / "run"
    p = subprocess.Popen([sys.executable, "-c", _PAUSED, str(RUN), str(run), str(MODEL)], cwd=ROOT,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while not (tmp_path / "paused").exists() and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if not (tmp_path / "paused").exists():
        stop(p)
        raise AssertionError(p.stderr.read() or "not paused")
    return p, run


def stop(p: subprocess.Popen) -> None:
    """Kill the paused breakdown's whole session where it still runs: never left waiting."""
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def test_reanalysis_of_a_run_still_being_written_is_refused_until_its_command_ends(tmp_path):
    """It re-analysed the result saved before the ceilings were measured (exit 0) and kept it as
    the run's own, breakdown.before-reanalysis.json; the breakdown then saved over it."""
    p, run = paused_breakdown(tmp_path)
    try:
        saved = (run / "breakdown.json").read_bytes()
        r = cli("report", str(run), "--reanalyze")
        assert (r.returncode, r.stderr.splitlines()) == (2, [
            f"inductor-bench: error: {run}: still being written by the breakdown or compare that made it: "
            "--reanalyze refused; run it once that command has ended"]), r.stderr
        assert (run / "breakdown.json").read_bytes() == saved
        assert not (run / "breakdown.before-reanalysis.json").exists()
        shown = cli("report", str(run), "--summary")  # reading it: what is saved, said not final
        assert shown.returncode == 0, shown.stderr
        assert shown.stderr.splitlines() == [f"{run}: still being written by the breakdown or compare that "
                                             "made it: this is the result saved so far, not the final one"]
        assert "0-inference" in shown.stdout
        (tmp_path / "GO").touch()
        assert p.wait(timeout=60) == 0, p.stderr.read()
    finally:
        stop(p)
    assert not being_written(run)
    r = cli("report", str(run), "--reanalyze")
    assert r.returncode == 0, r.stderr
    assert (run / "breakdown.before-reanalysis.json").read_bytes() == saved  # the run's own result


def test_a_breakdown_killed_outright_leaves_its_run_free(tmp_path):
    """The lock is the process's, not a file's: SIGKILL mid-run leaves no run locked."""
    p, run = paused_breakdown(tmp_path)
    try:
        held = being_written(run)
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
    assert held
    assert (run / ".writing.lock").exists() and not being_written(run)
    r = cli("report", str(run), "--reanalyze")
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[-1].startswith("re-analysed 1 graph(s) from their saved profiles")


def test_a_run_is_held_until_the_outermost_block_ends_then_free_in_the_same_process(tmp_path):
    """The command's block holds the run past run_breakdown's own (ceilings, --autotune-top);
    once it ends, the same process (a test, an API user) may re-analyse its own run."""
    with writing():
        with writing():  # run_breakdown's
            run = new_run_dir("m", "default", out=tmp_path / "run")
            shutil.copytree(RUN, run, dirs_exist_ok=True)
        assert being_written(run)
        r = cli("report", str(run), "--reanalyze")
        assert r.returncode == 2 and "still being written" in r.stderr
    assert not being_written(run)
    outside = new_run_dir("m", "default", out=tmp_path / "free")  # no block: never held
    assert not being_written(outside)
    from inductor_bench.commands.report import reanalyzed
    shutil.copytree(RUN, outside, dirs_exist_ok=True)
    assert [g.id for g in reanalyzed(outside).graphs] == ["0-inference"]


def test_a_fifo_in_place_of_the_lock_is_not_waited_on(tmp_path):
    """`report RUN` of a run holding a FIFO named .writing.lock waited for a writer forever."""
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    os.mkfifo(run / ".writing.lock")
    assert cli("report", str(run), "--summary", timeout=30).returncode == 0
    assert not being_written(run)


def test_a_run_killed_before_saving_anything_says_so(tmp_path):
    """A breakdown killed outright (SIGKILL, the OOM killer) mid-compile leaves its meta.json
    'running' and no result: `report` said only 'no compare.json or breakdown.json in this directory'."""
    run = tmp_path / "run"
    (run / "logs").mkdir(parents=True)
    (run / "meta.json").write_text('{"tool": "inductor-bench breakdown", "status": "running"}')
    (run / ".writing.lock").touch()  # left by the process, held by none
    said = (f"inductor-bench: error: {run}: the command that made it ended before saving any result (killed "
            f"outright, or the machine stopped: its meta.json still says it is running); what its workers "
            f"wrote is in {run}/logs")
    for args in ([], ["--reanalyze"]):
        r = cli("report", str(run), *args)
        assert (r.returncode, r.stderr.splitlines()) == (2, [said]), r.stderr


def test_blocks_nest_three_deep_each_lock_kept_until_the_outermost_ends(tmp_path):
    """An inner block that claimed nothing took an outer one's place: the middle block's run was
    then kept in the wrong block and its end raised ValueError."""
    with writing():
        with writing():
            with writing():
                pass
            run = new_run_dir("m", "default", out=tmp_path / "run")
        assert being_written(run)
    assert not being_written(run)


def test_diff_of_a_run_still_being_written_says_so_and_its_gate_gives_no_verdict(tmp_path):
    """`diff` read the result saved so far as if final, and `--fail-on-regression` passed it
    (exit 0): now one line names the side still written, and the gate refuses it (exit 2)."""
    p, run = paused_breakdown(tmp_path)
    try:
        r = cli("diff", str(RUN), str(run))
        assert r.returncode == 0, r.stderr
        assert r.stderr.splitlines() == [f"note: HEAD {run}: still being written by the breakdown or compare "
                                         "that made it: its figures are the result saved so far, not the final ones"]
        assert "0-inference" in r.stdout
        gate = cli("diff", str(run / "breakdown.json"), str(RUN), "--fail-on-regression", "5")
        assert (gate.returncode, gate.stdout, gate.stderr.splitlines()) == (2, "", [
            f"inductor-bench: error: BASE {run}: still being written by the breakdown or compare that made it: "
            "--fail-on-regression gives no verdict on a result that is not final; run it once that command "
            "has ended"]), gate.stderr
        (tmp_path / "GO").touch()
        assert p.wait(timeout=60) == 0, p.stderr.read()
    finally:
        stop(p)
    after = cli("diff", str(RUN), str(run), "--fail-on-regression", "5")
    assert after.returncode == 0 and "still being written" not in after.stderr, after.stderr


# A sweep's `unpack` of a job's archive (a compare run: compare.json and its column `default`),
# stopped once every file is out until a file named GO appears beside the directory.
_UNPACKING = """
import sys, tarfile, time
from pathlib import Path
from inductor_bench.runner.sweep_job import unpack
archive, dest = Path(sys.argv[1]), Path(sys.argv[2])
extract = tarfile.TarFile.extractall
def extractall(self, *args, **kwargs):
    extract(self, *args, **kwargs)
    (dest.parent / "paused").touch()
    while not (dest.parent / "GO").exists():
        time.sleep(0.05)
tarfile.TarFile.extractall = extractall
unpack(archive.read_bytes(), dest)
"""


def test_a_remote_jobs_run_being_unpacked_is_held_as_being_written(tmp_path):
    """A sweep unpacked a job's archive holding no lock: `report` of the job meanwhile read it as
    final and `report --reanalyze` of its column rebuilt a half-written run."""
    from inductor_bench.runner.sweep_job import pack
    job = tmp_path / "job"
    shutil.copytree(RUN, job / "default")
    shutil.copy(FIXTURES / "results" / "cpu_mlp_compare" / "compare.json", job)
    for d in (job, job / "default"):
        (d / ".writing.lock").touch()  # the job's own, held by none once it ended
    (tmp_path / "job.tar.gz").write_bytes(pack(job))
    dest = tmp_path / "sweep" / "job"
    p = subprocess.Popen([sys.executable, "-c", _UNPACKING, str(tmp_path / "job.tar.gz"), str(dest)], cwd=ROOT,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not (dest.parent / "paused").exists() and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (dest.parent / "paused").exists(), p.stderr.read()
        assert being_written(dest) and being_written(dest / "default")
        shown = cli("report", str(dest), "--summary")
        assert shown.returncode == 0, shown.stderr
        assert shown.stderr.splitlines()[0] == (f"{dest}: still being written by the breakdown or compare that "
                                                "made it: this is the result saved so far, not the final one")
        r = cli("report", str(dest / "default"), "--reanalyze")
        assert (r.returncode, r.stderr.splitlines()) == (2, [
            f"inductor-bench: error: {dest / 'default'}: still being written by the breakdown or compare that "
            "made it: --reanalyze refused; run it once that command has ended"]), r.stderr
        (dest.parent / "GO").touch()
        assert p.wait(timeout=60) == 0, p.stderr.read()
    finally:
        stop(p)
    assert not being_written(dest) and not being_written(dest / "default")
    assert (dest / "default" / "breakdown.json").read_bytes() == (RUN / "breakdown.json").read_bytes()
    assert cli("report", str(dest / "default"), "--reanalyze").returncode == 0


def test_diff_of_a_run_being_written_that_saved_nothing_yet_says_so(tmp_path):
    """It said only `no compare.json or breakdown.json in this directory`, as of a run that is
    no run; `report` of it says it is still being written."""
    run = tmp_path / "run"
    holder = ("import sys, time\nfrom pathlib import Path\nfrom inductor_bench.runner.rundir import new_run_dir, "
              "writing\nwith writing():\n    new_run_dir('m', 'default', out=Path(sys.argv[1]))\n"
              "    print('held', flush=True)\n    time.sleep(120)\n")
    p = subprocess.Popen([sys.executable, "-c", holder, str(run)], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        assert p.stdout.readline() == "held\n"
        r = cli("diff", str(RUN), str(run))
        assert (r.returncode, r.stderr.splitlines()) == (2, [
            f"inductor-bench: error: HEAD {run}: still being written by the breakdown or compare that made it, "
            "no result saved in it yet: diff it once that command has ended"]), r.stderr
    finally:
        stop(p)


def test_an_attempt_whose_remote_job_has_not_ended_is_not_said_to_have_ended(tmp_path):
    """A sweep's attempt directory stays empty while its job runs on a machine that cannot see
    it (its run directory comes back as it ends): `report` and `diff` of it said the job `ended
    before its compare wrote anything` for as long as it ran."""
    from inductor_bench.core.sweep import CellStatus

    from .sweep_helpers import FIXTURE, grid
    sweep = grid(["mlp"])
    sweep.cells[0].status, sweep.cells[0].run_dir, sweep.cells[0].attempts = CellStatus.RUNNING, "mlp", 1
    (tmp_path / "sweep.json").write_text(sweep.to_json())
    (tmp_path / "mlp").mkdir()
    holder = ("import fcntl, sys, time\nf = open(sys.argv[1], 'a')\nfcntl.flock(f, fcntl.LOCK_EX)\n"
              "print('held', flush=True)\ntime.sleep(120)\n")
    p = subprocess.Popen([sys.executable, "-c", holder, str(tmp_path / ".sweep.lock")], stdout=subprocess.PIPE,
                         text=True, start_new_session=True)
    running = (f"{tmp_path / 'mlp'}: an attempt of the sweep running in {tmp_path} whose job has not ended: "
               "no result here yet")
    try:
        assert p.stdout.readline() == "held\n"
        r = cli("report", str(tmp_path / "mlp"))
        assert (r.returncode, r.stderr.splitlines()) == (
            2, [f"inductor-bench: error: {running}: report it once the job has ended"]), r.stderr
        r = cli("diff", FIXTURE, str(tmp_path / "mlp"))
        assert (r.returncode, r.stderr.splitlines()) == (
            2, [f"inductor-bench: error: HEAD {running}: diff it once the job has ended"]), r.stderr
    finally:
        stop(p)
    ended = cli("report", str(tmp_path / "mlp"))  # the sweep gone: the job ended with it
    assert ended.returncode == 2 and "ended before its compare wrote anything" in ended.stderr, ended.stderr
