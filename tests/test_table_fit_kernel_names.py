"""A view too wide for its terminal loses its % peak's words (``68.1% (over 41% of kernel time)``
reads ``68.1%``) before its kernel column, where that makes it fit. The recorded fft run (torch 2.13
CPU, 2026-12-07, ``breakdown models/fftnet.py``): its module view at 120 columns left out the
kernel names and kept the words."""

from __future__ import annotations

import re
from pathlib import Path

from inductor_bench.commands.output import render_result
from inductor_bench.core.rundir import load_any
from inductor_bench.render.doc import for_terminal
from inductor_bench.render.table_fit import fitted
from inductor_bench.render.views import VIEW_OPTIONAL

RUN = Path(__file__).parent / "fixtures" / "runs" / "cpu_fft_inference"


def _module_view(width: int | None) -> str:
    loaded = load_any(RUN)
    result = loaded[0] if isinstance(loaded, tuple) else loaded
    if width is None:
        return render_result(result, by="module").split("Time by module")[1].split("\n\n")[1]
    with for_terminal(width):
        return render_result(result, by="module").split("Time by module")[1].split("\n\n")[1]


def test_a_view_at_120_columns_keeps_its_kernel_names_and_loses_the_percent_words():
    whole, shown = _module_view(None), _module_view(120)
    assert "68.1% (over 41% of kernel time)" in whole and max(map(len, whole.splitlines())) > 120
    assert max(map(len, shown.splitlines())) <= 120
    assert "aten::mm" in shown and "cpp_fused_mm_select_t_view_1" in shown
    assert "left out to fit 120 columns; a file, a pipe or --format markdown has every column" not in shown
    total = next(ln for ln in shown.splitlines() if ln.startswith("total "))
    assert re.split(r"\s{2,}", total.strip()) == ["total", "4.089", "100.0%", "12", "68.1%"]
    assert ("(over 41% of kernel time): left out to fit 120 columns; a file, a pipe or --format markdown "
            "has them") in shown


def test_a_column_still_goes_where_the_words_alone_do_not_make_the_table_fit():
    """Synthetic: two figures' words of 22 characters, a kernel column of 40: at 50 columns the
    words left out are not enough, and the kernel column goes, as before."""
    rows = [["1", "3.3% (over 22% of kernel time)", "k" * 40], ["2", "5.0%", "j" * 40]]
    headers, align = ["#", "% peak", "kernel"], ("right", "right", "left")

    def draw(rs, hs, al):
        return "\n".join("  ".join(c.rjust(8) for c in r) for r in [hs, *rs])

    out, gone = fitted(rows, headers, align, 50, VIEW_OPTIONAL, draw)
    assert gone == ("kernel",)
    out, gone = fitted(rows, headers, align, 70, VIEW_OPTIONAL, draw)
    table = out.split("\n(")[0]
    assert gone == () and "k" * 40 in table and "(over 22%" not in table and "3.3%" in table
