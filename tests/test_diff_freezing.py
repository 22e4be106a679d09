"""A diff of a run without --freezing against one with it says so: the weights are constants on
one side, so Inductor compiled other code (synthetic results; the case seen diffing timm's
resnet18 inference without and with --freezing, 51.1 -> 16.3 ms, where nothing said why)."""

from __future__ import annotations

from inductor_bench.core.diff import diff_results
from inductor_bench.render.diff import render_diff

from .test_diff import base_result

NOTE = ("freezing differs: base without it, head --freezing (with --freezing the weights are constants: "
        "Inductor compiles other code for them)")


def test_a_diff_across_freezing_says_the_sides_froze_otherwise():
    frozen = base_result()
    frozen.freezing = True
    d = diff_results(base_result(), frozen)
    assert d.warnings == [NOTE]
    assert f"warning: {NOTE}" in render_diff(d)
    assert diff_results(frozen, base_result()).warnings == [
        NOTE.replace("base without it, head --freezing", "base --freezing, head without it")]
    assert diff_results(frozen, frozen).warnings == diff_results(base_result(), base_result()).warnings == []
