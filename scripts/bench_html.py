"""How big the HTML report of a large breakdown is, and how fast it opens (docs/html.md).

Builds a synthetic CUDA-shaped breakdown of N kernels (6 graphs; Triton and library kernels in
every category, each Triton kernel with its file, origin ops and 100 samples), renders it as
HTML with the default ``--top 15`` and with every kernel in the tables (``--top N``), and opens
each page in headless Chromium (as ``tests/test_html_browser.py`` does) 5 times: the page's own
navigation timing to the end of its load event, first contentful paint, and ``driver.get``'s
wall time. Not a test: the figures depend on the machine.

Usage: ``python scripts/bench_html.py [N ...]`` (default: 150 1000) from the repository root.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from inductor_bench.core.categories import CATEGORIES  # noqa: E402
from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat  # noqa: E402
from inductor_bench.render.breakdown import render_breakdown  # noqa: E402
from tests.test_html_browser import Browser, find_browser  # noqa: E402

GRAPHS = 6
LOADS = 5
ACCELERATOR = "cuda"  # a CUDA-shaped result: every category, kernel files


def synthetic(n: int, seed: int = 0) -> BreakdownResult:
    rng = random.Random(seed)
    cats = [c for c in CATEGORIES if not c.startswith("cpp_")]
    graphs = []
    for gi in range(GRAPHS):
        gid = f"{gi // 2}-{'forward' if gi % 2 == 0 else 'backward'}"
        kernels = []
        for ki in range(gi, n, GRAPHS):
            cat = cats[ki % len(cats)]
            ms = 2.0 * rng.paretovariate(1.2) / (ki + 1)
            triton = cat.startswith("triton_")
            name = (
                f"triton_{cat[7:10]}_fused_add_mul_native_layer_norm_{ki}"
                if triton
                else f"void at::native::elementwise_kernel<128, 4, {ki}>(int, ...)"
            )
            kernels.append(
                KernelStat(
                    name=name,
                    category=cat,
                    calls=1 + ki % 3,
                    ms=ms,
                    samples_ms=[ms * rng.uniform(0.95, 1.1) for _ in range(100)],
                    aten_ops=["aten.add", "aten.mul", "aten.native_layer_norm"][: 1 + ki % 3],
                    file=f"graphs/{gid}/kernels/{name}.py" if triton else None,
                )
            )
        kernels.sort(key=lambda k: -k.ms)
        cat_ms: dict[str, float] = {}
        for k in kernels:
            cat_ms[k.category] = cat_ms.get(k.category, 0.0) + k.ms
        kernel_ms = sum(cat_ms.values())
        graphs.append(
            GraphResult(
                id=gid,
                role="forward" if gi % 2 == 0 else "backward",
                device=ACCELERATOR,
                module=f"graphs/{gid}/module.py",
                trace=f"graphs/{gid}/trace.json.gz",
                iterations=100,
                wall_ms=kernel_ms * 1.25,
                busy_ms=kernel_ms * 0.95,
                kernel_ms=kernel_ms,
                categories=cat_ms,
                kernels=kernels,
            )
        )
    return BreakdownResult(
        model=f"synthetic{n}",
        device=ACCELERATOR,
        device_name="synthetic GPU",
        run_dir="runs/synthetic",
        graphs=graphs,
        iterations=100,
    )


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sizes", nargs="*", type=int, default=[150, 1000], metavar="N",
                    help="kernels in each synthetic breakdown (default: 150 1000)")
    sizes = ap.parse_args(argv).sizes
    found = find_browser()
    browser = None if isinstance(found, str) else Browser(*found)
    if browser is None:
        print(f"no browser ({found}): sizes only", file=sys.stderr)
    print(
        "| kernels | --top | render (Python) | page | load event (median of 5) | first paint | driver.get |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for n in sizes:
                result = synthetic(n)
                for top in (15, n):
                    t = time.perf_counter()
                    page = render_breakdown(result, "html", top=top)
                    render_s = time.perf_counter() - t
                    path = Path(tmp) / f"b{n}-{top}.html"
                    path.write_text(page)
                    size = f"{path.stat().st_size / 1024:,.0f} KiB"
                    row = f"| {n} | {top} | {1e3 * render_s:.0f} ms | {size} |"
                    if browser is None:
                        print(row + " - | - | - |")
                        continue
                    loads, paints, gets = [], [], []
                    for _ in range(LOADS):
                        load = browser.open(path)
                        assert not load.errors and load.requests == [load.url], load
                        loads.append(load.load_ms)
                        gets.append(load.seconds * 1e3)
                        paints.append(
                            browser.driver.execute_script(
                                "var p = performance.getEntriesByName('first-contentful-paint')[0];"
                                "return p ? p.startTime : -1;"
                            )
                        )
                    painted = [p for p in paints if p >= 0]  # -1: the browser reported no paint entry
                    paint = f"{statistics.median(painted):.0f} ms" if painted else "-"
                    load_ms, get_ms = statistics.median(loads), statistics.median(gets)
                    print(row + f" {load_ms:.0f} ms | {paint} | {get_ms:.0f} ms |")
    finally:
        if browser is not None:
            browser.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
