"""Two recorded gloo ranks that call ``dist.all_reduce`` themselves (no DDP,
``tests/fixtures/ranks/cpu_gloo_allreduce``): the steps table's comm and the category table's
communication, each worked out again from the raw JSON by the rules docs/analyze.md states, and
the notes under the two tables held to what the figures show."""

from __future__ import annotations

import re
from statistics import mean

import pytest

from inductor_bench.core.ranks import rank_summary

from .conftest import FIXTURES
from .test_analyze import merged_length, raw_events, run_cli

GLOO = FIXTURES / "ranks" / "cpu_gloo_allreduce"
PATHS = sorted(GLOO.glob("rank-*.json.gz"))


def _by_step(path) -> list[dict]:
    """Per step, from the raw JSON: its marker's wall, the main thread's collective ops that
    start in it (their summed durations: the category table's communication), and the union of
    those ops and every thread's gloo:* ranges, cut to the step (the steps table's comm)."""
    evs = raw_events(path)
    markers = sorted((e for e in evs if re.fullmatch(r"ProfilerStep#\d+", e["name"])), key=lambda e: e["ts"])
    main = markers[0]["tid"]
    steps = []
    for m in markers:
        lo, hi = m["ts"], m["ts"] + m["dur"]
        ops = [e for e in evs if e.get("cat") == "cpu_op" and e["tid"] == main
               and e["name"].startswith("c10d::") and lo <= e["ts"] < hi]
        ran = [e for e in evs if e["name"].startswith("gloo:") and e["ts"] < hi and e["ts"] + e["dur"] > lo]
        cut = [(max(e["ts"], lo), min(e["ts"] + e["dur"], hi)) for e in ops + ran]
        steps.append({"name": m["name"], "wall_ms": m["dur"] / 1e3, "ops_ms": sum(e["dur"] for e in ops) / 1e3,
                      "comm_ms": merged_length(cut) / 1e3, "ops": ops, "ran": ran})
    return steps


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_each_steps_comm_and_communication_are_the_raw_jsons(path):
    """Per step: comm is the union of the c10d ops and gloo's ranges, the category is the ops'
    summed time, and the union covers the ops (so per step comm >= the category)."""
    want = _by_step(path)
    got = rank_summary(path, 0).steps
    assert [s.step for s in got] == [w["name"] for w in want] == ["ProfilerStep#2", "ProfilerStep#3",
                                                                   "ProfilerStep#4"]
    for s, w in zip(got, want, strict=True):
        assert len(w["ops"]) == 5 and all(e["name"] == "c10d::allreduce_" for e in w["ops"])
        assert s.wall_ms == pytest.approx(w["wall_ms"], abs=1e-6)
        assert s.comm_ms == pytest.approx(w["comm_ms"], abs=1e-6)
        assert s.categories["communication"] == pytest.approx(w["ops_ms"], abs=1e-6)
        assert s.comm_ms >= s.categories["communication"]


def test_an_op_can_last_as_long_as_its_collective():
    """Rank 0's first all-reduce of ProfilerStep#2: the main thread's op lasts 2,250.087 us, around
    its whole gloo:all_reduce range of 2,153.483 us: the op waited for the work, not only handed it
    over, so the op's time can exceed its range's, as the notes now allow."""
    step = _by_step(GLOO / "rank-0.json.gz")[0]
    op, ran = step["ops"][0], min(step["ran"], key=lambda e: e["ts"])
    assert (op["dur"], ran["dur"]) == (2250.087, 2153.483)
    assert op["ts"] < ran["ts"] and ran["ts"] + ran["dur"] < op["ts"] + op["dur"]


def test_the_notes_say_what_the_figures_show(capsys):
    """The category table's communication is the mean of each step's ops (every step steady
    here); the note under it says the steps table's comm covers each step's ops, not that it
    reads longer than this mean, which one step with long ops can raise above another step's
    comm. The steps note says the op may wait for the work, as the first all-reduce above did."""
    code, out, err = run_cli(capsys, str(GLOO))
    assert code == 0, err
    section = out[out.index("Time by category per rank"):out.index("Named ranges per rank")]
    for path in PATHS:
        steps = _by_step(path)
        assert rank_summary(path, 0).steady_indices() == [0, 1, 2]
        rank = int(path.name.split("-")[1].split(".")[0])
        row = next(line.split() for line in section.splitlines() if line.startswith(f"{rank} "))
        header = next(line for line in section.splitlines() if line.startswith("rank "))
        column = [c.strip() for c in re.split(r"\s{2,}", header)].index("communication (collectives)")
        assert float(row[column]) == pytest.approx(mean(s["ops_ms"] for s in steps), abs=5e-4)
    text = " ".join(section.split())
    assert "reads longer" not in text
    assert "in each step it covers that step's ops, but a step's can read less than this mean" in text
    steps_note = " ".join(out[out.index("Steps per rank"):out.index("Time by category")].split())
    assert "c10d::allreduce_, which hands the work over or waits for it" in steps_note
