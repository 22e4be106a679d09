"""``diff`` of two compares where one column's step time stands on the quiet moments of a run
most of whose interleaved rounds were disturbed: no verdict either way (not comparable, the gate
exits 5), as the sweep's gate judges the same pair (hand-built results, synthetic rounds).

Seen on this 2-core VM (torch 2.13 CPU, 2026-12-07) beside 1.8 busy cores: ``models/mlp.py``
with one more GEMM (0.66x, significant, when timed interleaved with it) read
``FASTER: default: step time 21.146 -> 15.803 ms (-25.3% [-36.2%..-12.3%], significant)``
against a compare of ``mlp.py``: the head's figure the mean of its 21 quiet calls, 7 of its 11
rounds' blocks above its steady limit, while ``sweep --baseline`` of the same two runs said
``not comparable: 7 of 11 rounds disturbed in this sweep``.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from inductor_bench.core.compare import CompareResult
from inductor_bench.core.diff import diff_results
from inductor_bench.core.vocab import Outcome

from .steady_rule import limit_of_repeats

FIXTURE = Path(__file__).parent / "fixtures" / "results" / "cpu_mlp_compare" / "compare.json"
STEADY = [[2.0] * 6 for _ in range(10)]  # the base: 2.0 ms a call in every round


def _stalled(disturbed: int) -> list[list[float]]:
    """10 rounds of 6 calls at 1.5 ms; in ``disturbed`` of them four calls took 2.6 ms (the
    block's median a stall)."""
    return [[1.5, 1.5] + [2.6] * 4 if r < disturbed else [1.5] * 6 for r in range(10)]


def _result(blocks: list[list[float]]) -> CompareResult:
    d = json.loads(FIXTURE.read_text())
    d["modes"] = [d["modes"][1]]  # default alone
    d["modes"][0]["paired_ms"] = blocks
    return CompareResult.from_dict(d)


def test_the_rule_written_out_again_leaves_the_quiet_calls_alone():
    xs = [x for blk in _stalled(7) for x in blk]
    lim = limit_of_repeats(xs)
    assert 1.5 < lim < 2.6 and sum(statistics.median(b) > lim for b in _stalled(7)) == 7
    assert statistics.mean([x for x in xs if x <= lim]) == 1.5  # 32 of 60 calls: -25% on the base


def test_a_step_on_mostly_disturbed_rounds_gets_no_verdict_either_way():
    for base, head, side in ((STEADY, _stalled(7), "head"), (_stalled(7), STEADY, "base")):
        d = diff_results(_result(base), _result(head))
        (s,) = d.sections
        assert s.step.verdict == Outcome.NOT_COMPARABLE and d.status() == Outcome.NOT_COMPARABLE
        (u,) = s.unmeasured
        assert u.describe() == f"default: a steady step not measured in {side} (7 of 10 rounds disturbed)"


def test_a_step_on_mostly_steady_rounds_keeps_its_verdict():
    d = diff_results(_result(STEADY), _result(_stalled(4)))
    (s,) = d.sections
    assert s.step.faster and s.step.rel_pct == -25.0 and not s.unmeasured and d.status() == Outcome.FASTER
    same = diff_results(_result(_stalled(7)), _result(_stalled(7)))  # one result against itself: no change
    assert same.sections[0].step.rel_pct == 0.0 and same.status() == Outcome.NO_CHANGE
