"""`analyze` of several ranks' profiler cycles (a distributed run's tensorboard_trace_handler
directory): each cycle's ranks analysed together, in the order the cycles ran. Checked on two
real gloo ranks with two cycles each (tests/fixtures/ranks/cpu_gloo_cycles) against the same
analysis of each cycle's traces given alone, and against the raw JSON's step markers."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

from inductor_bench.core.analyze_ranks import analyze_ranks
from inductor_bench.core.rank_cycles import analyze_rank_cycles, repeats_ranks
from inductor_bench.core.trace_sets import origin_of

from .conftest import FIXTURES
from .test_analyze import raw_events, run_cli

CYCLES = FIXTURES / "ranks" / "cpu_gloo_cycles"
TRACES = sorted(CYCLES.glob("*.pt.trace.json.gz"))


def _steps(path: Path) -> list[str]:
    return sorted({e["name"] for e in raw_events(path) if re.fullmatch(r"ProfilerStep#\d+", e.get("name", ""))})


def _header(path: Path) -> dict:
    with gzip.open(path) as f:
        return {k: v for k, v in json.load(f).items() if k != "traceEvents"}


def test_the_recorded_cycles_share_one_base_time_the_file_name_orders_them():
    assert len({_header(p)["baseTimeNanoseconds"] for p in TRACES}) == 1
    for p in TRACES:
        assert origin_of(p).began_ns == int(p.name.split(".")[1])
    assert repeats_ranks(TRACES) and not repeats_ranks(TRACES[::2])
    assert not repeats_ranks(TRACES[:2])  # one rank twice: refused as before ("rank 0 again")


def test_each_cycle_is_its_ranks_analysed_alone():
    shuffled = [TRACES[3], TRACES[0], TRACES[2], TRACES[1]]
    result = analyze_rank_cycles(shuffled, workers=1)
    assert result.skipped == [] and len(result.cycles) == 2
    by_steps: dict[tuple[str, ...], dict[int, Path]] = {}
    for p in TRACES:
        by_steps.setdefault(tuple(_steps(p)), {})[_header(p)["distributedInfo"]["rank"]] = p
    assert list(by_steps) == [("ProfilerStep#2", "ProfilerStep#3"), ("ProfilerStep#6", "ProfilerStep#7")]
    for cycle, (steps, ranks) in zip(result.cycles, by_steps.items(), strict=True):
        assert [(r.rank, r.trace) for r in cycle.ranks] == [(k, str(ranks[k])) for k in sorted(ranks)]
        assert all([s.step for s in r.steps] == list(steps) for r in cycle.ranks)
        alone = analyze_ranks([ranks[k] for k in sorted(ranks)], workers=1)
        assert cycle == alone


def test_cli_text_and_json(capsys):
    code, out, err = run_cli(capsys, str(CYCLES))
    assert code == 0, err
    assert out.startswith("inductor-bench analyze: 2 ranks, 2 profiler cycles\n")
    assert "Profiler cycle 1 of 2: 2 steps, ProfilerStep#2 to ProfilerStep#3" in out
    assert "Profiler cycle 2 of 2: 2 steps, ProfilerStep#6 to ProfilerStep#7" in out
    assert out.count("Named ranges per rank") == 2 and "\nbackward " in out
    code, out, err = run_cli(capsys, str(CYCLES), "--format", "json")
    doc = json.loads(out)
    assert doc["schema"] == "inductor-bench/analyze-rank-cycles" and len(doc["cycles"]) == 2
    assert [[r["rank"] for r in c["ranks"]] for c in doc["cycles"]] == [[0, 1], [0, 1]]


def _empty_exit_cycle(src: Path, dest: Path) -> Path:
    """Synthetic: the trace a rank's profiler writes at exit, its header copied from ``src``
    and nothing profiled in it (a step marker alone)."""
    header = _header(src)
    marker = {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#9", "ts": 1.0, "dur": 5.0,
              "pid": 1, "tid": 1}
    out = dest / (src.name.split(".")[0] + ".9999999999999999999.pt.trace.json")
    out.write_text(json.dumps({**header, "traceEvents": [marker]}))
    return out


def test_the_exits_empty_cycles_are_skipped_and_named(capsys, tmp_path):
    for p in TRACES:
        shutil.copy(p, tmp_path)
    empties = {_empty_exit_cycle(p, tmp_path).name for p in TRACES[::2]}  # one per rank
    code, out, err = run_cli(capsys, str(tmp_path), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert len(doc["cycles"]) == 2 and {Path(s).name for s in doc["skipped"]} == empties


def test_ranks_with_different_numbers_of_cycles_are_one_line_exit_2(capsys):
    code, out, err = run_cli(capsys, *map(str, TRACES[:3]))
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        "inductor-bench: error: the ranks hold different numbers of profiler cycles (rank 0 2, rank 1 1; "
        "traces with nothing profiled left out): give the traces of whole cycles, or one cycle's"]


def test_one_ranks_cycles_read_as_its_process_cycles(capsys):
    code, out, err = run_cli(capsys, *map(str, TRACES[:2]), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["schema"] == "inductor-bench/analyze-cycles"
    assert [[s["name"] for s in c["steps"]] for c in doc["cycles"]] == [_steps(p) for p in TRACES[:2]]


def test_ranks_of_two_different_cycles_are_warned_of(capsys):
    rank0_first, rank1_second = TRACES[0], TRACES[3]
    code, out, err = run_cli(capsys, str(rank0_first), str(rank1_second))
    assert code == 0, err
    assert ("WARNING: no step is held by two ranks (rank 0: ProfilerStep#2 to ProfilerStep#3; rank 1: "
            "ProfilerStep#6 to ProfilerStep#7): the traces come from different profiler cycles or runs, "
            "so no step has a straggler") in out
    assert "Straggler per step" not in out
    code, out, err = run_cli(capsys, str(TRACES[0]), str(TRACES[2]))  # one cycle of both: no warning
    assert code == 0 and "WARNING: no step" not in out and "Straggler per step" in out
