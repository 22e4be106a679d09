"""Where a command writes (``--json PATH``, ``--html PATH``, ``--out DIR``) is checked before any
work, by every command: a path under a file is bad input (exit 2), a directory that takes no
new file (a read-only disk) is exit 74, each in one line naming the option. Seen here (torch
2.13 CPU, 2026-12-07): ``breakdown models/mlp.py --device cpu --json f/x.json``, ``f`` a file,
compiled and profiled for 76 s, then said ``f: cannot create the directory (File exists)``,
exit 74, naming neither the option nor the run directory that held the results.

A file that still cannot be written after the run (a disk filled during it: ``/dev/full``
here) leaves the report on stdout, and the line says where the measured results are saved.
No worker runs in these tests: the functions that measure or read record being called."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from inductor_bench import cli
from inductor_bench.commands import analyze as analyze_command
from inductor_bench.commands import breakdown as breakdown_command
from inductor_bench.commands import compare as compare_command
from inductor_bench.commands import diff as diff_command
from inductor_bench.commands import kernel as kernel_command
from inductor_bench.commands import report as report_command
from inductor_bench.core.rundir import load_breakdown
from inductor_bench.runner import compare as runner_compare
from inductor_bench.runner import pipeline, sweep_run

from . import test_run_files
from .conftest import FIXTURES, MODELS
from .test_refused_at_once import _args

RESULTS = FIXTURES / "results"
TRACE = FIXTURES / "cpu_loop" / "inference-torch-2.13.0.json.gz"
KERNEL = FIXTURES / "triton_kernels" / "cpu" / "triton_per_fused__softmax_0.py"
# The first function of each command that measures or reads its input.
WORK = {
    "breakdown": [(breakdown_command, "run_breakdown")],
    "compare": [(compare_command, "run_compare")],
    "sweep": [(sweep_run, "run_jobs")],
    "kernel": [(kernel_command, "resolve_kernel_file"), (kernel_command, "run_kernel_bench")],
    "report": [(report_command, "saved"), (report_command, "reanalyzed")],
    "diff": [(diff_command, "_load")],
    "analyze": [(analyze_command, "trace_files")],
}
COMMANDS = list(WORK)


def _run(capsys, *args: str) -> tuple[int, str, str]:
    try:
        cli.main([*args])
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _no_work(monkeypatch, command: str) -> list[str]:
    """The names of the command's work functions called, which none should be."""
    called: list[str] = []
    for module, name in WORK[command]:
        monkeypatch.setattr(module, name, lambda *a, _name=name, **k: called.append(_name))
    return called


def _refused_first(capsys, monkeypatch, tmp_path, command: str, option: str, path: Path) -> tuple[int, str]:
    called = _no_work(monkeypatch, command)
    code, out, err = _run(capsys, *_args(command, tmp_path), option, str(path))
    assert called == [] and out == "" and err.count("\n") == 1, err
    assert not (tmp_path / "run").exists()  # no run directory claimed either
    return code, err


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("option", ["--json", "--html"])
@pytest.mark.parametrize("deeper", ["", "/more"], ids=["in", "deeper"])
def test_a_path_under_a_file_is_refused_before_any_work(capsys, monkeypatch, tmp_path, command, option, deeper):
    if command == "report" and option == "--json":
        pytest.skip("report has no --json")
    (tmp_path / "f").write_text("mine")
    path = tmp_path / f"f{deeper}" / "x.out"
    code, err = _refused_first(capsys, monkeypatch, tmp_path, command, option, path)
    assert (code, err) == (2, f"inductor-bench: error: {option} {path}: {tmp_path / 'f'} is not a directory\n")
    assert (tmp_path / "f").read_text() == "mine"


tiny_disk = test_run_files.tiny_disk  # a 64 KiB tmpfs (mounting it needs root)


@pytest.fixture
def read_only_dir(request):
    """A directory on a read-only disk."""
    disk = request.getfixturevalue("tiny_disk")
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    return disk


@pytest.mark.parametrize("command", COMMANDS)
def test_a_path_on_a_read_only_disk_is_refused_before_any_work(capsys, monkeypatch, tmp_path, read_only_dir,
                                                               command):
    option = "--html" if command == "report" else "--json"
    path = read_only_dir / "new" / "x.out"  # its directory would be made first: it cannot be
    code, err = _refused_first(capsys, monkeypatch, tmp_path, command, option, path)
    assert (code, err) == (74, f"inductor-bench: error: {option} {path}: cannot write in {read_only_dir} "
                               "(Read-only file system)\n")


@pytest.mark.parametrize("command", ["breakdown", "compare"])
def test_out_under_a_file_is_bad_input_before_any_work(capsys, monkeypatch, tmp_path, command):
    """It was exit 74, 'cannot create it (Not a directory)', where --runs-dir onto a file is 2."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "f").write_text("mine")
    compile_called: list[str] = []  # the run directory is claimed inside the run: its compile is the work
    monkeypatch.setattr(pipeline, "compile_workload", lambda *a, **k: compile_called.append("compile"))
    monkeypatch.setattr(runner_compare, "run_modes", lambda *a, **k: compile_called.append("modes"))
    code, out, err = _run(capsys, command, str(MODELS / "mlp.py"), "--device", "cpu", "--out",
                          str(tmp_path / "f" / "run"))
    assert (code, err) == (2, f"inductor-bench: error: --out {tmp_path / 'f' / 'run'}: not a directory\n")
    assert compile_called == [] and out == ""


def test_fine_paths_are_left_as_they_were(capsys, tmp_path):
    """The check makes nothing: a missing directory is made as the JSON is written, not before;
    the FIFO and the page already there are written into and replaced."""
    json_path = tmp_path / "new" / "deeper" / "r.json"
    page = tmp_path / "page.html"
    page.write_text("<!DOCTYPE html><p>old</p>")
    code, out, err = _run(capsys, "analyze", str(TRACE), "--json", str(json_path), "--html", str(page))
    assert code == 0, err
    assert json_path.read_text().startswith("{") and page.read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new", "page.html"]


FULL = Path("/dev/full")


@pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full")
def test_a_page_the_disk_cannot_take_after_the_work_leaves_the_report_on_stdout(capsys, tmp_path):
    """The check passes (a device that takes writing); the write fails at the end: exit 74,
    the report still printed, as it is without --html."""
    (tmp_path / "full.html").symlink_to(FULL)
    code, out, err = _run(capsys, "analyze", str(TRACE), "--html", str(tmp_path / "full.html"))
    assert (code, err) == (74, f"inductor-bench: error: {tmp_path / 'full.html'}: cannot write "
                               "(No space left on device)\n")
    assert out == _run(capsys, "analyze", str(TRACE))[1]


@pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full")
def test_a_failed_write_after_a_breakdown_says_where_its_results_are(capsys, monkeypatch, tmp_path):
    """The run saved its results; the page could not be written: the line names the run
    directory (it had named only the page), and the report is on stdout."""
    run = tmp_path / "run"
    shutil.copytree(RESULTS / "cpu_mlp_train_quiet", run)
    result = load_breakdown(run)
    monkeypatch.setattr(breakdown_command, "run_breakdown", lambda *a, **k: (result, run, None))
    monkeypatch.setattr(breakdown_command, "add_roofline", lambda *a, **k: None)
    (tmp_path / "full.html").symlink_to(FULL)
    code, out, err = _run(capsys, "breakdown", str(MODELS / "mlp.py"), "--device", "cpu", "--summary",
                          "--html", str(tmp_path / "full.html"))
    assert (code, err.splitlines()[-1]) == (74, f"inductor-bench: error: {tmp_path / 'full.html'}: cannot write "
                                                f"(No space left on device); what was measured is saved in {run}")
    code, saved, _ = _run(capsys, "report", str(run), "--summary")
    assert code == 0 and out == saved


@pytest.mark.parametrize("command", ["breakdown", "compare", "sweep"])
@pytest.mark.parametrize("option", ["--json", "--html"])
def test_a_path_inside_the_run_directory_is_refused_before_any_work(capsys, monkeypatch, tmp_path, command, option):
    """--json RUN/compare.json was refused only after the run (the run had saved its own there);
    --html RUN/breakdown.json replaced the run's result with the page."""
    path = tmp_path / "run" / "deeper" / "x.out"
    code, err = _refused_first(capsys, monkeypatch, tmp_path, command, option, path)
    assert (code, err) == (2, f"inductor-bench: error: {option} {path}: inside --out {tmp_path / 'run'}, where the "
                              "run saves its own result and page; give a path outside it\n")


def test_a_page_is_never_written_over_a_file_that_is_not_a_page(capsys, tmp_path):
    """report RUN --html RUN/breakdown.json replaced the saved result with the page (exit 0;
    every later command refused the run as damaged). A page, or an empty file, is replaced."""
    run = tmp_path / "run"
    shutil.copytree(RESULTS / "cpu_mlp_train_quiet", run)
    saved = (run / "breakdown.json").read_bytes()
    code, out, err = _run(capsys, "report", str(run), "--html", str(run / "breakdown.json"))
    assert (code, out, err) == (2, "", f"inductor-bench: error: --html {run / 'breakdown.json'}: already exists and "
                                       "is not an HTML page (a page is replaced, no other file)\n")
    assert (run / "breakdown.json").read_bytes() == saved
    for name, before in [("old.html", "\n<!DOCTYPE html><p>old</p>"), ("empty.html", "")]:
        (tmp_path / name).write_text(before)
        code, _, err = _run(capsys, "report", str(run), "--html", str(tmp_path / name))
        assert code == 0, err
        now = (tmp_path / name).read_text()
        assert now.startswith("<!DOCTYPE html>") and "<p>old</p>" not in now


def test_a_file_the_run_made_where_the_page_goes_is_kept(capsys, monkeypatch, tmp_path):
    """Checked again as the page is written: a file that appeared there during the run (not a
    page) is refused, kept whole, and the run's results named."""
    run = tmp_path / "run"
    shutil.copytree(RESULTS / "cpu_mlp_train_quiet", run)
    page = tmp_path / "page.html"

    def measured(*a, **k):
        page.write_text('{"mine": 1}')
        return load_breakdown(run), run, None

    monkeypatch.setattr(breakdown_command, "run_breakdown", measured)
    monkeypatch.setattr(breakdown_command, "add_roofline", lambda *a, **k: None)
    code, out, err = _run(capsys, "breakdown", str(MODELS / "mlp.py"), "--device", "cpu", "--html", str(page))
    assert (code, err.splitlines()[-1]) == (2, f"inductor-bench: error: --html {page}: already exists and is not an "
                                               "HTML page (a page is replaced, no other file); what was measured "
                                               f"is saved in {run}")
    assert page.read_text() == '{"mine": 1}' and out == _run(capsys, "report", str(run))[1]
