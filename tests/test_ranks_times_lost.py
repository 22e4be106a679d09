"""Several ranks' traces, one of which lost every device time (ts 0 and dur 0, as CUPTI leaves a
session exported after another had started; or no dur written): the other ranks are analysed,
and the one left out is named with why, in the title, a warning and the straggler table's
heading (``tests/fixtures/ranks``: synthetic ranks made from a real A100 trace)."""

from __future__ import annotations

import gzip
import json
import shutil
from dataclasses import asdict
from pathlib import Path

from inductor_bench.core.analyze_ranks import analyze_ranks

from .test_analyze import run_cli

RANKS = Path(__file__).resolve().parent / "fixtures" / "ranks"
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def _four_ranks(tmp_path: Path, lose, lost: int = 2) -> list[Path]:
    """Ranks 0-3 of the fixture, rank ``lost``'s device events changed by ``lose``."""
    paths = []
    for rank in range(4):
        p = tmp_path / f"rank-{rank}.json"
        if rank == lost:
            doc = json.loads(gzip.decompress((RANKS / f"rank-{rank}.json.gz").read_bytes()))
            device = [ev for ev in doc["traceEvents"] if ev.get("cat") in DEVICE_CATS]
            assert len(device) == 1800 + 640 + 76
            for ev in device:
                lose(ev)
            p.write_text(json.dumps(doc))
        else:
            p.write_bytes(gzip.decompress((RANKS / f"rank-{rank}.json.gz").read_bytes()))
        paths.append(p)
    return paths


def _zeroed(ev: dict) -> None:
    ev["ts"], ev["dur"] = 0, 0


def _undurated(ev: dict) -> None:
    del ev["dur"]


def test_a_rank_whose_device_times_were_lost_is_left_out_and_named_the_others_analysed(tmp_path, capsys):
    paths = _four_ranks(tmp_path, _zeroed)
    r = analyze_ranks(paths, workers=1)
    assert [x.rank for x in r.ranks] == [0, 1, 3]
    assert (r.times_lost, r.times_lost_why, r.times_lost_rank) == ([str(paths[2])], {}, {str(paths[2]): 2})
    # every cross-rank figure is that of the three other ranks given alone
    alone = analyze_ranks([paths[0], paths[1], paths[3]], workers=1)
    assert [asdict(s) for s in r.stragglers] == [asdict(s) for s in alone.stragglers]
    assert [asdict(x) for x in r.ranks] == [asdict(x) for x in alone.ranks]
    # the fixture's known amounts: step 5's straggler is rank 3 (80 ms idle inserted) against the
    # median of ranks 0, 1 (1% slower) and 3: rank 1
    step5 = next(s for s in r.stragglers if s.step == "ProfilerStep#5")
    assert (step5.rank, step5.median_rank) == (3, 1)
    code, out, err = run_cli(capsys, *map(str, paths))
    assert code == 0, err
    text = " ".join(out.split())
    assert text.startswith("inductor-bench analyze: 3 ranks, rank 2 left out ")
    assert (f"WARNING: rank 2 left out ({paths[2]}): its device events all carry no times (ts 0, dur 0): the "
            "profiler lost them, as when a session is exported after another has started; every figure below, "
            "the straggler and median rank of each step among them, is of the other 3 ranks alone") in text
    assert "Straggler per step (of 3 ranks: rank 2 left out)" in text
    assert "3 of the run's 8 ranks (its world size)" in text
    code, out, _ = run_cli(capsys, *map(str, paths), "--format", "json")
    doc = json.loads(out)
    assert (code, doc["times_lost"], doc["times_lost_rank"]) == (0, [str(paths[2])], {str(paths[2]): 2})


def test_a_rank_that_writes_no_dur_on_any_device_event_is_left_out_with_that_reason(tmp_path, capsys):
    paths = _four_ranks(tmp_path, _undurated, lost=0)
    code, out, err = run_cli(capsys, *map(str, paths))
    assert code == 0, err
    text = " ".join(out.split())
    assert text.startswith("inductor-bench analyze: 3 ranks, rank 0 left out ")
    assert (f"WARNING: rank 0 left out ({paths[0]}): its 2516 device events (kernel, memcpy, memset) all write "
            "no dur: their times are not known; every figure below") in text


def test_ranks_all_of_which_lost_their_device_times_are_refused(tmp_path, capsys):
    paths = _four_ranks(tmp_path, _zeroed)[2:3]
    shutil.copy(paths[0], tmp_path / "rank-9.json")
    doc = json.loads((tmp_path / "rank-9.json").read_text())
    doc["distributedInfo"]["rank"] = 9
    (tmp_path / "rank-9.json").write_text(json.dumps(doc))
    code, out, err = run_cli(capsys, str(paths[0]), str(tmp_path / "rank-9.json"))
    assert code == 2 and out == ""
    assert err == (f"inductor-bench: error: {paths[0]}: its 2516 device events (kernel, memcpy, memset) all carry "
                   "no times (ts 0, dur 0): the profiler lost them (a session exported after another had started)\n")


def test_ranks_cycles_where_one_rank_lost_a_cycles_device_times_are_refused(tmp_path, capsys):
    """Two cycles of ranks 0 and 1 (each trace its own bytes), rank 1's second cycle's device
    times lost: the cycles could not be matched across ranks without it, so the set is refused."""
    paths = []
    for cycle in (0, 1):
        for p in _four_ranks(tmp_path, _zeroed, lost=1 if cycle else -1)[:2]:
            doc = json.loads(p.read_text())
            doc["traceName"] = f"cycle{cycle}"
            q = tmp_path / f"c{cycle}-{p.name}"
            q.write_text(json.dumps(doc))
            paths.append(q)
    code, out, err = run_cli(capsys, *map(str, paths))
    assert code == 2 and out == ""
    assert err.startswith(f"inductor-bench: error: {paths[3]}: its 2516 device events (kernel, memcpy, memset) "
                          "all carry no times")
