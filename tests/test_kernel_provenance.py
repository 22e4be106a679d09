"""The tool runs only kernel files it wrote: a run records the sha256 of every module and
kernel file it copies, and `kernel RUN NAME` (and --autotune-top) refuses, before anything is
imported, a file that changed, that the run never recorded, or that lies outside the run
directory. Reports link only to relative paths inside the run directory."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench.core.digests import file_digest, run_file
from inductor_bench.core.errors import ResultError
from inductor_bench.core.kernelfile import run_kernel_file
from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
from inductor_bench.core.rundir import DIGESTS_FILE
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.runner.graph_sources import collect_graphs
from inductor_bench.runner.kernelbench import _listed_here
from inductor_bench.runner.rundir import record_digests

from .conftest import FIXTURES, ROOT

SIN = FIXTURES / "triton_kernels" / "synthetic_cuda" / "triton_poi_fused_add_sin_0.py"
NAME = "triton_poi_fused_add_sin_0"
REL = f"graphs/0-forward/kernels/{NAME}.py"


def saved_run(tmp_path: Path, file: str = REL) -> Path:
    """A run directory holding one kernel file, its digest recorded, and a result naming
    ``file`` as the kernel's file."""
    run = tmp_path / "run"
    (run / REL).parent.mkdir(parents=True)
    shutil.copyfile(SIN, run / REL)
    record_digests(run, [run / REL])
    k = KernelStat(name=NAME, category="triton_pointwise", calls=1, ms=0.5, file=file)
    g = GraphResult(id="0-forward", role="forward", frame_id=0, kernels=[k], wall_ms=1.0, kernel_ms=0.5)
    (run / "breakdown.json").write_text(BreakdownResult(model="m", device="cuda", graphs=[g]).to_json())
    return run


def test_the_run_records_the_digest_of_each_file_it_copies(tmp_path):
    """collect_graphs copies the compiled module and its kernel files: each one's sha256 is in
    digests.json under its path in the run directory."""
    src = tmp_path / "inductor"
    src.mkdir()
    kernel = src / "ck.py"
    shutil.copyfile(SIN, kernel)
    module = src / "module.py"
    module.write_text(f"# AOT ID: ['0_forward']\n# kernel path: {kernel}\n{NAME} = async_compile.triton('{NAME}', '''\n'''\n")
    run = tmp_path / "run"
    run.mkdir()
    (s,) = collect_graphs([{"path": str(module), "frame_id": 0, "frame_compile_id": 0}], run, "cuda")
    digests = json.loads((run / DIGESTS_FILE).read_text())
    assert digests == {
        f"graphs/{s.graph.id}/module.py": file_digest(module),
        f"graphs/{s.graph.id}/kernels/{NAME}.py": file_digest(kernel),
    } and len(set(digests.values())) == 2


def test_a_recorded_file_unchanged_is_given(tmp_path):
    run = saved_run(tmp_path)
    assert run_file(run, REL) == (run / REL, SIN.read_bytes())


def test_a_file_replaced_after_its_check_is_never_imported(tmp_path):
    """The bytes whose digest was checked are the text the worker imports: a kernel file
    replaced after the check (here by one that leaves a mark when imported) is not read again.
    The worker imports the kernel to list its config spaces, as it does on a machine without
    its GPU."""
    run = saved_run(tmp_path)
    kf = run_kernel_file(run, REL)
    mark = tmp_path / "imported"
    (run / REL).write_text(SIN.read_text() + f"\nopen({str(mark)!r}, 'w').close()\n")
    listed = _listed_here(kf, timeout=120)
    assert listed is not None and "error" not in listed, listed
    assert set(listed["spaces"]) == {"baseline", "max-autotune"}
    assert not mark.exists()


@pytest.mark.parametrize("file,why", [
    ("/etc/passwd", "lies outside the run directory"),
    ("../../../etc/passwd", "lies outside the run directory"),
    ("graphs/../../x.py", "lies outside the run directory"),
    ("graphs/0-forward/kernels/other.py", "is not a file this run recorded writing"),
])
def test_a_file_outside_or_unrecorded_is_refused(tmp_path, file, why):
    run = saved_run(tmp_path, file)
    with pytest.raises(ResultError) as e:
        run_file(run, file)
    assert str(e.value) == f"{run}: {file!r} {why}: refused"


def test_a_link_out_of_the_run_directory_is_refused(tmp_path):
    run = saved_run(tmp_path)
    outside = tmp_path / "outside.py"
    shutil.copyfile(SIN, outside)
    (run / "graphs" / "escape.py").symlink_to(outside)
    record_digests(run, [run / "graphs" / "escape.py"])
    with pytest.raises(ResultError, match="leads outside the run directory"):
        run_file(run, "graphs/escape.py")


def test_kernel_refuses_a_changed_file_before_importing_it(tmp_path):
    """A file rewritten after the run (here to leave a mark when imported) is refused in one
    line, and nothing of it runs."""
    run = saved_run(tmp_path)
    mark = tmp_path / "imported"
    with open(run / REL, "a") as f:
        f.write(f"\nopen({str(mark)!r}, 'w').close()\n")
    p = subprocess.run([sys.executable, "-m", "inductor_bench.cli", "kernel", str(run), NAME],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.splitlines() == [
        f"inductor-bench: error: {run}: {REL!r} changed since the run wrote it (sha256 differs): refused"]
    assert not mark.exists()


@pytest.mark.parametrize("file", ["javascript:alert(1)", "/etc/passwd", "../../x.py"])
def test_a_saved_result_naming_a_file_outside_is_refused(tmp_path, file):
    """Before anything renders a link to it or runs it: one line naming the field."""
    run = saved_run(tmp_path, file)
    for cmd in (["report", str(run)], ["kernel", str(run), NAME]):
        p = subprocess.run([sys.executable, "-m", "inductor_bench.cli", *cmd], capture_output=True,
                           text=True, cwd=ROOT, timeout=120)
        assert p.returncode == 2 and p.stdout == ""
        assert p.stderr.splitlines() == [f"inductor-bench: error: {run / 'breakdown.json'}: damaged: graph "
                                         f"0-forward kernel {NAME}: {file!r} is outside the run directory"]


@pytest.mark.parametrize("file", ["javascript:alert(1)", "../../x.py"])
def test_reports_link_to_no_scheme_and_no_parent(file):
    k = KernelStat(name=NAME, category="triton_pointwise", calls=1, ms=0.5, file=file)
    g = GraphResult(id="0-forward", role="forward", frame_id=0, kernels=[k], wall_ms=1.0, kernel_ms=0.5)
    page = render_breakdown(BreakdownResult(model="m", device="cuda", graphs=[g]), "html")
    assert 'href="javascript' not in page and f'href="{file}' not in page
    assert f"<td>{file}</td>" in page  # shown as text


def test_a_relative_file_inside_is_linked():
    k = KernelStat(name=NAME, category="triton_pointwise", calls=1, ms=0.5, file=REL)
    g = GraphResult(id="0-forward", role="forward", frame_id=0, kernels=[k], wall_ms=1.0, kernel_ms=0.5)
    page = render_breakdown(BreakdownResult(model="m", device="cuda", graphs=[g]), "html")
    assert f'<a href="{REL}">{REL}</a>' in page.replace("<wbr>", "")  # a long cell may break at its /
