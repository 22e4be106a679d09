"""Model files as a hostile or careless user gives them: a device, a FIFO, a huge file are
refused in one line by their metadata, never read; a model that changes directory or starts
processes of its own is measured as any other, and what it started ends with the run."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench.core.workload import MAX_MODEL_BYTES, WorkloadOptions

from .conftest import FIXTURES, MODELS, ROOT
from .processes import alive

LIMIT_BYTES = 2 << 30  # the tool's address space in these tests: reading /dev/zero would pass it


def cli(*args: str, cwd: Path = ROOT, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "inductor_bench.cli", *args], capture_output=True, text=True, cwd=cwd,
        timeout=timeout, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES)),
    )


def refused(p: subprocess.CompletedProcess) -> str:
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr, p.stderr
    (line,) = p.stderr.splitlines()
    return line


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_link_to_a_device_is_refused_unread(tmp_path):
    """It used to be read whole for its syntax: the process grew to 23 GB."""
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    line = refused(cli("breakdown", str(tmp_path / "zero.py"), "--runs-dir", str(tmp_path / "runs")))
    assert line == (f"inductor-bench: error: {tmp_path / 'zero.py'}: not a regular file "
                    "(a device, FIFO or socket): a model file is a .py file")
    assert not (tmp_path / "runs").exists()


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    """Opening it would block until something writes to it: forever, and --timeout did not
    apply."""
    os.mkfifo(tmp_path / "pipe.py")
    line = refused(cli("breakdown", str(tmp_path / "pipe.py"), "--timeout", "5"))
    assert line.endswith("pipe.py: not a regular file (a device, FIFO or socket): a model file is a .py file")


def test_a_file_over_the_cap_is_refused(tmp_path):
    big = tmp_path / "big.py"
    with open(big, "wb") as f:  # sparse: no disk used
        f.truncate(MAX_MODEL_BYTES + 1)
    line = refused(cli("breakdown", str(big)))
    assert line == f"inductor-bench: error: {big}: 16 MiB, too large for a model file (at most 16 MiB)"


def test_a_directory_is_named_as_one_and_a_run_directory_pointed_to_report(tmp_path):
    """It was 'not a Python file (expected a model file ending in .py)', of a directory named
    model.py too, and of a run directory given to breakdown in place of report."""
    from inductor_bench.core.errors import UsageError
    from inductor_bench.core.workload import check_model_file

    (tmp_path / "model.py").mkdir()
    run = FIXTURES / "runs" / "cpu_fft_inference"
    said = {}
    for p in (tmp_path / "model.py", run):
        with pytest.raises(UsageError) as e:
            check_model_file(p)
        said[p] = str(e.value)
    assert said == {
        tmp_path / "model.py": f"{tmp_path / 'model.py'}: a directory, not a model file (a .py file: its factory "
                               "make_workload, or a script)",
        run: f"{run}: a run directory, not a model file: `inductor-bench report {run}` shows it",
    }


def test_the_path_workers_get_is_absolute(tmp_path, monkeypatch):
    shutil.copy(MODELS / "mlp.py", tmp_path / "m.py")
    monkeypatch.chdir(tmp_path)
    opts = WorkloadOptions(path="m.py", device="cpu").validate()
    assert opts.path == str(tmp_path / "m.py")
    assert opts.to_dict()["path"] == str(tmp_path / "m.py") and opts.name == "m"


@pytest.mark.slow
@pytest.mark.e2e
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_a_model_that_changes_directory_and_starts_a_daemon(tmp_path):
    """Given by relative paths, the model and the runs directory: every graph is measured
    though the model moves to another directory, and the process it starts in a session of
    its own (in the compile worker and in the profiling worker) ends with the run."""
    shutil.copy(FIXTURES / "models" / "wanderer.py", tmp_path / "wanderer.py")
    pids = tmp_path / "pids.txt"
    r = subprocess.run(
        [sys.executable, "-m", "inductor_bench.cli", "breakdown", "wanderer.py", "--device", "cpu",
         "--runs-dir", "runs", "--windows", "1"],
        capture_output=True, text=True, cwd=tmp_path, timeout=900, env={**os.environ, "WANDERER_PIDS": str(pids), "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode == 0, r.stderr[-3000:]
    (run,) = (tmp_path / "runs").iterdir()
    result = json.loads((run / "breakdown.json").read_text())
    assert result["status"] == "ok" and result["graphs"]
    assert all(g["status"] == "ok" and g["kernels"] for g in result["graphs"])
    started = [int(x) for x in pids.read_text().split()]
    assert len(started) >= 2  # the compile worker and the profiling worker imported the model
    assert not [p for p in started if alive(p)]


def test_train_on_a_model_with_nothing_to_differentiate_says_what_to_do():
    """A model without parameters (a ReLU and a softmax) under --train: its output needs no grad,
    so there is no backward; the one line says why and what to do."""
    import torch

    from inductor_bench.core.errors import WorkloadError
    from inductor_bench.runner.workload import scalar_loss

    x = torch.randn(4, 8)
    with pytest.raises(WorkloadError) as e:
        scalar_loss(torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Softmax(-1))(x))
    assert str(e.value) == (
        "--train: the model's output has no floating tensor that requires grad (a model without trainable "
        "parameters, or one run under no_grad, has no backward to profile: leave out --train, or give the "
        "factory's inputs requires_grad=True)")
    out = torch.nn.Softmax(-1)(x.requires_grad_())
    assert scalar_loss({"y": out, "n": 3}).item() == pytest.approx(out.sum().item())
