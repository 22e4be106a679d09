"""A trace's header names its rank (and world size) only with a whole number: ``2.5``, ``-1``,
``"2"`` or ``2e0`` name none, as a header without ``distributedInfo.rank`` names none (the
file name may still name it), and ``analyze`` then numbers the traces in the order given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inductor_bench.core.ranks import rank_of, world_size_of

from .test_analyze import run_cli


def _trace(path: Path, info: str) -> Path:
    """One step, one kernel; ``info`` the distributedInfo object as written (raw JSON text)."""
    evs = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100, "pid": 1, "tid": 1},
           {"ph": "X", "cat": "kernel", "name": "k", "ts": 10, "dur": 50, "pid": 0, "tid": 7}]
    path.write_text('{"distributedInfo": ' + info + ', "traceEvents": ' + json.dumps(evs) + "}")
    return path


@pytest.mark.parametrize("value", ["2.5", "-1", '"2"', "2e0", "2.0", "null", "true"])
def test_a_rank_that_is_no_whole_number_names_no_rank(tmp_path, value):
    p = _trace(tmp_path / "a.json", f'{{"backend": "gloo", "rank": {value}, "world_size": {value}}}')
    assert rank_of(p) is None and world_size_of(p) is None
    q = _trace(tmp_path / "trainer_rank-4.json", f'{{"rank": {value}}}')
    assert rank_of(q) == 4  # the file name still names it


def test_whole_numbers_are_read(tmp_path):
    p = _trace(tmp_path / "a.json", '{"backend": "nccl", "rank":12,"world_size" : 16}')
    assert (rank_of(p), world_size_of(p)) == (12, 16)
    p = _trace(tmp_path / "a.json", '{"rank": 0}')
    assert (rank_of(p), world_size_of(p)) == (0, None)


def test_a_fractional_rank_is_renumbered_with_the_others(capsys, tmp_path):
    """rank 0 and a header's rank 2.5: the second names no rank, so both are numbered in the
    order given (0, 1) and the report says the named rank was set aside; 2.5 read as rank 2."""
    a = _trace(tmp_path / "a.json", '{"rank": 0, "world_size": 2}')
    b = _trace(tmp_path / "b.json", '{"rank": 2.5, "world_size": 2}')
    code, out, _ = run_cli(capsys, str(a), str(b), "--format", "json")
    doc = json.loads(out)
    assert code == 0 and [r["rank"] for r in doc["ranks"]] == [0, 1]
    assert doc["renumbered"].startswith("b.json names no rank, so every trace is numbered in the order given")
    assert "(a.json: 0)" in doc["renumbered"]
