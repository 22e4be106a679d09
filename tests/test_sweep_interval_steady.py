"""A speedup's 95% interval over interleaved rounds, recomputed here from the rounds' ratios:
the distribution-free interval of their median, [x_(k), x_(n-k+1)] of the sorted ratios, k the
largest rank whose lower binomial tail leaves out at most 2.5%. Where k or more rounds were
disturbed (a block's median a stall), a bound may be a stalled round's ratio: the sweep and
compare then say "too few steady rounds for an interval" (a loaded sweep printed
[0.81x-61.28x] for mlp's default over eager). Hand-built rounds (synthetic)."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest

from inductor_bench.core.compare import CompareResult, summary
from inductor_bench.core.sweep import CellStatus
from inductor_bench.core.sweep_plan import new_sweep
from inductor_bench.core.sweep_table import build_table
from inductor_bench.render.compare import render_compare
from inductor_bench.render.sweep import render_sweep
from inductor_bench.render.sweep_html import cell_tip, colour_kind

FIXTURE = Path(__file__).parent / "fixtures" / "results" / "cpu_mlp_compare" / "compare.json"
FEW = "too few steady rounds for an interval"
ROUNDS = 10


def _rounds(stalled: int) -> tuple[list[list[float]], list[list[float]]]:
    """10 rounds of 6 calls: eager 2.00-2.09 ms, default 1.60-1.69 ms (each block's calls alike,
    the rounds apart); in ``stalled`` of default's blocks four calls took 40-80 ms."""
    eager = [[2.0 + 0.01 * ((3 * r) % ROUNDS)] * 6 for r in range(ROUNDS)]
    mode = [[1.6 + 0.01 * r] * 6 for r in range(ROUNDS)]
    for r in range(stalled):
        mode[r] = mode[r][:2] + [40.0 + 40.0 * r] * 4
    return eager, mode


def _table(stalled: int):
    d = json.loads(FIXTURE.read_text())
    d["modes"] = d["modes"][:2]  # eager, default
    d["modes"][0]["paired_ms"], d["modes"][1]["paired_ms"] = _rounds(stalled)
    result = CompareResult.from_dict(d)
    sweep = new_sweep(["/m/a.py"], ["a"], ["default"], [], device="cpu", shard=None, executor="local", created="")
    sweep.cells[0].status, sweep.cells[0].run_dir, sweep.cells[0].attempts = CellStatus.DONE, "a", 1
    return build_table(sweep, {"a": result}), result


def _expected_interval(stalled: int) -> tuple[float, float]:
    """eager / default's interval: the order statistics of the rounds' default / eager ratios
    (each block's mean: a block of 6 keeps every call, too few left to judge), inverted."""
    eager, mode = _rounds(stalled)
    ratios = sorted(statistics.fmean(m) / statistics.fmean(e) for e, m in zip(eager, mode, strict=True))
    n = len(ratios)
    k = max(j for j in range(1, n // 2 + 1) if sum(math.comb(n, i) for i in range(j)) / 2**n <= 0.025)
    assert k == 2  # 10 rounds: the 2nd and the 9th, the most extreme ratio left out each side
    return 1 / ratios[n - k], 1 / ratios[k - 1]


def test_one_stalled_round_leaves_the_interval_of_the_steady_ones():
    table, _ = _table(1)
    f = table.rows["a"]["default"]
    low, high = _expected_interval(1)
    assert f.speedup_ci == (pytest.approx(low, rel=1e-12), pytest.approx(high, rel=1e-12))
    assert 1.18 < low < high < 1.31  # default's 1.60-1.69 ms against eager's 2.00-2.09 ms
    assert f.no_interval is None


def test_two_stalled_rounds_give_no_interval_and_say_why():
    """k = 2: the 9th ratio is a stalled round's (round 0, its stall 40 ms), and the interval's
    low bound would be 0.07x."""
    assert _expected_interval(2)[0] == pytest.approx(2.0 * 6 / (2 * 1.60 + 4 * 40.0), rel=1e-12)
    table, result = _table(2)
    f = table.rows["a"]["default"]
    assert f.speedup is not None and f.verdict == "not judged"  # no verdict without an interval
    assert f.speedup_ci is None and f.no_interval == FEW
    text = render_sweep(table).splitlines()
    row = next(line for line in text if line.startswith("a ") and " default " in line)
    assert "  too few steady rounds  " in row and "[" not in row
    assert any(line.startswith("too few steady rounds: no interval where as many rounds were disturbed") for line in text)
    cell = next(c for c in json.loads(render_sweep(table, "json"))["cells"] if c["mode"] == "default")
    assert cell["speedup_ci"] is None and cell["no_interval"] == FEW
    assert f"({FEW})" in cell_tip(f, "eager") and colour_kind(f) is None  # not grey: no verdict of noise
    speedup = next(s for s in summary(result)["speedups"] if s["column"] == "default" and s["over"] == "eager")
    assert speedup["interval"] is None and speedup["no_interval"] == FEW
    row = next(line for line in render_compare(result).splitlines() if line.startswith("speedup vs eager"))
    assert row.endswith(f"  1.23x [{FEW}] (not judged)")
    assert speedup["verdict"] == "not judged"
