"""How long a column of GEMM kernels takes to label (``render/distinct_labels.kernel_labels``).

The names are real: every cuBLAS / cuDNN / CUTLASS kernel name (``sm80_xmma_…``, ``sm90_xmma_…``,
``cutlass…``) in the recorded GPU traces and runs under tests/fixtures (and any trace or
breakdown.json given as an argument). Each set is labelled at the widths a table uses (60: diff,
70: analyze, 80: breakdown and report) and at every width a chart may try (8 to 80), with the
label caches cleared before each measure, so each figure is what one report pays once.

    python scripts/bench_kernel_labels.py
    python scripts/bench_kernel_labels.py ../shared/gpu-traces/hta/*.json.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import time
from pathlib import Path

from inductor_bench.render import distinct_labels, kernel_names, label_slots
from inductor_bench.render.distinct_labels import kernel_labels

ROOT = Path(__file__).resolve().parent.parent
_GEMM = re.compile(r'"name":\s*"((?:[^"\\]|\\.)*?(?:sm80_xmma|sm90_xmma|cutlass)(?:[^"\\]|\\.)*)"')
TABLE_WIDTHS = (60, 70, 80)
CHART_WIDTHS = tuple(range(8, 81))


def gemm_names(paths: list[Path]) -> list[str]:
    """The distinct GEMM-like kernel names in ``paths`` (traces, gzipped or not, breakdown.json)."""
    names: dict[str, None] = {}
    for p in paths:
        text = gzip.decompress(p.read_bytes()).decode() if p.suffix == ".gz" else p.read_text()
        names.update((json.loads(f'"{m}"'), None) for m in _GEMM.findall(text))
    return sorted(n for n in names if not n.startswith("_Z"))  # mangled: not what tables show


def _fixture_files() -> list[Path]:
    fixtures = ROOT / "tests" / "fixtures"
    wanted = ("breakdown.json", "trace.json")
    return sorted(p for p in fixtures.rglob("*") if p.suffix == ".gz" or p.name in wanted)


def _clear_caches() -> None:
    for module in (kernel_names, distinct_labels, label_slots):
        for f in vars(module).values():
            if callable(getattr(f, "cache_clear", None)):
                f.cache_clear()


def seconds(names: list[str], widths: tuple[int, ...]) -> float:
    _clear_caches()
    start = time.perf_counter()
    for w in widths:
        kernel_labels(names, w)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("traces", nargs="*", type=Path, help="more traces or breakdown.json files")
    args = parser.parse_args()
    names = gemm_names(_fixture_files() + args.traces)
    plain = [n for n in names if "<" not in n and "(" not in n]  # sm80_xmma_…: told apart part by part
    sets = {"plain GEMMs": plain, "plain GEMMs, first 15": plain[:15], "all GEMM-like": names}
    print("| names | count | table widths 60/70/80 (s) | chart widths 8-80 (s) |")
    print("|---|---:|---:|---:|")
    for what, ns in sets.items():
        print(f"| {what} | {len(ns)} | {seconds(ns, TABLE_WIDTHS):.3f} | {seconds(ns, CHART_WIDTHS):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
