"""``diff`` of two compares where one column's step time stands on the quiet moments of a run
most of whose interleaved rounds were disturbed: no verdict either way (not comparable, the gate
exits 5), nor within noise, as the sweep's gate judges the same pair (hand-built results: the
recorded compare of mlp.py with synthetic rounds).

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

import pytest

from inductor_bench import cli
from inductor_bench.core.compare import CompareResult
from inductor_bench.core.diff import diff_results
from inductor_bench.core.sweep_table import gate
from inductor_bench.core.vocab import Outcome

from .steady_rule import limit_of_repeats

FIXTURE = Path(__file__).parent / "fixtures" / "results" / "cpu_mlp_compare" / "compare.json"
STEADY = [[2.0] * 6 for _ in range(10)]  # the base: 2.0 ms a call in every round


def _stalled(disturbed: int, quiet: float = 1.5) -> list[list[float]]:
    """10 rounds of 6 calls at ``quiet`` ms; in ``disturbed`` of them four calls took 2.6 ms
    (the block's median a stall)."""
    return [[quiet, quiet] + [2.6] * 4 if r < disturbed else [quiet] * 6 for r in range(10)]


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
    same = diff_results(_result(_stalled(4)), _result(_stalled(4)))  # one result against itself: no change
    assert same.sections[0].step.rel_pct == 0.0 and same.status() == Outcome.NO_CHANGE


def test_no_change_on_mostly_disturbed_rounds_is_no_verdict_either():
    """Within noise is a verdict too: 1.500 -> 1.515 ms (+1.0%, under the CPU's 10% floor) on
    the quiet calls of two runs with 7 of 10 rounds stalled is not comparable, both sides named,
    as the sweep's gate says of the same pair (it judged no mode and listed it)."""
    base, head = _result(_stalled(7)), _result(_stalled(7, quiet=1.515))
    d = diff_results(base, head)
    (s,) = d.sections
    assert (s.step.base.ms, s.step.head.ms) == (1.5, 1.515)  # the 32 quiet calls of each
    assert round(s.step.rel_pct, 6) == 1.0 and not s.step.significant
    assert s.step.verdict == Outcome.NOT_COMPARABLE and d.status() == Outcome.NOT_COMPARABLE
    assert [u.describe() for u in s.unmeasured] == [
        f"default: a steady step not measured in {side} (7 of 10 rounds disturbed)" for side in ("base", "head")]
    g = gate({"mlp": base}, {"mlp": head}, 5.0)
    assert g.judged == 0 and not g.regressions
    assert g.unmeasured == ["mlp:default: not comparable: 7 of 10 rounds disturbed in the baseline, "
                            "7 of 10 in this sweep (its own blocks above its steady limit)"]


def test_the_gate_exits_5_on_no_change_of_mostly_disturbed_rounds(tmp_path, capsys):
    for side, quiet in (("base", 1.5), ("head", 1.515)):
        d = json.loads(FIXTURE.read_text())
        d["modes"] = [d["modes"][1]]
        d["modes"][0]["paired_ms"] = _stalled(7, quiet=quiet)
        (tmp_path / side).mkdir()
        (tmp_path / side / "compare.json").write_text(json.dumps(d))
    with pytest.raises(SystemExit) as e:
        cli.main(["diff", str(tmp_path / "base"), str(tmp_path / "head"), "--fail-on-regression", "5"])
    out, err = capsys.readouterr()
    assert e.value.code == 5
    assert out.startswith("NOT COMPARABLE, so the 5% gate fails: default: a steady step not measured in "
                          "base (7 of 10 rounds disturbed); default: a steady step not measured in head "
                          "(7 of 10 rounds disturbed) - no verdict without them\n")
    assert "within noise" not in out.splitlines()[0] and err.count("\n") == 1
