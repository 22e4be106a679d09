"""A sweep of the reference mode alone (``--modes default --no-eager``, the usual baseline for
``--baseline``): its geomean line says there is no speedup to average, where it ended at its
colon (hand-built results, synthetic rounds)."""

from __future__ import annotations

import json
from pathlib import Path

from inductor_bench.core.compare import CompareResult
from inductor_bench.core.sweep import CellStatus
from inductor_bench.core.sweep_plan import new_sweep
from inductor_bench.core.sweep_table import build_table
from inductor_bench.render.sweep import render_sweep

FIXTURE = Path(__file__).parent / "fixtures" / "results" / "cpu_mlp_compare" / "compare.json"


def test_a_sweep_of_the_reference_alone_says_no_other_mode_was_swept():
    d = json.loads(FIXTURE.read_text())
    d["modes"] = [d["modes"][1]]  # default alone
    d["modes"][0]["paired_ms"] = [[2.0, 2.1, 2.0]] * 10
    sweep = new_sweep(["/m/a.py"], ["a"], ["default"], ["--no-eager"], device="cpu", shard=None, executor="local", created="")
    sweep.cells[0].status, sweep.cells[0].run_dir, sweep.cells[0].attempts = CellStatus.DONE, "a", 1
    table = build_table(sweep, {"a": CompareResult.from_dict(d)})
    assert table.reference == "default" and not table.geomeans
    for fmt in ("text", "markdown"):
        first = render_sweep(table, fmt).splitlines()[0]
        assert first.strip("* ") == "Geomean speedup over default: none, no other mode was swept"
