"""Rendering of source attribution: terminal tables fit the width (long names cut in the middle,
full in markdown), the script header tells what the script ran, and ``report`` shows the views
of a saved run with torch unimportable."""

from __future__ import annotations

import subprocess
import sys

import pytest

from inductor_bench.core.results import BreakdownResult, GraphResult
from inductor_bench.core.rundir import load_any
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.render.doc import middle, new_doc

from .conftest import FIXTURES, ROOT
from .no_torch import CLI_WITHOUT_TORCH

ATTR = FIXTURES / "results" / "attr_net_train"
LONG = "cpp_fused_convolution_backward_native_batch_norm_backward_threshold_backward_1"


def test_middle_keeps_both_ends():
    assert middle(LONG, 21) == "cpp_fused_…backward_1"
    assert len(middle(LONG, 21)) == 21
    assert middle("short", 21) == "short"


@pytest.mark.parametrize("width", [70, 100, 140])
def test_text_tables_fit_the_terminal(width):
    r = load_any(ATTR)
    out = render_breakdown(r, width=width)
    tables = [ln for ln in out.splitlines() if "  " in ln and not ln.startswith(("busy", "max gain", "A kernel"))]
    # every table row fits; the kernel tables keep at least 20 characters of each name
    assert max(len(ln) for ln in tables if ln.startswith(("  ", "-", "#", "aten", "cpp", "kernel"))) <= max(width, 100)
    wide = render_breakdown(r)
    assert LONG in wide and (LONG not in out if width < 140 else True)


def test_text_fit_on_a_wide_table_exactly():
    doc = new_doc("text", 60)
    doc.table([[LONG, "2", "0.0064", "blocks.0, blocks.0.bn +4 · attr_net.py:16,17"]], ["kernel", "calls", "ms", "source"])
    lines = doc.render().splitlines()
    assert max(len(ln) for ln in lines) <= 60
    assert lines[2].startswith("cpp_fused_") and "…" in lines[2]


def test_markdown_keeps_full_names():
    r = load_any(ATTR)
    assert LONG in render_breakdown(r, "markdown", width=60)


def _script(train: bool, roles: list[str]) -> BreakdownResult:
    gs = [GraphResult(id=f"0-{role}", role=role, iterations=1, wall_ms=1.0) for role in roles]
    return BreakdownResult(model="s", script=True, train=train, graphs=gs)


@pytest.mark.parametrize(
    "train,roles,what",
    [
        (True, ["forward"], "inference"),  # --train, but the script ran no backward
        (False, ["forward", "backward"], "training step (forward + backward)"),  # it trained itself
    ],
)
def test_script_header_says_what_the_script_ran(train, roles, what):
    lines = render_breakdown(_script(train, roles)).splitlines()
    assert lines[3] == "ran as a script: every graph it compiled"
    assert lines[4].startswith(f"{what} ·")


def test_factory_header_follows_train():
    r = BreakdownResult(model="m", train=True)
    assert "training step" in render_breakdown(r).splitlines()[3]


@pytest.mark.parametrize("by,heading", [("line", "Time by source line (all graphs): "),
                                        ("module", "Time by module at depth 2 (all graphs): ")])
def test_report_shows_the_views_without_torch(by, heading):
    argv = ["report", str(ATTR), "--by", by] + (["--module-depth", "2"] if by == "module" else [])
    p = subprocess.run([sys.executable, "-c", CLI_WITHOUT_TORCH, *argv], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert heading in p.stdout
    assert ("blocks.1" if by == "module" else "attr_net.py:16    y = self.conv1(x)") in p.stdout


def test_a_graph_the_step_never_called_has_no_line_or_module_in_the_views():
    """A script's graph compiled and then left for a recompile's is called 0 times per step:
    its kernels are no time of any line or module (they were listed at 0.0000 ms, beside the
    line whose time the recompiled graph's kernels hold). Here the recorded training run's
    backward is made such a graph: the views keep only the forward's rows."""
    r = load_any(FIXTURES / "results" / "attr_net_train" / "breakdown.json")
    r.graphs[0].calls, r.graphs[1].calls = 1.0, 0.0
    assert r.weights() == {"0-forward": 1.0, "0-backward": 0.0}
    for by in ("line", "module"):
        view = render_breakdown(r, by=by).split(f"Time by {'source line' if by == 'line' else 'module'}")[1]
        table = view.split("\n\n")[1]
        assert table.splitlines()[0].split()[:7] == ["#", "ms", "%", "kernel", "kernels", "kernel",
                                                    "line" if by == "line" else "module"], by  # no fwd/bwd: one role ran
        assert "0.0000" not in table
