"""A diff of two compares whose column profiled a dynamic-shape graph at other sizes says so
after the column's label, as a diff of two breakdowns says it of the graph (synthetic results)."""

from __future__ import annotations

from inductor_bench.core.compare import CompareResult, ModeResult
from inductor_bench.core.diff import diff_results

from .test_diff import base_result

STEP = [4.0, 4.1, 3.9, 4.0, 4.05, 3.95, 4.0, 4.1, 3.9, 4.0, 4.0, 4.02]
WHY = " (dynamic shapes: the sizes most of its calls ran at, or its module's size hints)"


def _compare(sizes: dict[str, int], other: str = "default") -> CompareResult:
    """Columns default and ``other``; default's forward graph profiled at ``sizes``."""
    modes = []
    for mode in ("default", other):
        bd = base_result()
        bd.graphs[0].sizes = dict(sizes) if mode == "default" else {}
        modes.append(ModeResult(mode=mode, compile_s=1.0, step_samples_ms=list(STEP), breakdown=bd))
    return CompareResult(model="mlp", device="cpu", device_name="Test CPU (2 cores)",
                         versions={"torch": "2.13.0"}, modes=modes[:1] if other == "default" else modes)


def test_a_column_profiled_at_other_sizes_is_named():
    base, head = _compare({"s0": 24}, "max-autotune"), _compare({"s77": 40}, "max-autotune")
    g = base.modes[0].breakdown.graphs[0].id
    assert diff_results(base, head).warnings == [
        f"default: {g} was profiled at other sizes: base s0=24, head s77=40{WHY}"]


def test_the_same_sizes_or_a_column_on_one_side_only_say_nothing():
    assert diff_results(_compare({"s0": 24}), _compare({"s77": 24})).warnings == []
    # max-autotune only in head: its graphs have nothing to be held against
    assert [w for w in diff_results(_compare({}), _compare({}, "max-autotune")).warnings if "sizes" in w] == []
