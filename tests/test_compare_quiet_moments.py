"""A compare column most of whose own interleaved blocks were disturbed: its step time is the
mean of its quiet calls alone (the faster half's limit), so its cell is marked (!) and a warning
says so, and the JSON's summary names it (hand-built results, synthetic rounds).

Seen on this 2-core VM (torch 2.13 CPU, 2026-12-07) beside 1.5 busy cores: ``compare`` of
``models/mlp.py --train`` showed eager at 2.446 ms (72 of 188 calls, 9 of its 10 rounds'
blocks above its limit) beside default's 6.431 ms (181 of 183), unmarked, while every speedup
between them read n/m.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from inductor_bench.core.compare import CompareResult
from inductor_bench.render.compare import render_compare

from .steady_rule import limit_of_repeats

RECORDED = Path(__file__).resolve().parent / "fixtures" / "results" / "cpu_mlp_compare" / "compare.json"


def _stalled(disturbed: int) -> list[list[float]]:
    """10 rounds of 6 calls at 1.5 ms; in ``disturbed`` of them four calls took 2.6 ms."""
    return [[1.5, 1.5] + [2.6] * 4 if r < disturbed else [1.5] * 6 for r in range(10)]


def _result(eager_blocks: list[list[float]]) -> CompareResult:
    cmp = json.loads(RECORDED.read_text())
    eager, default = (next(m for m in cmp["modes"] if m["mode"] == x) for x in ("eager", "default"))
    eager["paired_ms"], default["paired_ms"] = eager_blocks, [[2.0] * 6 for _ in range(10)]
    cmp["modes"] = [eager, default]
    return CompareResult.from_dict(cmp)


def _step_row(text: str) -> list[str]:
    row = next(ln for ln in text.splitlines() if ln.startswith("step time, ms"))
    return row.split("  ")[-1:] + [row]


def test_a_step_time_of_its_quiet_calls_alone_is_marked_and_said():
    xs = [x for blk in _stalled(7) for x in blk]  # the rule written out again: 7 block medians over
    assert sum(statistics.median(b) > limit_of_repeats(xs) for b in _stalled(7)) == 7
    r = _result(_stalled(7))
    text = render_compare(r)
    assert "1.500 ±0.0% (!)" in _step_row(text)[1] and "2.000 ±0.0% (!)" not in text
    assert ("warning: eager: step time (!): 7 of 10 rounds disturbed (its own blocks above its steady limit): "
            "its 1.500 ms is the mean of its quiet calls alone (32 of 60), not of the rounds the other "
            "columns' times are the means of") in text.splitlines()
    assert json.loads(r.to_json())["summary"]["step_quiet_moments"] == {"eager": "7 of 10 rounds disturbed"}


def test_a_step_time_of_mostly_steady_rounds_is_left_as_it_was():
    r = _result(_stalled(4))
    text = render_compare(r)
    assert "(!)" not in _step_row(text)[1] and "step time (!)" not in text
    assert json.loads(r.to_json())["summary"]["step_quiet_moments"] == {}


def test_a_step_time_of_its_quiet_calls_alone_is_no_headline_and_the_headline_says_why():
    r = _result(_stalled(7))  # eager 1.500 ms on its quiet calls alone, default 2.000 ms on all
    head = render_compare(r).splitlines()[0]  # default is the fastest of the ranked columns, not of all
    assert head.startswith("Fastest ranked steady state: default 2.000 ms")
    assert head.endswith("; eager read 1.500 ms on its quiet calls alone (7 of 10 rounds disturbed), not ranked")
    assert json.loads(r.to_json())["summary"]["fastest"] == "default"
    steady = _result(_stalled(4))  # most of eager's rounds steady: its 1.500 ms is the headline
    head = render_compare(steady).splitlines()[0]  # 1.33x over default, too few steady rounds to judge
    assert head == ("Fastest steady state: eager 1.500 ms (1.33x [too few steady rounds for an interval] "
                    "over default (not judged))")
    assert "not ranked" not in head
    assert json.loads(steady.to_json())["summary"]["fastest"] == "eager"


def test_the_step_chart_marks_a_step_time_of_its_quiet_calls_alone_as_the_table_does():
    page = render_compare(_result(_stalled(7)), "html")
    assert ">1.500 ms ±0.0% (!)</text>" in page  # eager's bar, as its cell
    assert ">2.000 ms ±0.0%</text>" in page  # default's, on all of its rounds: unmarked
