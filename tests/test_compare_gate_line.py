"""compare's --fail-on-regression line gives the row it judged with its figures (the step
time row: base -> head ms as the table prints them), its % as the tables print it
(``change_pct``, diff's gate's formatter) and what the % is of (the step, the real model call;
of interleaved rounds, their ratios' median). It had read ``head:default +10.0%``.
Hand-built results: the recorded CPU compare of models/mlp.py as two model files with head's
default steps scaled (synthetic), and hand-built interleaved rounds (synthetic)."""

from __future__ import annotations

from inductor_bench.commands.compare import _gate
from inductor_bench.core.errors import RegressionFound
from inductor_bench.render.format import ms_precise

from .test_compare import recorded_default, two_files
from .test_compare_disturbed_rounds import _two_models

NEAR_FLOOR = 1.1004  # head's steps against base's: +10.04%, just past the 10% gate (CPU's floor)


def test_a_regression_just_past_the_gate_reads_its_figures_as_the_table_prints_them():
    base = recorded_default()["step_samples_ms"]
    result = two_files({"step_samples_ms": [x * NEAR_FLOOR for x in base]})
    base_ms = sum(base) / len(base)
    err = _gate(result, 10.0)
    assert isinstance(err, RegressionFound)
    assert str(err) == (f"significant step-time regression above 10%: head:default: step time "
                        f"{ms_precise(base_ms)} -> {ms_precise(base_ms * NEAR_FLOOR)} ms: +10.0% of the step "
                        "(the real model call)")


def test_interleaved_rounds_say_their_percent_is_the_median_of_their_ratios():
    """Every round of b is 1.5x a's (1.85 -> 2.775 ms): the median ratio is +50.0%."""
    err = _gate(_two_models(0), 10.0)
    assert str(err) == ("significant step-time regression above 10%: b:default: step time 1.850 -> 2.775 ms: "
                        "+50.0% of the step (the real model call, the median of the interleaved rounds' ratios)")
