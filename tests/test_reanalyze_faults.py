"""`report --reanalyze` on a damaged run or a full disk: the saved result is never torn or
lost, and the refusal is one line with the README's exit status. Built from the recorded run in
tests/fixtures/runs, no compile needed."""

from __future__ import annotations

import resource
import shutil
import signal
import subprocess
import sys

import pytest

from inductor_bench.core.rundir import load_breakdown

from .conftest import FIXTURES, ROOT

RUN = FIXTURES / "runs" / "cpu_fft_inference"
WRITE_ERROR = 74


def reanalyze(run, max_file_bytes: int | None = None) -> subprocess.CompletedProcess:
    """`report RUN --reanalyze` in a process that cannot write a file past ``max_file_bytes``
    (a disk that fills up, for any user: RLIMIT_FSIZE, its signal ignored)."""

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))

    return subprocess.run([sys.executable, "-m", "inductor_bench.cli", "report", str(run), "--reanalyze"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120,
                          preexec_fn=limit if max_file_bytes is not None else None)


def refused(run, line: str) -> None:
    """`report RUN --reanalyze` refused in ``line`` alone, exit 2, the saved result untouched."""
    before = (run / "breakdown.json").read_bytes()
    p = reanalyze(run)
    assert (p.returncode, p.stderr.splitlines()) == (2, [f"inductor-bench: error: {line}"]), p.stderr
    assert (run / "breakdown.json").read_bytes() == before
    assert not (run / "breakdown.before-reanalysis.json").exists()


def test_a_disk_full_mid_reanalysis_leaves_the_saved_result_whole(tmp_path):
    """It moved breakdown.json aside, then wrote the new one in place: a full disk left a torn
    breakdown.json that every command then refused."""
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    before = (run / "breakdown.json").read_bytes()
    p = reanalyze(run, max_file_bytes=len(before) // 2)
    assert p.returncode == WRITE_ERROR, p.stderr
    assert "Traceback" not in p.stderr
    (line,) = p.stderr.splitlines()
    assert line.startswith(f"inductor-bench: error: {run}/breakdown.")
    assert line.endswith("cannot write (File too large)")
    assert (run / "breakdown.json").read_bytes() == before
    assert load_breakdown(run).graphs[0].id == "0-inference"
    assert not [p.name for p in run.iterdir() if p.name.endswith(".tmp")]


def test_a_second_reanalysis_on_a_full_disk_keeps_both_results(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    original = (run / "breakdown.json").read_bytes()
    assert reanalyze(run).returncode == 0
    rebuilt = (run / "breakdown.json").read_bytes()
    p = reanalyze(run, max_file_bytes=len(rebuilt) // 2)
    assert p.returncode == WRITE_ERROR, p.stderr
    assert (run / "breakdown.json").read_bytes() == rebuilt
    assert (run / "breakdown.before-reanalysis.json").read_bytes() == original


def test_a_run_missing_its_compiled_module_is_bad_input(tmp_path):
    """A file of the run that cannot be read is the run's damage (exit 2), not a failed write (74)."""
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    module = run / "graphs" / "0-inference" / "module.py"
    module.unlink()
    p = reanalyze(run)
    assert p.returncode == 2, p.stderr
    assert p.stderr.splitlines() == [
        f"inductor-bench: error: {module}: cannot read the graph's compiled module (No such file or directory)"]
    assert not (run / "breakdown.before-reanalysis.json").exists()


def test_a_torn_lowering_record_is_said_as_damage_not_as_a_run_without_one(tmp_path):
    """It read as 'no record of the lowering: the run predates source attribution', every
    kernel then 'no source'."""
    import json

    from inductor_bench.core.analysis import reanalyze as analyse_again

    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    record = run / "graphs" / "0-inference" / "sources.json"
    torn = record.read_text()[:200]
    record.write_text(torn)
    try:
        json.loads(torn)
    except ValueError as e:
        why = str(e)
    result, done = analyse_again(run)
    assert done == ["0-inference"]
    assert result.graphs[0].attribution == f"source attribution failed: {record}: not readable as JSON ({why})"


def test_a_compiled_module_torn_since_the_run_is_refused_not_read(tmp_path):
    """Half a module.py was analysed as it was: 8 of 12 kernels, every one 'no source', no
    roofline, exit 0."""
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    module = run / "graphs" / "0-inference" / "module.py"
    module.write_bytes(module.read_bytes()[:2000])
    refused(run, f"{module}: changed since the run wrote it (sha256 differs): its kernels would be read from "
                 "another module; refused")


def test_a_profile_naming_a_module_outside_the_run_is_refused_not_followed(tmp_path):
    """An absolute module in a saved profile was an internal error (exit 70); one with '..'
    was read from outside the run and saved into a breakdown.json every command then refused."""
    import json

    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("module.py", "trace.json.gz"):
        shutil.copyfile(RUN / "graphs" / "0-inference" / name, outside / name)
    for named in (str(outside / "module.py"), "graphs/../../outside/module.py"):
        run = tmp_path / "run"
        shutil.rmtree(run, ignore_errors=True)
        shutil.copytree(RUN, run)
        profile = run / "graphs" / "0-inference" / "profile.json"
        data = json.loads(profile.read_text())
        data["graph"]["module"] = named
        profile.write_text(json.dumps(data))
        refused(run, f"{profile}: damaged: a profile of graph '0-inference' of module {named!r}, not of the "
                     "run's graph '0-inference' of 'graphs/0-inference/module.py'")


@pytest.mark.parametrize(("part", "key", "bad", "said"), [
    ("response", "window", "x", "graph window: 'x' is not an integer or null"),
    ("response", "window_faults", "x", "graph window_faults[0]: 'x' is not a number or null"),
    ("response", "sizes", "x", "AttributeError: 'str' object has no attribute 'items'"),
    ("response", "windows_ms", -1, "TypeError: 'int' object is not iterable"),
    ("graph", "iterations", "x", "graph iterations: 'x' is not an integer"),
])
def test_a_saved_profile_holding_a_value_of_another_kind_is_damage(tmp_path, part, key, bad, said):
    """Each was an internal error (exit 70), some only as the rebuilt result was rendered."""
    import json

    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    profile = run / "graphs" / "0-inference" / "profile.json"
    data = json.loads(profile.read_text())
    data[part][key] = bad
    profile.write_text(json.dumps(data))
    refused(run, f"{profile}: damaged: {said}")


def test_the_module_analysed_is_the_module_whose_digest_was_checked(tmp_path, monkeypatch):
    """The module was read twice, once to parse and once for its sha256: a module replaced
    between the two reads (here the first read sees an edited one, the second the recorded one)
    was checked as one text and analysed as another, and passed."""
    import builtins
    import io

    from inductor_bench.core.analysis import reanalyze as analyse_again
    from inductor_bench.core.errors import ResultError

    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    module = run / "graphs" / "0-inference" / "module.py"
    edited = tmp_path / "edited.py"
    edited.write_bytes(module.read_bytes()[:2000])
    opened: list[str] = []
    real_open = io.open

    def swapping_open(file, *args, **kwargs):
        if str(file) == str(module):
            opened.append(str(file))
            if len(opened) == 1:  # the module as it is at the first read: edited
                return real_open(edited, *args, **kwargs)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(io, "open", swapping_open)
    monkeypatch.setattr(builtins, "open", swapping_open)
    with pytest.raises(ResultError) as e:
        analyse_again(run)
    assert str(e.value) == (f"{module}: changed since the run wrote it (sha256 differs): its kernels would be "
                            "read from another module; refused")
    assert len(opened) == 1


# A `report RUN --reanalyze` that stops once it is about to keep the result it replaces (the
# copy to breakdown.before-reanalysis.json), until a file named GO appears beside the run.
_PAUSED = """
import sys, time
from pathlib import Path
import inductor_bench.commands.output as output
from inductor_bench.cli import main
run = Path(sys.argv[1])
real = output.copy_atomic
def paused(src, dst):
    (run.parent / "paused").touch()
    while not (run.parent / "GO").exists():
        time.sleep(0.05)
    real(src, dst)
output.copy_atomic = paused
sys.argv = ["inductor-bench", "report", str(run), "--reanalyze"]
sys.exit(main())
"""


def test_two_reanalyses_of_one_run_at_once_take_turns(tmp_path):
    """Both ran at once: the second kept the first one's rebuilt result as the run's own
    (breakdown.before-reanalysis.json), and the result the run wrote was lost."""
    import json
    import time

    run = tmp_path / "run"
    shutil.copytree(FIXTURES / "runs" / "cpu_mlp_train_stalled", run)
    original = (run / "breakdown.json").read_bytes()
    cmd = [sys.executable, "-m", "inductor_bench.cli", "report", str(run), "--reanalyze"]
    with open(tmp_path / "a.err", "w") as a_err, open(tmp_path / "b.err", "w") as b_err:
        a = subprocess.Popen([sys.executable, "-c", _PAUSED, str(run)], cwd=ROOT, stdout=subprocess.DEVNULL,
                             stderr=a_err)
        deadline = time.monotonic() + 60
        while not (tmp_path / "paused").exists() and a.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        b = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=b_err)
        while b.poll() is None and "waiting" not in (tmp_path / "b.err").read_text() \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        (tmp_path / "GO").touch()
        assert (a.wait(timeout=60), b.wait(timeout=60)) == (0, 0)
    kept = run / "breakdown.before-reanalysis.json"
    assert kept.read_bytes() == original
    b_lines = (tmp_path / "b.err").read_text().splitlines()
    assert b_lines == [
        f"{run}: another re-analysis of this run is under way; waiting for it to end",
        f"re-analysed 2 graph(s) from their saved profiles; {run}/breakdown.json rebuilt (the run's own "
        f"result, before any re-analysis: {kept})"]
    alone = tmp_path / "alone"  # the same run re-analysed with nothing beside it
    shutil.copytree(FIXTURES / "runs" / "cpu_mlp_train_stalled", alone)
    assert reanalyze(alone).returncode == 0
    rebuilt, expected = (json.loads((d / "breakdown.json").read_text()) for d in (run, alone))
    assert {**rebuilt, "run_dir": ""} == {**expected, "run_dir": ""}
    assert not [p.name for p in run.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize(("key", "bad", "said"), [
    ("windows_ms", [float("nan")] * 5, "NaN is not a number a result holds (JSON has no NaN or Infinity)"),
    ("speed_reference_s", float("inf"), "Infinity is not a number a result holds (JSON has no NaN or Infinity)"),
    ("windows_ms", [1e308] * 5, "response.windows_ms[0]: 1e+308 is beyond any figure a result holds (at most "
                                "1e+24 in size)"),
    ("window", -1, "graphs[0-inference].window: -1 is no window of its 5 windows_ms"),
])
def test_a_saved_profile_holding_a_number_no_result_holds_is_damage(tmp_path, key, bad, said):
    """Each was analysed (exit 0, a window 'the others +-34%' slower) into a breakdown.json that
    every command then refused as damaged: the profile is read as a result is."""
    import json

    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    profile = run / "graphs" / "0-inference" / "profile.json"
    data = json.loads(profile.read_text())
    assert len(data["response"]["windows_ms"]) == 5
    data["response"][key] = bad
    profile.write_text(json.dumps(data))
    refused(run, f"{profile}: damaged: {said}")


def test_a_run_reanalysed_by_a_relative_path_is_saved_under_its_absolute_one(tmp_path):
    """`report run --reanalyze` saved "run_dir": "run" and a report.txt saying 'run directory:
    run', relative to wherever it had been run; the breakdown saves the absolute path."""
    import json

    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    p = subprocess.run([sys.executable, "-m", "inductor_bench.cli", "report", "run", "--reanalyze"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert p.returncode == 0, p.stderr
    assert json.loads((run / "breakdown.json").read_text())["run_dir"] == str(run)
    assert f"\nrun directory: {run}\n" in (run / "report.txt").read_text()
