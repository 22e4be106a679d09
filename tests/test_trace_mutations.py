"""A real trace rewritten the ways some writers write it reads as the original: ids written as
integer-valued floats are the same ids; device events that lost their ``dur`` are left out
of every time figure and counted."""

from __future__ import annotations

import gzip
import json
from array import array
from pathlib import Path

from inductor_bench.core.analyze import analyze_file
from inductor_bench.core.column_types import MISSING, Column

HTA = Path(__file__).resolve().parent / "fixtures" / "hta"
# a real rank's trace whose steps hold device events launched before the first step
QUEUE = HTA / "negative_queue_length_values_check_rank0.json.gz"


def _figures(path: Path) -> dict:
    out = analyze_file(path).to_dict()
    out.pop("trace")
    return out


def _rewritten(src: Path, dst: Path, change) -> int:
    """``src`` with ``change`` applied to each event, written to ``dst``; the events it changed."""
    doc = json.loads(gzip.decompress(src.read_bytes()))
    changed = sum(bool(change(ev)) for ev in doc["traceEvents"])
    dst.write_text(json.dumps(doc))
    return changed


def _float_ids(ev: dict) -> bool:
    args, changed = ev.get("args"), False
    for key in ("correlation", "External id"):
        if isinstance(args, dict) and type(args.get(key)) is int:
            args[key], changed = float(args[key]), True
    return changed


def test_ids_written_as_integer_valued_floats_are_the_same_ids(tmp_path):
    floats = tmp_path / "floats.json"
    assert _rewritten(QUEUE, floats, _float_ids) > 10_000
    original = _figures(QUEUE)
    assert original["outside_steps"] == 872  # the launches before the first step, as read
    assert _figures(floats) == original


def test_a_float_id_with_a_fraction_matches_only_itself():
    col = Column()
    col.extend([5.0, 5.5, 7, MISSING])
    assert col.ids == array("q", [5, MISSING, 7, MISSING]) and col.odd == {1: 5.5}
    assert col.index() == {5: 0, 5.5: 1, 7: 2}
