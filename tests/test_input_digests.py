"""What `report --reanalyze` makes a graph's figures from besides its module and kernel files
(the profiling worker's answer, profile.json; the traces; the lowering record, sources.json;
the run's profiled steps) is in the run's digests.json, and checked before it is read: one
edited by hand had the re-analysis rebuild breakdown.json from it, exit 0 without a word (every
kernel's time ten times the measured one, from an edited trace). Now refused in one line
naming it, exit 2, the result untouched. Runs recorded before those digests (the fixtures) are
re-analysed as before. Built from the recorded runs in tests/fixtures/runs, no
compile needed; the digests a breakdown records are checked on a session's compiled run."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil

import pytest

from .conftest import FIXTURES
from .test_damaged_digests import cli

CUDA = FIXTURES / "runs" / "cuda_h200_transformer_train"  # a GPU run: pipelined traces too
CPU = FIXTURES / "runs" / "cpu_fft_inference"  # with its profiled steps (steps.json.gz)
INPUTS = ("profile.json", "trace.json.gz", "launch.json.gz", "pipelined.json.gz", "sources.json")
STEPS = ("steps.json.gz", "steps_python.json.gz")


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def recording(tmp_path, fixture):
    """A copy of ``fixture`` whose digests.json records its analysis inputs as a run of this
    version does (each digest computed here)."""
    run = tmp_path / "run"
    shutil.copytree(fixture, run)
    digests = json.loads((run / "digests.json").read_text())
    assert not any(k.endswith("/profile.json") for k in digests)  # recorded before them
    for p in [*(run / "graphs").glob("*/*"), *(run / n for n in STEPS)]:
        if p.name in INPUTS + STEPS and p.is_file():
            digests[p.relative_to(run).as_posix()] = sha(p)
    (run / "digests.json").write_text(json.dumps(digests, indent=1))
    return run


def edit_trace(path) -> None:
    """Every kernel (and CPU op) of the trace ten times as long."""
    with gzip.open(path, "rt") as f:
        trace = json.load(f)
    for e in trace["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "cpu_op"):
            e["dur"] = e["dur"] * 10
    with gzip.open(path, "wt") as f:
        json.dump(trace, f)


def edit_json(path) -> None:
    data = json.loads(path.read_text())
    if path.name == "profile.json":  # the first window ten times as long
        data["response"]["windows_ms"][0] *= 10
    else:  # sources.json: every node's source line 100 lines on
        for node in data["nodes"].values():
            node["frame"][1] += 100
    path.write_text(json.dumps(data))


def refused(run, line: str) -> None:
    before = (run / "breakdown.json").read_bytes()
    p = cli("report", str(run), "--reanalyze", "--summary")
    assert (p.returncode, p.stderr.splitlines()) == (2, [f"inductor-bench: error: {line}"]), p.stderr
    assert (run / "breakdown.json").read_bytes() == before
    assert not (run / "breakdown.before-reanalysis.json").exists()


@pytest.mark.parametrize("rel,edit,what", [
    ("graphs/0-forward/trace.json.gz", edit_trace, "its kernels' times would be read from another trace"),
    ("graphs/0-backward/pipelined.json.gz", edit_trace, "its pipelined run would be read from another trace"),
    ("graphs/0-backward/profile.json", edit_json,
     "the graph's windows and iteration times would be read from another answer"),
    ("graphs/0-forward/sources.json", edit_json,
     "its source lines and modules would be read from another record"),
])
def test_an_edited_input_of_a_graph_is_refused(tmp_path, rel, edit, what):
    run = recording(tmp_path, CUDA)
    edit(run / rel)
    refused(run, f"{run / rel}: changed since the run wrote it (sha256 differs): {what}; refused")


def test_an_edited_steps_trace_is_refused(tmp_path):
    run = recording(tmp_path, CPU)
    edit_trace(run / "steps.json.gz")
    refused(run, f"{run}/steps.json.gz: changed since the run wrote it (sha256 differs): the time outside "
                 "the graphs would be split from another trace; refused")


def test_an_input_the_run_did_not_record_is_refused(tmp_path):
    """A launch trace put beside a graph that had none: its stacks would name the kernels' sites."""
    run = recording(tmp_path, CUDA)
    shutil.copy(run / "graphs/0-forward/trace.json.gz", run / "graphs/0-forward/launch.json.gz")
    refused(run, f"{run}/graphs/0-forward/launch.json.gz: not a file the run recorded writing (no sha256 in "
                 "digests.json): refused")


def test_a_recorded_input_of_a_graph_gone_is_refused(tmp_path):
    """Its pipelined trace deleted: the re-analysis dropped the graph's pipelined run, exit 0."""
    run = recording(tmp_path, CUDA)
    (run / "graphs/0-backward/pipelined.json.gz").unlink()
    refused(run, f"{run}/graphs/0-backward/pipelined.json.gz: missing, though the run wrote it (its sha256 "
                 "is in digests.json): refused")


def test_a_recording_run_untouched_is_reanalysed_as_a_run_recorded_before(tmp_path):
    """The checks change nothing of the figures: the same breakdown.json as the same run whose
    digests.json predates them (its inputs read unchecked, as before)."""
    old = tmp_path / "old"
    shutil.copytree(CUDA, old)
    p = cli("report", str(old), "--reanalyze", "--format", "json")
    assert p.returncode == 0, p.stderr
    new = recording(tmp_path, CUDA)
    q = cli("report", str(new), "--reanalyze", "--format", "json")
    assert q.returncode == 0, q.stderr
    assert q.stdout.replace(str(new), "RUN") == p.stdout.replace(str(old), "RUN")
    assert (new / "breakdown.json").read_text().replace(str(new), "RUN") == \
        (old / "breakdown.json").read_text().replace(str(old), "RUN")


@pytest.mark.e2e
def test_a_breakdown_records_every_input_of_its_reanalysis(mlp_train):
    """`breakdown models/mlp.py --train`: each graph's answer, trace and record, and the run's
    profiled steps, are in digests.json with the sha256 of the file as it lies."""
    result, run_dir, err = mlp_train
    assert err is None
    digests = json.loads((run_dir / "digests.json").read_text())
    want = [p for p in [*(run_dir / "graphs").glob("*/*"), *(run_dir / n for n in STEPS)]
            if p.name in INPUTS + STEPS and p.is_file()]
    names = {p.name for p in want}
    assert {"profile.json", "trace.json.gz", "sources.json", "steps.json.gz"} <= names
    assert len([p for p in want if p.name == "profile.json"]) == len(result.graphs) == 2
    assert {p.relative_to(run_dir).as_posix(): sha(p) for p in want}.items() <= digests.items()
