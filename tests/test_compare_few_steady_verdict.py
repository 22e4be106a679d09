"""A speedup over interleaved rounds with enough of them disturbed to set its interval's bounds
(``few_steady``: "too few steady rounds for an interval") has a figure but no verdict: it reads
``not judged`` in compare's text, markdown and JSON (and in the sweep:
test_sweep_interval_steady), and two model files so judged give the merge gate no verdict (exit
5), not a regression. It had read ``0.67x [too few steady rounds for an interval] (significant)``
and failed the gate as a regression with no interval behind it. Hand-built rounds (synthetic)."""

from __future__ import annotations

import json

from inductor_bench.commands.compare import _gate
from inductor_bench.core.compare_gate import regressions
from inductor_bench.core.errors import NotComparable
from inductor_bench.core.result_json import result_json
from inductor_bench.render.compare import gate_line, render_compare
from inductor_bench.render.doc import new_doc

from .test_compare_disturbed_rounds import _two_models

FEW = "too few steady rounds for an interval"
# 10 rounds, the interval's ranks the 2nd and the 9th: two of b's blocks stalled set its upper bound
STALLED = 2


def _speedup_row(text: str) -> str:
    return next(line for line in text.splitlines() if "speedup vs a" in line)


def test_a_speedup_without_an_interval_reads_not_judged_in_text_markdown_and_json():
    result = _two_models(STALLED)
    assert _speedup_row(render_compare(result)).endswith(f"0.67x [{FEW}] (not judged)")  # 1.85 / 2.775 ms
    assert _speedup_row(render_compare(result, "markdown")).rstrip(" |").endswith(f"0.67x [{FEW}] (not judged)")
    pair = next(s for s in json.loads(result_json(result))["summary"]["speedups"] if s["column"] == "b:default")
    assert (pair["verdict"], pair["interval"], pair["no_interval"]) == ("not judged", None, FEW)


def test_the_merge_gate_gives_no_verdict_on_a_pair_without_an_interval():
    steady, result = _two_models(0), _two_models(STALLED)
    assert [m.label for _, m, _ in regressions(steady, 10.0)] == ["b:default"]  # every round 1.5x
    assert regressions(result, 10.0) == []
    line = gate_line(result, 10.0, new_doc("text"))
    assert line == (f"NOT COMPARABLE, so the 10% gate fails: b:default: a steady step not measured in a and b "
                    f"({FEW}) - no verdict without them")
    err = _gate(result, 10.0)
    assert isinstance(err, NotComparable) and FEW in str(err)
