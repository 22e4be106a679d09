"""Wall time of `inductor-bench breakdown` against the manual recipe, on the same model.

The manual recipe: compile once with TORCHINDUCTOR_UNIQUE_KERNEL_NAMES=1
TORCHINDUCTOR_BENCHMARK_KERNEL=1 (fresh cache), fish the "Compiled module path" lines out of
stderr, then run `python <module>.py -p` for each module. Both start from a cold, private
Inductor cache. Prints a table (markdown with --markdown).

    python scripts/bench_vs_recipe.py models/mlp.py --train --repeat 2
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

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
        p = subprocess.run(
            [sys.executable, "-c", COMPILE_SNIPPET, str(model), "train" if train else "infer"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        paths = re.findall(r"Compiled module path: (\S+)", p.stderr)
        ok = 0
        for path in paths:
            r = subprocess.run([sys.executable, path, "-p"], env=env, capture_output=True, text=True)
            ok += r.returncode == 0
        return time.perf_counter() - t0, len(paths), ok


def run_tool(model: Path, train: bool) -> tuple[float, int]:
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
        subprocess.run(cmd, capture_output=True, text=True, check=True)
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
    recipe, tool = [], []
    found = profiled = graphs = 0
    for i in range(a.repeat):
        dt, found, profiled = run_recipe(a.model, a.train)
        recipe.append(dt)
        dt, graphs = run_tool(a.model, a.train)
        tool.append(dt)
        print(f"round {i + 1}: recipe {recipe[-1]:.1f} s, inductor-bench {tool[-1]:.1f} s", file=sys.stderr)
    rows = [
        [
            "manual recipe (compile + `python m.py -p` per module)",
            f"{statistics.median(recipe):.1f}",
            f"{found} found, {profiled} profiled",
            "no CPU kernel times (`No device detected`)",
        ],
        [
            "inductor-bench breakdown",
            f"{statistics.median(tool):.1f}",
            f"{graphs} profiled",
            "per-kernel CPU times, categories, busy %",
        ],
    ]
    print(
        tabulate(
            rows,
            headers=["approach", "median wall s", "modules", "what you get"],
            tablefmt="github" if a.markdown else "simple",
        )
    )


if __name__ == "__main__":
    main()
