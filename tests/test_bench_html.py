"""``scripts/bench_html.py`` run as a user runs it, on a small synthetic breakdown: it renders N
kernels over 6 graphs, and the page sizes it prints are the sizes of the pages rendered here
from the same result. With a browser, every page it opened loaded (no console error, nothing
fetched: the script asserts both) and the timings are read back as numbers; their values
depend on the machine and are not judged."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

from inductor_bench.render.breakdown import render_breakdown

from .conftest import ROOT
from .test_html_browser import FOUND

SCRIPT = ROOT / "scripts" / "bench_html.py"
N = 12


def _script():
    spec = importlib.util.spec_from_file_location("bench_html", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_synthetic_breakdown_has_the_kernels_asked_for():
    result = _script().synthetic(N)
    assert len(result.graphs) == 6 and sum(len(g.kernels) for g in result.graphs) == N
    for g in result.graphs:
        assert abs(sum(g.categories.values()) - g.kernel_ms) < 1e-9
        assert [k.ms for k in g.kernels] == sorted((k.ms for k in g.kernels), reverse=True)


def test_the_printed_page_sizes_are_the_pages_rendered():
    out = subprocess.run([sys.executable, str(SCRIPT), str(N)], capture_output=True, text=True, timeout=600,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if re.match(r"\| \d", line)]
    assert len(rows) == 2, out.stdout  # --top 15 and --top N
    result = _script().synthetic(N)
    for row, top in zip(rows, (15, N), strict=True):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[:2] == [str(N), str(top)]
        size = len(render_breakdown(result, "html", top=top).encode()) / 1024
        assert cells[3] == f"{size:,.0f} KiB"
        timings = cells[4:]
        if isinstance(FOUND, str):
            assert timings == ["-", "-", "-"] and "no browser" in out.stderr
        else:
            assert re.fullmatch(r"\d+ ms", timings[0]) and re.fullmatch(r"\d+ ms", timings[2]), row
