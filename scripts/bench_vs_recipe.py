"""Wall time of `inductor-bench breakdown` against the manual recipe, on the same model,
cold and warm.

The manual recipe: compile once with TORCHINDUCTOR_UNIQUE_KERNEL_NAMES=1
TORCHINDUCTOR_BENCHMARK_KERNEL=1 (fresh cache), fish the "Compiled module path" lines out of
stderr, then run `python <module>.py -p` for each module; a script (no make_workload) is run
as it is. First the tool's first run on this machine (an empty XDG_CACHE_HOME: it measures the
device's ceilings too, which every later run reads from the cache). Then each round: the recipe
from a cold cache; the tool from a cold private cache that holds the machine's ceilings alone;
the tool again with the same cache (warm: what a user iterating on one model pays). Prints a
table (markdown with --markdown).

    python scripts/bench_vs_recipe.py models/mlp.py --train --repeat 2
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

from inductor_bench.runner.cache import APP  # the tool's cache: $XDG_CACHE_HOME/<APP>
from inductor_bench.runner.roofline import PEAKS_CACHE_DIR as PEAKS_DIR  # the machine's ceilings in it

COMPILE_SNIPPET = """
import runpy, sys, torch
ns = runpy.run_path(sys.argv[1])
model, args = ns["make_workload"](device="cpu")[:2]
cm = torch.compile(model)
out = cm(*args)
if sys.argv[2] == "train":
    out.float().sum().backward()
"""


def run_recipe(model: Path, train: bool) -> tuple[float, int, int]:
    """Returns (seconds, modules found, modules profiled)."""
    with tempfile.TemporaryDirectory(prefix="recipe-") as cache:
        env = {
            **os.environ,
            "TORCHINDUCTOR_UNIQUE_KERNEL_NAMES": "1",
            "TORCHINDUCTOR_BENCHMARK_KERNEL": "1",
            "TORCHINDUCTOR_CACHE_DIR": cache,
        }
        t0 = time.perf_counter()
        script = "def make_workload" not in model.read_text()
        cmd = [sys.executable, str(model)] if script else [
            sys.executable, "-c", COMPILE_SNIPPET, str(model), "train" if train else "infer"]
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
        paths = re.findall(r"Compiled module path: (\S+)", p.stderr)
        ok = 0
        for path in paths:
            r = subprocess.run([sys.executable, path, "-p"], env=env, capture_output=True, text=True)
            ok += r.returncode == 0
        return time.perf_counter() - t0, len(paths), ok


def run_tool(model: Path, train: bool, xdg: str) -> tuple[float, int]:
    """One breakdown with XDG_CACHE_HOME=xdg (empty: cold; used before: warm)."""
    env = {**os.environ, "XDG_CACHE_HOME": xdg}
    with tempfile.TemporaryDirectory(prefix="tool-") as runs:
        t0 = time.perf_counter()
        cmd = [
            sys.executable,
            "-m",
            "inductor_bench.cli",
            "breakdown",
            str(model),
            "--device",
            "cpu",
            "--runs-dir",
            runs,
            "--json",
            str(Path(runs) / "r.json"),
        ] + (["--train"] if train else [])
        subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
        dt = time.perf_counter() - t0
        import json

        graphs = json.loads((Path(runs) / "r.json").read_text())["graphs"]
        return dt, len(graphs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", type=Path)
    ap.add_argument("--train", action="store_true")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    recipe, cold, warm = [], [], []
    found = profiled = graphs = 0
    # The device's ceilings are measured once per machine, on its first run, and read from the
    # tool's cache on every later run, whatever the model: that first run is timed apart, and
    # each round's cold run starts from an empty cache that holds the machine's ceilings alone.
    with tempfile.TemporaryDirectory(prefix="xdg-machine-") as machine:
        first, _ = run_tool(a.model, a.train, machine)
        print(f"the machine's first run (its ceilings measured too): {first:.1f} s", file=sys.stderr)
        peaks = Path(machine) / APP / PEAKS_DIR
        for i in range(a.repeat):
            found, profiled, graphs = _round(a, i, peaks, recipe, cold, warm)
    r = statistics.median(recipe)
    cold_ratio = statistics.median(c / q for c, q in zip(cold, recipe, strict=True))
    warm_ratio = statistics.median(w / q for w, q in zip(warm, recipe, strict=True))
    print(f"median of the per-round ratios: cold {cold_ratio:.2f}x, warm {warm_ratio:.2f}x "
          "the recipe's cold time", file=sys.stderr)
    rows = [
        ["manual recipe (compile + `python m.py -p` per module), cold", f"{r:.1f}", "1.00",
         f"{found} found, {profiled} profiled"],
        ["inductor-bench breakdown, the machine's first run (ceilings measured)", f"{first:.1f}",
         f"{first / r:.2f}", f"{graphs} profiled"],
        ["inductor-bench breakdown, cold (the machine's ceilings cached)", f"{statistics.median(cold):.1f}",
         f"{statistics.median(cold) / r:.2f}", f"{graphs} profiled"],
        ["inductor-bench breakdown, warm (second run)", f"{statistics.median(warm):.1f}",
         f"{statistics.median(warm) / r:.2f}", f"{graphs} profiled"],
    ]
    print(
        tabulate(
            rows,
            headers=["approach", "median wall s", "x recipe (cold)", "modules"],
            tablefmt="github" if a.markdown else "simple",
            disable_numparse=True,  # the figures as written ("1.00", "30.0"), not reformatted
        )
    )


def _round(a: argparse.Namespace, i: int, peaks: Path, recipe: list[float], cold: list[float],
           warm: list[float]) -> tuple[int, int, int]:
    """One round: the recipe, the tool cold (an empty cache but the machine's ceilings) and
    warm; returns (modules found, profiled by the recipe, graphs the tool profiled)."""
    found = profiled = 0
    # The order alternates: on this class of machine a process's speed can drift by tens
    # of percent over a minute, and always running the recipe first would bias every round.
    tool_first = i % 2 == 1
    if not tool_first:
        dt, found, profiled = run_recipe(a.model, a.train)
        recipe.append(dt)
    with tempfile.TemporaryDirectory(prefix="xdg-") as xdg:
        if peaks.is_dir():
            (Path(xdg) / APP).mkdir(mode=0o700)
            shutil.copytree(peaks, Path(xdg) / APP / PEAKS_DIR)
        dt, graphs = run_tool(a.model, a.train, xdg)
        cold.append(dt)
        dt, _ = run_tool(a.model, a.train, xdg)
        warm.append(dt)
    if tool_first:
        dt, found, profiled = run_recipe(a.model, a.train)
        recipe.append(dt)
    print(f"round {i + 1} ({'tool' if tool_first else 'recipe'} first): recipe "
          f"{recipe[-1]:.1f} s, inductor-bench cold {cold[-1]:.1f} s "
          f"({cold[-1] / recipe[-1]:.2f}x), warm {warm[-1]:.1f} s "
          f"({warm[-1] / recipe[-1]:.2f}x)", file=sys.stderr)
    return found, profiled, graphs


if __name__ == "__main__":
    main()
