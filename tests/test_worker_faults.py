"""A profiling worker killed in one graph's harness — by SIGKILL, as the OOM killer ends a
process, or by a segmentation fault — costs that graph only: a real `inductor-bench
breakdown` of a compiled model on CPU, whose first two graphs call custom ops that end their
own process when they run inside the profiling worker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from inductor_bench.core.rundir import load_breakdown
from inductor_bench.runner.graphs import PROFILE_WORKER

from .test_cli_errors import one_error_line

pytestmark = pytest.mark.e2e

# Three graphs (two graph breaks): the first calls an op that SIGKILLs its process, the
# second one that reads address 0, the third is plain. The ops recognise the profiling
# worker by the module it runs as (`python -m PROFILE_WORKER`); in the compile worker, which
# runs the same model, they copy their input.
MODEL = textwrap.dedent("""
    import ctypes
    import os
    import signal
    import sys

    import torch


    def in_profiling_worker() -> bool:
        spec = getattr(sys.modules["__main__"], "__spec__", None)
        return spec is not None and spec.name == {worker!r}


    @torch.library.custom_op("ibfault::oom_kill", mutates_args=())
    def oom_kill(x: torch.Tensor) -> torch.Tensor:
        if in_profiling_worker():
            os.kill(os.getpid(), signal.SIGKILL)
        return x.clone()


    @torch.library.custom_op("ibfault::segfault", mutates_args=())
    def segfault(x: torch.Tensor) -> torch.Tensor:
        if in_profiling_worker():
            ctypes.string_at(0)
        return x.clone()


    oom_kill.register_fake(lambda x: torch.empty_like(x))
    segfault.register_fake(lambda x: torch.empty_like(x))


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(32, 32)
            self.b = torch.nn.Linear(32, 32)

        def forward(self, x):
            x = oom_kill(torch.relu(x) + 1)
            torch._dynamo.graph_break()
            x = segfault(torch.sigmoid(self.a(x)))
            torch._dynamo.graph_break()
            return torch.nn.functional.gelu(self.b(x)) * 2


    def make_workload(device, dtype, batch_size=8):
        torch.manual_seed(0)
        return Net().to(device=device, dtype=dtype), (torch.randn(batch_size, 32, device=device, dtype=dtype),)
""").format(worker=PROFILE_WORKER)

TOKEN_VAR = "INDUCTOR_BENCH_FAULT_TEST"
KILLED = "was killed by SIGKILL (out of memory? the OOM killer sends SIGKILL)"
SEGFAULT = "was killed by SIGSEGV (segmentation fault)"


def processes_with(token: str) -> list[int]:
    """Processes whose environment holds ``TOKEN_VAR=token``: every worker (and anything it
    started) inherits it from the command."""
    needle = f"{TOKEN_VAR}={token}".encode()
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if needle in (d / "environ").read_bytes().split(b"\0"):
                    found.append(int(d.name))
            except OSError:  # gone meanwhile, or not ours to read
                continue
    return found


@pytest.fixture(scope="module")
def faulty_run(tmp_path_factory):
    """(completed process, run directory, token) of one breakdown of the model above."""
    tmp = tmp_path_factory.mktemp("faults")
    model = tmp / "faulty.py"
    model.write_text(MODEL)
    token = uuid.uuid4().hex
    p = subprocess.run(
        [sys.executable, "-m", "inductor_bench.cli", "breakdown", str(model), "--device", "cpu",
         "--runs-dir", str(tmp / "runs"), "--iterations", "5", "--windows", "1"],
        capture_output=True, text=True, timeout=600, env={**os.environ, TOKEN_VAR: token},
    )
    (run,) = (tmp / "runs").iterdir()
    return p, run, token


def worker_error(how: str, graph: str, run: Path) -> str:
    return f"profile worker {how} while working on {graph} (log: {run}/logs/profile.log)"


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_the_command_says_partial_with_exit_4_and_leaves_no_process(faulty_run):
    p, run, token = faulty_run
    assert p.returncode == 4, p.stderr[-3000:]
    assert one_error_line(p) == "inductor-bench: error: graph 0-inference: " + worker_error(
        KILLED, "0-inference", run)
    assert "STATUS: PARTIAL" in p.stdout
    assert processes_with(token) == []


@pytest.mark.slow
def test_the_killed_graphs_are_failed_with_the_signal_named(faulty_run):
    _, run, _ = faulty_run
    saved = json.loads((run / "breakdown.json").read_text())
    assert saved["status"] == "partial"
    assert json.loads((run / "meta.json").read_text())["status"] == "partial"
    killed, crashed, _ = saved["graphs"]
    assert (killed["id"], killed["status"]) == ("0-inference", "failed")
    assert killed["error"] == worker_error(KILLED, "0-inference", run)
    assert (crashed["id"], crashed["status"]) == ("1-inference", "failed")
    assert crashed["error"] == worker_error(SEGFAULT, "1-inference", run)
    assert killed["kernels"] == crashed["kernels"] == []
    assert saved["errors"] == [f"graph {g['id']}: {g['error']}" for g in (killed, crashed)]
    assert [g.status for g in load_breakdown(run).graphs] == ["failed", "failed", "ok"]  # `report` reads it
    report = (run / "report.txt").read_text()
    assert "STATUS: PARTIAL" in report
    for line in saved["errors"]:
        assert f"- {line}\n" in report


@pytest.mark.slow
def test_the_graph_after_them_has_its_full_results(faulty_run):
    _, run, _ = faulty_run
    saved = json.loads((run / "breakdown.json").read_text())
    ok = saved["graphs"][2]
    assert (ok["id"], ok["status"], ok["iterations"], len(ok["windows_ms"])) == ("2-inference", "ok", 5, 1)
    assert set(ok["categories"]) == {"extern_gemm", "cpp_pointwise"}
    assert sum(ok["categories"].values()) == pytest.approx(ok["kernel_ms"], rel=1e-9)
    assert {k["category"] for k in ok["kernels"]} == {"extern_gemm", "cpp_pointwise"}
    assert all(k["ms"] > 0 and len(k["samples_ms"]) == 5 for k in ok["kernels"])
    assert (run / ok["trace"]).is_file()
    assert saved["totals"]["graphs"] == 1 and saved["totals"]["kernel_ms"] == pytest.approx(ok["kernel_ms"])
