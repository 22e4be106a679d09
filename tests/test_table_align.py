"""Tables right-align the columns that hold numbers, whether or not their renderer names an
alignment; a kernel served from a cache carries its own mark in the % peak column.
Synthetic cells."""

from __future__ import annotations

from inductor_bench.core.ceilings import LATENCY, KernelRoof
from inductor_bench.render.doc import new_doc
from inductor_bench.render.roofline_marks import pct_mark
from inductor_bench.render.table_align import numeric_align


def test_columns_of_numbers_are_right_aligned_others_left():
    rows = [["aten::mm #2", "1", "0.208", "32.3%", "~41%", "fc2 · mlp.py:21", "64x512, 512x512", "±0.7%"],
            ["cpp_fused_sum_2", "12", "0.0028", "0.4%", "^143%", "fc1 · mlp.py:20", "", "-"],
            ["aten::mm #0", "1", "0.823", "7.8%", "!160%", "fc2 · mlp.py:21", "", "-"],
            ["aten::mm", "2", "0.090", "1.1%", "^200%, ~25%", "fc2 · mlp.py:21", "", "-"]]
    assert numeric_align(rows, 8) == ("left", "right", "right", "right", "right", "left", "left", "right")
    assert numeric_align([["a", "b"]], 2) is None  # nothing numeric: tabulate's default
    assert numeric_align([["-", "x"]], 2) is None  # a column of dashes alone is no number column


def test_a_table_without_an_alignment_right_aligns_its_numbers():
    doc = new_doc("text")
    doc.table([["a", "1", "0.5"], ["bbbb", "100", "12.25"]], ["kernel", "calls", "ms"])
    lines = doc.render().splitlines()
    assert lines == ["kernel      calls     ms",
                     "--------  -------  -----",
                     "a               1    0.5",
                     "bbbb          100  12.25"]


def test_the_percent_of_peak_marks_latency_bound_and_in_cache_kernels():
    def roof(bound: str, pct: float) -> KernelRoof:
        return KernelRoof(gbps=None, tflops=None, intensity=None, pct=pct, bound=bound)

    assert pct_mark(roof(LATENCY, 43.0)) == "~"
    assert pct_mark(roof("memory", 521.0)) == "^"
    assert pct_mark(roof("memory", 80.0)) == ""
    assert pct_mark(roof("compute", 120.0)) == "!"  # above the compute ceiling: measured low
    assert pct_mark(roof("compute", 104.0)) == "!"  # over the ceiling, though measured again only past 105%
    assert pct_mark(roof("compute", 100.0)) == ""


def test_a_markdown_table_names_its_alignment_in_the_delimiter_row():
    # GFM reads a delimiter cell ending in ':' as right-aligned and one starting with ':' as left:
    # without the colons GitHub renders every column, numbers included, left-aligned.
    doc = new_doc("markdown")
    doc.table([["a", "1", "0.5"], ["bbbb", "100", "12.25"]], ["kernel", "calls", "ms"])
    delimiter = doc.render().splitlines()[1]
    cells = [c.strip() for c in delimiter.strip("|").split("|")]
    assert [(c.startswith(":"), c.endswith(":")) for c in cells] == [(True, False), (False, True), (False, True)]
