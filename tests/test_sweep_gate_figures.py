"""sweep's --fail-on-regression line gives each regressed row with its figures (the step time
row of diff of the two compares: base -> head ms as diff prints them), its % as the tables
print it and what the % is of (the step, the real model call), through the formatter diff's
and compare's gate lines share. It had read ``mlp2:max-autotune +50.0%``: a % without the
figures it came from nor what it is of. Hand-built sweep results: the recorded CPU compare of
models/mlp.py (tests/fixtures/results/cpu_mlp_compare), its max-autotune steps scaled
(synthetic)."""

from __future__ import annotations

import json

from inductor_bench.commands.sweep import _gate_failure
from inductor_bench.core.errors import RegressionFound
from inductor_bench.core.sweep_table import Gate, Regression

from .test_sweep import FIXTURE, _table_with_gate


def _max_autotune_mean_ms() -> float:
    steps = json.loads(FIXTURE.read_text())["modes"][2]["step_samples_ms"]
    return sum(steps) / len(steps)


def test_the_gate_line_gives_the_rows_figures_and_what_its_percent_is_of():
    """mlp2's max-autotune steps 1.5x the baseline's: 4.478 -> 6.716 ms, +50.0% of the step."""
    base_ms = _max_autotune_mean_ms()
    err = _gate_failure(_table_with_gate(), 10.0)
    assert isinstance(err, RegressionFound)
    assert f"{base_ms:.3f} -> {base_ms * 1.5:.3f}" == "4.478 -> 6.716"
    assert str(err) == ("significant step-time regression above 10%: mlp2:max-autotune: step time 4.478 -> "
                        "6.716 ms: +50.0% of the step (the real model call)")


def test_each_regression_is_one_clause_and_a_change_beside_the_floor_keeps_its_decimals():
    """Two regressions (synthetic): one at +9.97% beside a 10% floor reads +9.97%, not +10.0%;
    the clauses are split by ';', as compare's gate line splits them."""
    table = _table_with_gate()
    table.gate = Gate(threshold_pct=5.0, regressions=[
        Regression("mlp", "default", rel_pct=9.97, ratio_ci=(1.06, 1.14), min_rel=0.10, base_ms=2.0, head_ms=2.1994),
        Regression("mlp2", "default", rel_pct=25.0, ratio_ci=(1.2, 1.3), min_rel=0.10, base_ms=4.0, head_ms=5.0),
    ])
    assert str(_gate_failure(table, 5.0)) == (
        "significant step-time regression above 5%: "
        "mlp:default: step time 2.000 -> 2.199 ms: +9.97% of the step (the real model call); "
        "mlp2:default: step time 4.000 -> 5.000 ms: +25.0% of the step (the real model call)")
