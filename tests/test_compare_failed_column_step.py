"""A column that did not run whole (its profiling worker killed: failed) had its compile
worker's step time in the table's step row, beside the columns timed interleaved in another
process, with no note saying where it came from, while its samples and speedups read `-`, the
HTML chart drew no bar for it and `--format json` gave it no `step_ms`: the text and the JSON
disagreed. Its step cell now reads `-` as the rest of its column does.

The result is the recorded CPU compare of models/mlp.py --train (tests/fixtures/results/
cpu_mlp_compare; torch 2.13 CPU), its max-autotune column made failed by hand (synthetic) in
the shape the pipeline leaves (graph 0-backward's profiling worker killed, its breakdown
partial)."""

from __future__ import annotations

import json

from inductor_bench.core.compare import CompareResult
from inductor_bench.core.compare_summary import summary
from inductor_bench.render.compare import render_compare

from .test_compare import KILLED, RECORDED, lost_backward

STEP_ROW = "step time, ms (steady mean ± spread)"


def _failed_max_autotune() -> CompareResult:
    data = json.loads(RECORDED.read_text())
    for m in data["modes"]:
        if m["mode"] == "max-autotune":
            m.update(status="failed", reason=f"graph 0-backward: {KILLED}",
                     breakdown=lost_backward(m["breakdown"], "failed"))
    return CompareResult.from_dict(data)


def _step_cells(text: str) -> list[str]:
    row = next(line for line in text.splitlines() if line.startswith(STEP_ROW))
    return row[len(STEP_ROW):].split()


def test_a_failed_column_has_no_step_time_in_the_table_nor_in_the_json():
    r = _failed_max_autotune()
    # the recorded steps: eager 2.813 ms ±1.9%, default 3.125 ms ±3.2% (its golden report);
    # max-autotune's own worker read 4.478 ms, which the table showed though the column failed
    assert _step_cells(render_compare(r, "text")) == ["2.813", "±1.9%", "3.125", "±3.2%", "-", "-"]
    md_row = next(line for line in render_compare(r, "markdown").splitlines() if STEP_ROW in line)
    assert [c.strip() for c in md_row.strip("|").split("|")][1:] == ["2.813 ±1.9%", "3.125 ±3.2%", "-", "-"]
    steps = summary(r)["step_ms"]
    assert sorted(steps) == ["default", "eager"]
    assert (round(steps["eager"]["ms"], 3), round(steps["default"]["ms"], 3)) == (2.813, 3.125)
