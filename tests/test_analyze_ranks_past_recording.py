"""Several ranks, one rank's step ending past its profiler's recorded span: its figures stop
at the recording (as one trace's do, tests/test_analyze_past_recording.py) and the steps and
straggler tables, in every format, say which rank's step was cut and by how much; its JSON
has ``past_recording_ms``. Synthetic traces with exact numbers; and one process's profiler
cycles, each analysed alone, say it of their own cycle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inductor_bench.cli import main
from inductor_bench.core.analyze_ranks import analyze_ranks
from inductor_bench.core.trace_sets import analyze_cycles
from inductor_bench.render.analyze_cycles import render_cycles
from inductor_bench.render.ranks import render_ranks

LINE = ("Rank 1's ProfilerStep#2 ran 499.0 ms past the end of the profiler's recording: wall, busy and "
        "idle count only what was recorded")
STRAGGLER_LINE = ("Rank 1's ProfilerStep#2 ran 499.0 ms past the end of the profiler's recording: wall, "
                  "excess and its split count only what was recorded")


def _x(name: str, cat: str, ts: float, dur: float, **args) -> dict:
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": 1, "tid": 1, "args": args}


def _rank(path: Path, rank: int, step2_end: float, head: dict | None = None, recorded: float = 1000) -> Path:
    """Synthetic rank: the profiler recorded 0..``recorded`` µs; step 1 is 100..300, its kernel
    200..250 (issued at 150); step 2 is 300..``step2_end``, its kernel 400..600 (issued at 310)."""
    events = [_x("ProfilerStep#1", "user_annotation", 100, 200),
              _x("ProfilerStep#2", "user_annotation", 300, step2_end - 300),
              {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "ts": 0, "dur": recorded,
               "pid": "Spans", "tid": "PyTorch Profiler"}]
    for corr, (issue, start, dur) in enumerate(((150, 200, 50), (310, 400, 200)), 1):
        events += [_x("cudaLaunchKernel", "cuda_runtime", issue, 5, correlation=corr),
                   {**_x(f"triton_poi_{corr}", "kernel", start, dur, correlation=corr), "pid": 0, "tid": 7}]
    head = head if head is not None else {"distributedInfo": {"rank": rank, "world_size": 2}}
    path.write_text(json.dumps({**head, "traceEvents": events}))
    return path


@pytest.fixture
def ranks(tmp_path):
    """Rank 0's step 2 ends at 700 µs, in its recording; rank 1's at 500,000 µs, 499,000 past it."""
    return [_rank(tmp_path / "r0.json", 0, 700.0), _rank(tmp_path / "r1.json", 1, 500_000.0)]


def test_a_rank_s_step_past_its_recording_is_cut_and_named(ranks):
    r = analyze_ranks(ranks, workers=1)
    zero, one = (rank.step("ProfilerStep#2") for rank in r.ranks)
    # rank 0: 300 .. 700, kernel 400 .. 600; rank 1: cut at 1000, not 500,000
    assert (zero.wall_ms, zero.busy_ms, zero.idle_ms, zero.past_recording_ms) == pytest.approx((0.4, 0.2, 0.2, 0))
    assert (one.wall_ms, one.busy_ms, one.idle_ms) == pytest.approx((0.7, 0.2, 0.5))
    assert one.past_recording_ms == pytest.approx(499.0)
    assert [s.past_recording_ms for rank in r.ranks for s in rank.steps].count(0.0) == 3
    g = next(g for g in r.stragglers if g.step == "ProfilerStep#2")
    assert (g.rank, g.median_rank) == (1, 0)
    assert (g.wall_ms, g.excess_ms, g.idle_ms) == pytest.approx((0.7, 0.3, 0.3))  # idle 0.5 - 0.2
    text = render_ranks(r)
    stragglers, steps = text.split("Steps per rank")
    assert LINE in steps and STRAGGLER_LINE in stragglers
    assert "rank 0's" not in text and "ProfilerStep#1 ran" not in text
    for fmt in ("markdown", "html"):
        words = " ".join(render_ranks(r, fmt).split())
        assert "Rank 1's <code>ProfilerStep#2</code> ran 499.0 ms" in words or \
            "Rank 1's `ProfilerStep#2` ran 499.0 ms" in words
        assert words.count("ran 499.0 ms past the end of the profiler's recording") == 2
    saved = json.loads(r.to_json())
    assert [s["past_recording_ms"] for s in saved["ranks"][1]["steps"]] == pytest.approx([0.0, 499.0])


def test_the_straggler_table_names_only_the_cut_steps_it_shows(tmp_path):
    """Three ranks' step 2: rank 0's is cut at its recording's end, wall 0.7 ms (300 .. 1000);
    ranks 1 and 2 recorded 0..2000 µs and their steps end at 1500 and 1800 µs, walls 1.2 and
    1.5 ms: straggler rank 2, median rank 1. Only the steps table shows rank 0's step."""
    paths = [_rank(tmp_path / "r0.json", 0, 500_000.0),
             *(_rank(tmp_path / f"r{k}.json", k, end, recorded=2000) for k, end in ((1, 1500.0), (2, 1800.0)))]
    r = analyze_ranks(paths, workers=1)
    assert [rank.step("ProfilerStep#2").wall_ms for rank in r.ranks] == pytest.approx([0.7, 1.2, 1.5])
    g = next(g for g in r.stragglers if g.step == "ProfilerStep#2")
    assert (g.rank, g.median_rank, g.excess_ms) == (2, 1, pytest.approx(0.3))
    stragglers, steps = render_ranks(r).split("Steps per rank")
    assert "past the end" not in stragglers
    assert "Rank 0's ProfilerStep#2 ran 499.0 ms past the end of the profiler's recording" in steps


def test_the_command_says_it_in_every_format(ranks, capsys):
    assert not main(["analyze", *map(str, ranks)])
    assert LINE in capsys.readouterr().out
    assert not main(["analyze", *map(str, ranks), "--format", "json"])
    saved = json.loads(capsys.readouterr().out)
    assert saved["ranks"][1]["steps"][1]["past_recording_ms"] == pytest.approx(499.0)


def test_a_profiler_cycle_past_its_recording_says_so_under_its_own_steps(tmp_path):
    """Two cycles of one process (tensorboard_trace_handler's names, one host and pid): the
    second's step 2 runs past its recording; its section says so, the first's does not."""
    head = {"deviceProperties": []}
    first = _rank(tmp_path / "host_7.1700000000000000000.pt.trace.json", 0, 700.0, head)
    second = _rank(tmp_path / "host_7.1700000001000000000.pt.trace.json", 0, 500_000.0, head)
    c = analyze_cycles([first, second])
    assert [s.past_recording_ms for r in c.cycles for s in r.steps] == pytest.approx([0, 0, 0, 499.0])
    text = render_cycles(c)
    one, two = text.split("Profiler cycle 2 of 2")
    assert "past the end" not in one
    assert "ProfilerStep#2 ran 499.0 ms past the end of the profiler's recording" in two


def test_a_rank_s_span_stops_at_its_recording_so_traces_of_different_runs_are_said_to_be(tmp_path):
    """Synthetic: rank 0 recorded 0..1000 µs and its step 2's marker closes at 13,000,000 µs; rank 1
    is the same loop under a time base 12 s later (baseTimeNanoseconds), its steps 12,000,100 ..
    12,000,700 µs. Rank 0's span stops at its recording's end (100 .. 1000 µs), so neither rank's
    steps overlap the other's: traces of different runs, spanning (12,000,700 - 100) µs = 12.0 s.
    Its marker's end (13 s) would have covered rank 1's steps and hidden it. Where rank 0's
    recording really lasts until 13 s, its step is not cut and the two overlap."""
    later = {"distributedInfo": {"rank": 1, "world_size": 2}, "baseTimeNanoseconds": 12_000_000_000}
    one = _rank(tmp_path / "r1.json", 1, 700.0, later)
    zero = _rank(tmp_path / "r0.json", 0, 13_000_000.0)
    r = analyze_ranks([zero, one], workers=1)
    assert [rank.span_us for rank in r.ranks] == [[100.0, 1000.0], [12_000_100.0, 12_000_700.0]]
    assert r.ranks[0].step("ProfilerStep#2").past_recording_ms == pytest.approx(12_999.0)
    assert r.apart.startswith("the steps of ranks 0, 1 overlap no other rank's in time (the traces span 12.0 s)")
    assert "WARNING: the steps of ranks 0, 1 overlap no other rank's in time" in render_ranks(r)
    zero = _rank(tmp_path / "r0.json", 0, 13_000_000.0, recorded=13_000_000)
    r = analyze_ranks([zero, one], workers=1)
    assert r.ranks[0].span_us == [100.0, 13_000_000.0] and r.apart == ""
