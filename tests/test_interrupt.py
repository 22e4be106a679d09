"""Ctrl-C, as a user presses it: mid-compile and mid-profile the run ends within seconds with
exit 130, status `interrupted` in meta.json and the report, every finished graph kept and no
worker left running."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import MODELS

pytestmark = pytest.mark.e2e
# How long the tool may take to stop after Ctrl-C: kill the worker's process group, save.
STOP_S = 3.0


def children(pid: int) -> set[int]:
    """Every descendant process of pid (from /proc)."""
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d.name))
    out, todo = set(), [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.add(k)
            todo.append(k)
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def interrupt_when(runs: Path, marker: str, extra: list[str]) -> tuple[int, float, set[int], str]:
    cmd = [sys.executable, "-m", "inductor_bench.cli", "breakdown", str(MODELS / "mlp.py"), "--train",
           "--device", "cpu", "--runs-dir", str(runs), *extra]
    # As in a terminal, where Ctrl-C reaches a program with SIGINT at its default: a parent
    # that ignores it (a background job of a non-interactive shell) would pass that on.
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen = ""
    deadline = time.monotonic() + 600
    while marker not in seen and time.monotonic() < deadline:
        line = p.stderr.readline()
        if not line:
            break
        seen += line
    assert marker in seen, seen
    time.sleep(0.5)
    workers = children(p.pid)
    assert workers, "a worker should be running"
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    return p.returncode, time.monotonic() - t0, workers, seen + err


def run_dir_of(runs: Path) -> Path:
    (d,) = [x for x in runs.iterdir() if x.is_dir()]
    return d


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_ctrl_c_mid_compile(tmp_path):
    rc, took, workers, err = interrupt_when(tmp_path, "compiling mlp.py", ["--fresh-cache"])
    assert rc == 130 and took < STOP_S, (rc, took, err[-2000:])
    assert "interrupted" in err.splitlines()[-1]
    assert not any(alive(w) for w in workers)
    meta = json.loads((run_dir_of(tmp_path) / "meta.json").read_text())
    assert meta["status"] == "interrupted"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_ctrl_c_mid_profile_keeps_the_finished_graph(tmp_path):
    rc, took, workers, err = interrupt_when(tmp_path, "profiling graph 0-backward", ["--windows", "5"])
    assert rc == 130 and took < STOP_S, (rc, took, err[-2000:])
    assert not any(alive(w) for w in workers)
    run = run_dir_of(tmp_path)
    assert json.loads((run / "meta.json").read_text())["status"] == "interrupted"
    result = json.loads((run / "breakdown.json").read_text())
    assert result["status"] == "interrupted"
    assert [g["id"] for g in result["graphs"]] == ["0-forward"] and result["graphs"][0]["kernels"]
    assert "Status: interrupted" in (run / "report.txt").read_text() or "STATUS: INTERRUPTED" in (
        run / "report.txt").read_text()
