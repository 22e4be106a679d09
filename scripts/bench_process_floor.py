"""How far apart two processes' figures of the same graph can be on this machine, whatever the
statistics do: one compiled module timed in several fresh processes, one after the other.

Each process runs the module's own harness (seeded inputs, the host heap on huge pages: as the
profiling worker does) back to back for ``--seconds`` and keeps every call's time. The script
then applies, to each process's series, the estimators a breakdown could use, and prints how
far apart the processes' figures are (the largest over the smallest, less one):

- ``tool``: what a breakdown's single process reports: the fastest of 5 windows of
  ``--iterations`` calls, each window its steady mean (``core/steady.py``), windows spread
  through the series;
- ``20 windows``: the same with 20 windows: do more windows find the fast state?
- ``fastest q``: the mean of the fastest q of each window's calls (25%, 10%), the fastest
  window kept: a lower-quantile estimator;
- ``min``: the fastest single call (no estimator can be steadier than this one's floor).

A spread over the goal of ``bench_disturbance.py`` (10%) under every estimator means no rule
over one process's iterations can hold the goal on this machine at this time: the processes
themselves ran at different speeds (``docs/statistics.md``).

    python scripts/bench_process_floor.py RUN/graphs/0-forward/module.py --processes 8
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from inductor_bench.core.steady import steady_mean  # noqa: E402
from inductor_bench.runner.worker import worker_env  # noqa: E402

WARMUP_CALLS = 5
WINDOWS = 5  # as a breakdown's process takes at most (runner/profile.py)


def child(module: str, seconds: float, out: Path) -> None:
    """Time ``module``'s harness call back to back for ``seconds``; write the times (ms)."""
    from inductor_bench.runner.profile import harness, load_module

    once = harness(load_module(module))
    for _ in range(WARMUP_CALLS):
        once()
    times: list[float] = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        once()
        times.append((time.perf_counter() - t0) * 1e3)
    out.write_text(json.dumps(times))


def windows(series: Sequence[float], count: int, size: int) -> list[list[float]]:
    """``count`` windows of ``size`` calls, spread evenly through the series."""
    if len(series) < size:
        return [list(series)]
    step = max(size, (len(series) - size) // max(1, count - 1))
    return [list(series[i:i + size]) for i in range(0, len(series) - size + 1, step)][:count]


def fastest_part(xs: Sequence[float], share: float) -> float:
    s = sorted(xs)
    k = max(1, round(len(s) * share))
    return statistics.fmean(s[:k])


def estimators(size: int) -> dict[str, Callable[[Sequence[float]], float]]:
    def best(count: int, figure: Callable[[Sequence[float]], float]) -> Callable[[Sequence[float]], float]:
        return lambda series: min(figure(w) for w in windows(series, count, size))

    return {
        "tool (fastest of 5 windows, steady mean)": best(WINDOWS, steady_mean),
        "fastest of 20 windows, steady mean": best(20, steady_mean),
        "fastest 25% of a window": best(WINDOWS, lambda w: fastest_part(w, 0.25)),
        "fastest 10% of a window": best(WINDOWS, lambda w: fastest_part(w, 0.10)),
        "min (one call)": min,
    }


def spread(values: Sequence[float]) -> float:
    return max(values) / min(values) - 1.0


def table(series: list[list[float]], size: int) -> str:
    rows = ["| estimator | per process, ms | spread |", "|---|---|---|"]
    for name, f in estimators(size).items():
        vals = [f(s) for s in series]
        rows.append(f"| {name} | {', '.join(f'{v:.3f}' for v in vals)} | {100 * spread(vals):.1f}% |")
    medians = [statistics.median(s) for s in series]
    rows.append(f"| median of all calls | {', '.join(f'{v:.3f}' for v in medians)} | "
                f"{100 * spread(medians):.1f}% |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("module", help="a compiled module from a run directory (graphs/<id>/module.py)")
    ap.add_argument("--processes", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=6.0, help="timed calls per process")
    ap.add_argument("--iterations", type=int, default=100, help="calls per window")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    opts = ap.parse_args(argv)
    if opts.child:
        child(opts.module, opts.seconds, opts.child)
        return 0
    if not Path(opts.module).is_file():
        print(f"bench_process_floor: {opts.module}: no such file", file=sys.stderr)
        return 2
    series = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(opts.processes):
            out = Path(tmp) / f"{i}.json"
            cmd = [sys.executable, __file__, opts.module, "--seconds", str(opts.seconds), "--child", str(out)]
            p = subprocess.run(cmd, env=worker_env(), capture_output=True, text=True)
            if p.returncode != 0:
                print(f"bench_process_floor: process {i} exited with {p.returncode}: "
                      f"{(p.stderr.strip().splitlines() or ['?'])[-1]}", file=sys.stderr)
                return 2
            series.append(json.loads(out.read_text()))
            print(f"process {i + 1}/{opts.processes}: {len(series[-1])} calls", file=sys.stderr)
    threads = os.environ.get("OMP_NUM_THREADS", "default")
    print(f"{opts.module}: {opts.processes} processes of {opts.seconds:g} s, windows of "
          f"{opts.iterations} calls, OMP_NUM_THREADS={threads}\n")
    print(table(series, opts.iterations))
    return 0


if __name__ == "__main__":
    sys.exit(main())
