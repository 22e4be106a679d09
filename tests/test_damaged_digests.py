"""A run's digests.json (the sha256 of each module and kernel file it copied) is what shows
that the file re-analysed or run is the one the run wrote. Damaged, it checks nothing: `report
--reanalyze` and `kernel RUN NAME` refuse in one line naming it, exit 2, where the re-analysis
read every module unchecked, said nothing and exited 0. Built from the recorded run in
tests/fixtures/runs and the kernel fixture, no compile needed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from .conftest import FIXTURES, ROOT
from .test_kernel_provenance import NAME, REL, saved_run

RUN = FIXTURES / "runs" / "cpu_fft_inference"
MODULE = "graphs/0-inference/module.py"
TORN = '{\n "graphs/0-inference/inputs.pt": "97a01a'
NOT_JSON = "Unterminated string starting at: line 2 column 34 (char 35)"


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``inductor-bench ARGS`` in a process of its own, from the repository's root."""
    return subprocess.run([sys.executable, "-m", "inductor_bench.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)


def damaged(run, text: str) -> str:
    """digests.json written as ``text``; how the refusal names it."""
    (run / "digests.json").write_text(text)
    try:
        json.loads(text)
    except ValueError as e:
        return f"{run}/digests.json: damaged, not readable as JSON ({e})"
    if text.strip() == "{}":
        return f"{run}/digests.json: damaged, an empty map (a run records the sha256 of every module it copies)"
    return f"{run}/digests.json: damaged, not a map of paths to sha256 digests"


# "{}": it was read as a run that recorded nothing, its modules analysed unchecked without the
# note a run with no digests.json gets, exit 0
@pytest.mark.parametrize("text", [TORN, '{"graphs/0-inference/module.py": "x"}', "[]", "{}"])
def test_reanalysis_with_damaged_digests_is_refused_not_read_unchecked(tmp_path, text):
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    before = (run / "breakdown.json").read_bytes()
    said = damaged(run, text)
    if text == TORN:
        assert said.endswith(f"({NOT_JSON})")
    p = cli("report", str(run), "--reanalyze")
    assert (p.returncode, p.stderr.splitlines()) == (2, [
        f"inductor-bench: error: {said}: the graphs' modules cannot be checked against what the run wrote, "
        "and none is analysed unchecked: refused (`report` without --reanalyze renders the saved result)"]), p.stderr
    assert (run / "breakdown.json").read_bytes() == before
    assert not (run / "breakdown.before-reanalysis.json").exists()
    assert cli("report", str(run), "--summary").returncode == 0  # the way on it names


def test_a_module_the_digests_leave_out_is_refused(tmp_path):
    """A digests.json that records the graph's inputs but not its module: the module was read unchecked."""
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    digests = json.loads((run / "digests.json").read_text())
    del digests[MODULE]
    (run / "digests.json").write_text(json.dumps(digests))
    p = cli("report", str(run), "--reanalyze")
    assert (p.returncode, p.stderr.splitlines()) == (2, [
        f"inductor-bench: error: {run}/{MODULE}: not a file the run recorded writing (no sha256 in digests.json): "
        "refused"]), p.stderr


def test_a_run_without_digests_is_reanalysed_and_says_its_modules_went_unchecked(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    (run / "digests.json").unlink()
    p = cli("report", str(run), "--reanalyze")
    assert p.returncode == 0, p.stderr
    assert f"{run}: no digests.json: the graphs' modules were analysed as they are, unchecked against what " \
           "the run wrote" in p.stderr.splitlines()


@pytest.mark.parametrize("text", [TORN, '{"' + REL + '": "x"}', "{}"])
def test_kernel_with_damaged_digests_is_refused_before_importing_it(tmp_path, text):
    """It said 'not readable as JSON' without what it meant, or that an intact file 'changed'."""
    run = saved_run(tmp_path)
    mark = tmp_path / "imported"
    with open(run / REL, "a") as f:
        f.write(f"\nopen({str(mark)!r}, 'w').close()\n")
    said = damaged(run, text)
    p = cli("kernel", str(run), NAME)
    assert (p.returncode, p.stderr.splitlines()) == (2, [
        f"inductor-bench: error: {said}: {REL!r} cannot be checked against what the run wrote, and a kernel file "
        "is never run unchecked: refused"]), p.stderr
    assert not mark.exists()


def test_a_kernel_file_edited_since_the_run_is_refused_not_counted(tmp_path):
    """Its `kernel_num_gb` raised from 0.001315328 to 1000: re-analysis counted the kernel's
    bytes as 1e12 (1315328 as recorded), exit 0."""
    run = tmp_path / "run"
    shutil.copytree(FIXTURES / "runs" / "cuda_h200_transformer_train", run)
    kernel = run / "graphs" / "0-backward" / "kernels" / \
        "triton_per_fused_add_native_layer_norm_native_layer_norm_backward_view_5.py"
    text = kernel.read_text()
    assert "'kernel_num_gb': 0.001315328," in text
    kernel.write_text(text.replace("'kernel_num_gb': 0.001315328,", "'kernel_num_gb': 1000.0,"))
    before = (run / "breakdown.json").read_bytes()
    p = cli("report", str(run), "--reanalyze")
    assert (p.returncode, p.stderr.splitlines()) == (2, [
        f"inductor-bench: error: {kernel}: changed since the run wrote it (sha256 differs): its bytes and FLOPs "
        "would be read from another kernel; refused"]), p.stderr
    assert (run / "breakdown.json").read_bytes() == before
