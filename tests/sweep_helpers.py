"""What the sweep's executor tests share: stand-in job commands (``tests/sweep_standin.py``)
in place of compare, a killer that ends a job from outside while it runs, and readers of what
the jobs recorded."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

from inductor_bench.core.sweep import Sweep
from inductor_bench.core.sweep_plan import new_sweep

FIXTURE = str(Path(__file__).parent / "fixtures" / "results" / "cpu_mlp_compare" / "compare.json")


def grid(names: list[str], device: str = "cpu", executor: str = "local") -> Sweep:
    """A sweep of made-up model paths (the stand-in never opens them)."""
    return new_sweep(
        [f"/models/{n}.py" for n in names],
        names,
        ["default"],
        [],
        device=device,
        shard=None,
        executor=executor,
        created="",
    )


def standin(actions: dict[str, list[str]]):
    """A sweep command running the stand-in with ``actions[model]`` (see its docstring)."""

    def command(sweep, cell) -> list[str]:
        return ["tests.sweep_standin", *actions[cell.model]]

    return command


def ok(*options: str) -> list[str]:
    return [*options, "ok", FIXTURE]


def kill_when_started(
    pid_dir: Path, name: str, sig: int = signal.SIGKILL, timeout: float = 120.0
) -> threading.Thread:
    """A thread that waits for the stand-in ``name`` to write its pid, then sends it ``sig``."""

    def run() -> None:
        f = pid_dir / f"{name}.pid"
        deadline = time.monotonic() + timeout
        while not f.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        os.kill(int(f.read_text()), sig)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def where(run_dir: Path) -> dict:
    return json.loads((run_dir / "where.json").read_text())


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class Events:
    """``on_event`` that keeps every (what, model, progress line)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None, str]] = []

    def __call__(self, what, cell, sweep) -> None:
        from inductor_bench.core.sweep_cells import progress_line

        self.seen.append((what, cell.model if cell else None, progress_line(sweep, live=True)))
