"""A sweep's speedup interval beside the verdict's 10% floor gets the decimals its figure gets
there, as compare's own table does (``core.stats.bound_text``): a figure of 1.097x with its
interval's low bound at 1.0965 prints [1.097x-1.22x], never [1.10x-1.22x], an interval that
leaves out the figure printed beside it, in the text, markdown and HTML reports alike.

The sweep is synthetic: one model, its table built from the recorded CPU compare of
models/mlp.py (tests/fixtures/results/cpu_mlp_compare), its default cell's figures set by hand."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inductor_bench.core.rundir import load_compare
from inductor_bench.core.sweep import CellStatus
from inductor_bench.core.sweep_plan import new_sweep
from inductor_bench.core.sweep_table import Figures, build_table
from inductor_bench.render.sweep import render_sweep
from inductor_bench.render.sweep_html import render_sweep_html

FIXTURE = Path(__file__).parent / "fixtures" / "results" / "cpu_mlp_compare" / "compare.json"
SPEEDUP, LOW, HIGH = 1.097, 1.0965, 1.22  # synthetic: just under the 1.10x floor of a 10% minimum


def _table():
    sweep = new_sweep(["/m/mlp.py"], ["mlp"], ["default", "max-autotune"], [], device="cpu", shard=None,
                      executor="local", created="now")
    cell = sweep.cells[0]
    cell.status, cell.run_dir, cell.attempts = CellStatus.DONE, "mlp", 1
    table = build_table(sweep, {"mlp": load_compare(FIXTURE)})
    table.rows["mlp"]["default"] = Figures("mlp", "default", "ok", speedup=SPEEDUP, speedup_ci=(LOW, HIGH),
                                           verdict="within noise", min_rel=0.10)
    return table


@pytest.mark.parametrize("render", [render_sweep, lambda t: render_sweep(t, "markdown"), render_sweep_html])
def test_an_interval_beside_the_floor_holds_the_figure_printed(render):
    out = render(_table())
    assert f"{SPEEDUP}x" in out
    shown = re.findall(r"\[(\d\.\d+)x-(\d\.\d+)x\]", out)
    ours = [(float(lo), float(hi)) for lo, hi in shown if float(hi) == HIGH]
    assert ours and all(lo <= SPEEDUP <= hi for lo, hi in ours), ours
    assert "[1.097x-1.22x]" in out


def test_a_regression_against_the_baseline_prints_its_interval_beside_the_floor():
    """A step-time regression of +10.04% whose interval's low bound is +9.96% (synthetic): the
    gate line prints that bound as +9.96%, as diff does, not +10.0%, which would put the
    whole interval past the 10% floor; the exit line names the change the same way."""
    from inductor_bench.commands.sweep import _gate_failure
    from inductor_bench.core.sweep_table import Gate, Regression
    from inductor_bench.render.doc import new_doc
    from inductor_bench.render.sweep import gate_line

    r = Regression("mlp", "default", rel_pct=10.04, ratio_ci=(1.0996, 1.13), min_rel=0.10, base_ms=2.0,
                   head_ms=2.2008)
    line = gate_line(Gate(threshold_pct=5.0, regressions=[r]), new_doc("text"))
    low, high = re.search(r"\[\+([\d.]+)%\.\.\+([\d.]+)%\]", line).groups()
    assert (float(low), float(high)) == (9.96, 13.0)
    assert "mlp:default +10.0% [+9.96%..+13.0%]" in line
    table = build_table(new_sweep(["/m/mlp.py"], ["mlp"], ["default"], [], device="cpu", shard=None,
                                  executor="local", created="now"), {})
    table.gate = Gate(threshold_pct=5.0, regressions=[r])
    assert str(_gate_failure(table, 5.0)).endswith(
        "regression above 5%: mlp:default: step time 2.000 -> 2.201 ms: +10.0% of the step (the real model call)")
