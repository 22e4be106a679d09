"""The note under a compare's table states the significance floor as the rule applies it: a
speedup above 1 + min_rel or below 1 / (1 + min_rel), strictly, not "at least 10%" (a speedup
of 0.905x, 10.5% more time or 9.5% less speed, is beyond the CPU's floor). Synthetic results."""

from __future__ import annotations

import pytest

from inductor_bench.core.compare import CompareResult, ModeResult
from inductor_bench.core.stats import beyond
from inductor_bench.core.vocab import Stop
from inductor_bench.render.compare import beyond_floor_words, render_compare

CPU_FLOOR = "above 1.10x or below 1/1.1 = 0.909x"
PAIRED = (
    "a speedup is the median of the rounds' ratios with its 95% interval, significant when the "
    f"interval excludes 1.00x and the speedup is {CPU_FLOOR}"
)
UNPAIRED = f"speedups show their 95% interval [low-high] and are significant when {CPU_FLOOR} and the two"


def test_the_words_name_both_bounds_of_the_rule():
    assert beyond_floor_words(0.10) == CPU_FLOOR
    assert beyond_floor_words(0.05) == "above 1.05x or below 1/1.05 = 0.952x"
    # the rule they describe: strict, and symmetric on the speedup
    assert not beyond(1.10, 0.10) and beyond(1.1001, 0.10)
    assert beyond(0.905, 0.10) and not beyond(0.91, 0.10)
    assert f"{1 / 1.1:.3f}" == "0.909"


def _result(paired: bool) -> CompareResult:
    eager, default = [1.0, 1.02, 0.98, 1.01, 0.99], [0.8, 0.82, 0.78, 0.81, 0.79]
    if paired:
        modes = [ModeResult(mode="eager", compile_s=0.0, paired_ms=[eager] * 10),
                 ModeResult(mode="default", compile_s=1.0, paired_ms=[default] * 10)]
        inter = {"rounds": 10, "block_steps": [5, 5], "load": None, "stopped": {"eager": Stop.TIME_BUDGET}}
    else:
        modes = [ModeResult(mode="eager", compile_s=0.0, step_samples_ms=eager * 4),
                 ModeResult(mode="default", compile_s=1.0, step_samples_ms=default * 4)]
        inter = None
    return CompareResult(model="mlp", device="cpu", device_name="Test CPU", interleaved=inter, modes=modes)


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
@pytest.mark.parametrize(("paired", "sentence"), [(True, PAIRED), (False, UNPAIRED)])
def test_the_note_states_the_floor_exactly_in_every_format(fmt, paired, sentence):
    out = render_compare(_result(paired), fmt).replace("&#x27;", "'").replace("&#39;", "'")
    assert " ".join(out.split()).count(sentence) == 1
    assert "at least 10%" not in out
