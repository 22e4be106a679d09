"""`analyze`'s by-shape table on a terminal narrower than it: a GPU trace's table (13 columns,
about 120 characters) fits 80 and 100 columns by leaving out the figures the others are made
from, then the library kernel, each shape shown whole (cut in its middle, ``2048x606x160 @
2048x160x20`` read ``2048x606x16…048x160x20``: other sizes), and its notes explain only the
columns shown; a pipe keeps every column. Checked on two real GPU traces from HTA's test data
(tests/fixtures/hta: an A100's, and one of 166 shapes with batched GEMMs)."""

from __future__ import annotations

import pytest

from inductor_bench.core.analyze import analyze_file
from inductor_bench.render.analyze import render_analyze
from inductor_bench.render.doc import for_terminal

from .conftest import FIXTURES
from .test_table_fit import _columns

A100 = FIXTURES / "hta" / "negative_queue_length_values_check_rank0.json.gz"
BATCHED = FIXTURES / "hta" / "timeline_analysis_sampled_rank-0.json.gz"
LEFT_OUT = "% other work, kernels a call, GFLOP a call, ms a call, library kernel"
# the A100 trace's five GEMMs, the most time first, as its raw events' Input Dims give them
A100_SHAPES = ["64x4096 @ 4096x2798", "4096x64 @ 64x2798", "4096x2798 @ 2798x64", "64x4096 @ 4096x100",
               "4096x100 @ 100x64"]


def _section(text: str) -> tuple[str, str]:
    """The by-shape table (with the line under it naming what it left out) and its notes."""
    at = text.index("by shape: record_shapes")
    blocks = text[at:].split("\n\n")
    return blocks[1], blocks[2]


@pytest.mark.parametrize("width", [80, 100])
@pytest.mark.parametrize("trace", [A100, BATCHED], ids=["a100", "batched"])
def test_the_by_shape_table_fits_a_terminal_its_shapes_whole(trace, width):
    r = analyze_file(trace)
    table, notes = _section(render_analyze(r))
    with for_terminal(width):
        fitted, fitted_notes = _section(render_analyze(r))
    whole = _columns(table)
    assert max(len(ln) for ln in table.splitlines()) > 110  # a pipe keeps its 13 columns
    assert max(len(ln) for ln in fitted.splitlines()) <= width
    cols = _columns(fitted)
    assert list(cols) == ["device", "op", "shapes", "type", "calls", "ms", "TFLOP/s", "% peak"]
    assert cols["shapes"] == whole["shapes"] and not any("…" in s for s in cols["shapes"])
    assert cols["ms"] == whole["ms"] and cols["% peak"] == whole["% peak"]
    assert " ".join(fitted[fitted.index("\n("):].split()).startswith(f"({LEFT_OUT}: left out to fit {width} columns")
    # the notes explain the columns shown: a pipe's explain them all
    for explained in ("% other work: of that time", "kernels a call: the device kernels"):
        assert explained in notes and explained not in " ".join(fitted_notes.split())
    if trace == A100:
        assert cols["shapes"] == A100_SHAPES
    else:
        assert "2048x606x160 @ 2048x160x20" in cols["shapes"]
