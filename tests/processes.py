"""The processes of a run, as tests see them from outside: what is below a process, what is
still alive, and the tool started and run until a phase begins."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from .conftest import MODELS


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


def group_members(pgids: set[int]) -> list[int]:
    """Processes still in any of these process groups (zombies aside)."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[3]) in pgids and fields[0] != "Z":
                out.append(int(d.name))
    return out


def as_in_a_terminal() -> None:
    """For ``preexec_fn``: the stop signals at their defaults, as in a terminal, where Ctrl-C
    sends SIGINT and closing it SIGHUP. A parent that ignores them (a background job of a
    non-interactive shell ignores SIGINT; ``nohup`` SIGHUP) would pass that on, and the tool
    rightly keeps a signal its caller ignores."""
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def start_breakdown(runs: Path, marker: str, extra: list[str]) -> tuple[subprocess.Popen, str, set[int]]:
    """The tool, run until ``marker`` shows on stderr and half a second more; the process,
    what it printed and the processes below it then."""
    cmd = [sys.executable, "-m", "inductor_bench.cli", "breakdown", str(MODELS / "mlp.py"), "--train",
           "--device", "cpu", "--runs-dir", str(runs), *extra]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=as_in_a_terminal)
    seen = ""
    deadline = time.monotonic() + 600
    while marker not in seen and time.monotonic() < deadline:
        line = p.stderr.readline()
        if not line:
            break
        seen += line
    assert marker in seen, seen
    time.sleep(0.5)
    below = children(p.pid)
    while not below and p.poll() is None and time.monotonic() < deadline:  # a busy machine starts it late
        time.sleep(0.02)
        below = children(p.pid)
    assert below, "a worker should be running"
    return p, seen, below
