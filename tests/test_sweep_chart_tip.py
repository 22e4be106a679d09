"""The sweep page's geomean chart: hovering a mode's bar shows its geomean speedup as the
geomean table prints it (``0.90x``, or ``1.097x`` beside a 10% floor), never the chart unit's
four significant figures (``0.9000 x``). Built from the recorded CPU compare
(tests/fixtures/results/cpu_mlp_compare)."""

from __future__ import annotations

import html
import json
import re

import pytest

from inductor_bench.core.sweep_table import build_table
from inductor_bench.render.sweep import render_sweep
from inductor_bench.render.sweep_html import render_sweep_html

from .test_sweep import FIXTURE, _done, _sweep, _table_with_gate, load_compare_dict

BAR_TIP = re.compile(r'<rect class="b [^"]*"[^>]*><title>([^<]*)</title></rect>')


def _bar_tips(page: str) -> dict[str, str]:
    """Each geomean bar's tooltip by mode: ``mode\\nmode: 0.90x``."""
    tips = {}
    for tip in map(html.unescape, BAR_TIP.findall(page)):
        mode, figure = tip.split("\n")[1].split(": ")
        tips[mode] = figure
    return tips


def _geomean_cells(table) -> dict[str, str]:
    """The text report's geomean table: mode -> its speedup cell."""
    text = render_sweep(table)
    cells = {}
    for mode in table.geomeans:
        (cells[mode],) = re.findall(rf"^{mode} +(\S+x) +\d+/\d+$", text, re.M)
    return cells


def test_a_bars_tooltip_reads_the_geomean_as_the_table_prints_it():
    table = _table_with_gate()
    tips, cells = _bar_tips(render_sweep_html(table)), _geomean_cells(table)
    assert set(tips) == {"default", "max-autotune"} == set(cells)
    for mode, (g, _) in table.geomeans.items():
        assert cells[mode] == f"{g:.2f}x"  # away from the floor: two decimals
        assert tips[mode] == cells[mode]


def test_a_geomean_beside_the_floor_reads_as_many_decimals_on_hover():
    """default timed 1.097 times as fast as eager (a 10% floor): the table prints 1.097x."""
    d = json.loads(FIXTURE.read_text())
    d["modes"][1]["step_samples_ms"] = [x / 1.097 for x in d["modes"][0]["step_samples_ms"]]
    table = build_table(_done(_sweep(models=("/m/mlp.py",)), ["mlp"]), {"mlp": load_compare_dict(d)})
    assert table.geomeans["default"][0] == pytest.approx(1.097, rel=1e-12)
    tips = _bar_tips(render_sweep_html(table))
    assert tips["default"] == "1.097x" == _geomean_cells(table)["default"]
