"""Times in tables print to the microsecond however long they are, so a sum and its parts add
up as printed; zero reads as the other figures beside it do."""

from __future__ import annotations

import json

import pytest

from inductor_bench.core import stats
from inductor_bench.render import format as fmt

from .test_analyze import run_cli
from .test_hostile_inputs import FIXTURES


def test_milliseconds_keep_three_decimals_above_a_hundred_and_zero_reads_0_000():
    assert [fmt.ms(v) for v in (101.15125, 4894.5, 2.1675, 0.0123, 0.0028, 0.0)] == [
        "101.151", "4894.500", "2.167", "0.012", "0.0028", "0.000"]


def test_a_steps_idle_parts_add_up_to_its_wall_as_printed(capsys):
    """The recorded ns-resolution trace (a real A100 run, tests/fixtures/hta): each step's wall
    is over 100 ms; busy, other steps' work, waiting on CPU, queued and nothing launched, as
    printed, add up to the printed wall within their rounding (half a microsecond each)."""
    trace = FIXTURES / "hta" / "ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
    _, out, _ = run_cli(capsys, str(trace), "--format", "json")
    steps = json.loads(out)["steps"]
    _, text, _ = run_cli(capsys, str(trace))
    for s in steps:
        (d,) = s["devices"]
        parts = [d["busy_ms"], d["other_work_ms"], d["waiting_on_cpu_ms"], d["queued_ms"], d["nothing_launched_ms"]]
        assert s["wall_ms"] > 100
        row = next(line.split() for line in text.splitlines() if line.startswith(s["name"] + " "))
        assert fmt.ms(s["wall_ms"]) in row and all(fmt.ms(p) in row for p in parts)
        assert abs(sum(float(fmt.ms(p)) for p in parts) - float(fmt.ms(s["wall_ms"]))) <= 0.0005 * 6


# ---- a change beside the verdict's minimum --------------------------------------------------


def _paired(base_ms: float, head_ms: float) -> stats.Change:
    """Synthetic: 10 rounds of 3 calls each side, every round the same ratio."""
    return stats.judge_paired([[base_ms] * 3] * 10, [[head_ms] * 3] * 10, min_rel=0.10)


def test_a_speedup_under_the_floor_never_prints_as_reaching_it():
    """1.0973x is under the 10% minimum: within noise, and printed ``1.097x``, not ``1.10x``
    beside "within noise" (seen in a compare headline)."""
    ch = _paired(1.0973, 1.0)
    assert ch.verdict == stats.WITHIN_NOISE and ch.speedup == pytest.approx(1.0973)
    assert fmt.speedup_x(ch) == "1.097x"
    assert fmt.speedup_x(_paired(1.2, 1.0)) == "1.20x"
    slower = _paired(1.0, 1.102)  # 0.9074x: beyond the floor 1 / 1.1 = 0.90909 on this side
    assert slower.verdict == stats.SIGNIFICANT and fmt.speedup_x(slower) == "0.907x"
    assert fmt.speedup_x(_paired(1.0, 1.0985)) == "0.91x"  # 0.9103x: within noise, and reads so


def test_a_change_under_the_floor_never_prints_as_reaching_it():
    ch = _paired(1.0, 1.0996)  # +9.96% against a 10% minimum
    assert ch.verdict == stats.WITHIN_NOISE and fmt.change_pct(ch) == "+9.96%"
    assert fmt.change_pct(_paired(1.0, 1.12)) == "+12.0%"
    faster = _paired(1.0, 0.9092)  # -9.08%; the floor on this side is 1 / 1.1 - 1 = -9.0909%
    assert faster.verdict == stats.WITHIN_NOISE and fmt.change_pct(faster) == "-9.08%"


def test_precise_times_keep_fixed_decimals_below_a_microsecond():
    """A diff's change of half a microsecond read ``-5.00e-04`` and turned its column to text
    (left-aligned); it reads ``-0.0005``, and a change under 50 ns at the nanosecond."""
    assert [fmt.ms_precise(x) for x in (2.5, 0.0123, -0.0005, 0.00003, 0.0)] == [
        "2.500", "0.0123", "-0.0005", "0.000030", "0.000"]
    assert fmt.signed_ms(0.0005) == "+0.0005"


def test_a_negative_zero_reads_as_zero():
    """An event that wrote no dur is read with a negative zero (``core/trace.py`` NO_DUR), so
    that a device event whose time is not known can be told from one that lasted nothing; a
    figure made of such durations printed ``-0.000``."""
    from inductor_bench.core.trace import NO_DUR
    from inductor_bench.render.format import ms, ms_precise

    assert f"{NO_DUR:.3f}" == "-0.000"  # what Python's own formatting gives
    assert ms(NO_DUR) == ms(max(NO_DUR, NO_DUR)) == "0.000" == ms(0.0)
    assert ms_precise(NO_DUR) == "0.000" == ms_precise(0.0)
