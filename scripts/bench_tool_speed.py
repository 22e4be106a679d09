"""Wall time of the tool's own commands, that read what a run saved and should feel instant:
``--help``, ``report RUN``, ``report --reanalyze RUN`` (on a copy of the run: it rewrites the
result), ``diff RUN RUN`` and ``analyze TRACE``; each in a fresh process, ``--repeat`` times,
the median and the range shown. With ``--ref REF`` the same commands run again with the
package as git ``REF`` had it (extracted to a temporary directory, put first on the path),
in alternation with the working tree's so that a neighbour's load falls on both alike.
A process's start and imports (0.3-0.5 s, varying by as much on a shared machine) hide the
analysis's own time, so the analysis of ``report --reanalyze`` is also timed inside one
process (``core.analysis.reanalyze``, the caches of module text emptied before each call).

Bytecode is written to a private cache (``PYTHONPYCACHEPREFIX``), warmed before timing, as a
user's installed package has it: without it every run compiles every module again (0.5 s).

``--run`` is a breakdown's run directory with its graphs' saved profiles, e.g. one written by
``inductor-bench breakdown models/densenet.py --train --device cpu --out /tmp/dn``.

Usage: python scripts/bench_tool_speed.py --run RUN_DIR [--trace TRACE] [--ref REF] [--repeat 5]
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TRACE = ROOT / "tests/fixtures/hta/negative_queue_length_values_check_rank0.json.gz"


def commands(run: Path, trace: Path) -> dict[str, list[str]]:
    """Label -> the command's arguments; ``{copy}`` stands for a fresh copy of ``run``."""
    return {
        "--help": ["--help"],
        "report RUN": ["report", str(run)],
        "report --reanalyze RUN": ["report", "--reanalyze", "{copy}"],
        "diff RUN RUN": ["diff", str(run), str(run)],
        f"analyze {trace.name}": ["analyze", str(trace)],
    }


def extract_ref(ref: str, into: Path) -> Path:
    """The package ``inductor_bench`` as git ``ref`` had it, under ``into``."""
    data = subprocess.run(["git", "archive", ref, "inductor_bench"], cwd=ROOT, check=True,
                          capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into


def timed(args: list[str], env: dict[str, str], run: Path, scratch: Path) -> float:
    """Seconds one fresh process took to run ``inductor-bench ARGS`` (its exit checked)."""
    copy = scratch / "run"
    if "{copy}" in args:
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(run, copy)
    argv = [sys.executable, "-m", "inductor_bench", *(str(copy) if a == "{copy}" else a for a in args)]
    t0 = time.perf_counter()
    r = subprocess.run(argv, env=env, cwd=scratch, capture_output=True, text=True, check=False)
    took = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(args)}: exit {r.returncode}: {r.stderr.strip()[-300:]}")
    return took


IN_PROCESS = """
import statistics, sys, time
from inductor_bench.core import analysis, modparse
took = []
for _ in range(int(sys.argv[2])):
    for name in ("_string_lines",):  # what one call would not find cached in a fresh process
        if hasattr(modparse, name):
            getattr(modparse, name).cache_clear()
    t0 = time.perf_counter()
    analysis.reanalyze(sys.argv[1])
    took.append(time.perf_counter() - t0)
print(statistics.median(took), min(took), max(took))
"""


def reanalysis_in_process(env: dict[str, str], run: Path, scratch: Path, repeat: int) -> list[float]:
    """Median, least and most seconds of ``reanalyze`` on a copy of ``run``, in one process."""
    copy = scratch / "run"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(run, copy)
    r = subprocess.run([sys.executable, "-c", IN_PROCESS, str(copy), str(repeat)], env=env, cwd=scratch,
                       capture_output=True, text=True, check=True)
    return [float(x) for x in r.stdout.split()]


def environments(ref: str | None, scratch: Path) -> dict[str, dict[str, str]]:
    """Label -> the environment a variant runs in: the working tree, and ``ref`` where asked."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = {"now": {**env, "PYTHONPYCACHEPREFIX": str(scratch / "pyc-now")}}
    if ref:
        path = extract_ref(ref, scratch / "ref")
        out[ref] = {**env, "PYTHONPYCACHEPREFIX": str(scratch / "pyc-ref"),
                    "PYTHONPATH": os.pathsep.join([str(path), env.get("PYTHONPATH", "")])}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, required=True, help="a breakdown's run directory")
    ap.add_argument("--trace", type=Path, default=DEFAULT_TRACE, help="a trace for analyze")
    ap.add_argument("--ref", help="git ref to time beside the working tree (e.g. HEAD~1)")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        envs = environments(a.ref, scratch)
        cmds = commands(a.run.resolve(), a.trace.resolve())
        times: dict[tuple[str, str], list[float]] = {}
        for env in envs.values():  # warm: bytecode written, files in the page cache
            timed(["--help"], env, a.run, scratch)
        for _ in range(a.repeat):
            for label, args in cmds.items():
                for variant, env in envs.items():
                    times.setdefault((label, variant), []).append(timed(args, env, a.run, scratch))
        in_process = {v: reanalysis_in_process(env, a.run, scratch, a.repeat) for v, env in envs.items()}
    rows = [[label, *(f"{statistics.median(times[label, v]):.2f} ({min(times[label, v]):.2f}-"
                      f"{max(times[label, v]):.2f})" for v in envs)] for label in cmds]
    rows.append(["reanalyze, in one process",
                 *(f"{m:.3f} ({lo:.3f}-{hi:.3f})" for m, lo, hi in in_process.values())])
    print(f"{os.cpu_count()} cores, median of {a.repeat} (range), seconds")
    print(tabulate(rows, headers=["command", *envs]))


if __name__ == "__main__":
    main()
