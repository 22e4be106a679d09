"""A sweep's speedup over rounds most of which were disturbed: no figure, out of the geomean,
with the reason in the cell, the geomean line and the JSON (hand-built interleaved rounds)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from inductor_bench.core.compare import CompareResult
from inductor_bench.core.sweep import CellStatus
from inductor_bench.core.sweep_plan import new_sweep
from inductor_bench.core.sweep_table import build_table
from inductor_bench.render.sweep import render_sweep

from .steady_rule import limit_of_repeats

FIXTURE = Path(__file__).parent / "fixtures" / "results" / "cpu_mlp_compare" / "compare.json"
STALLS = [9.9, 14.0, 22.0, 48.0, 75.0, 120.0, 160.0]
OWN = " (its own blocks above its steady limit)"  # the gate counts the mode's own blocks


def _result(eager_blocks, mode_blocks):
    d = json.loads(FIXTURE.read_text())
    d["modes"] = [d["modes"][0], d["modes"][1]]  # eager, default
    d["modes"][0]["paired_ms"], d["modes"][1]["paired_ms"] = eager_blocks, mode_blocks
    return CompareResult.from_dict(d)


def _stalled_rounds(disturbed: int) -> tuple[list[list[float]], list[list[float]]]:
    """10 rounds of 6 calls at a 1.849 ms step both ways; in ``disturbed`` of the mode's blocks
    four calls stalled (the block's median a stall), the other two steady."""
    eager = [[1.84, 1.85, 1.86, 1.85, 1.84, 1.86] for _ in range(10)]
    mode = [[1.84, 1.85, 1.86, 1.85, 1.84, 1.86] for _ in range(10)]
    for r in range(disturbed):
        mode[r] = [1.85, 1.85] + [STALLS[r]] * 4
    return eager, mode


def _table(disturbed: int):
    sweep = new_sweep(["/m/a.py", "/m/b.py"], ["a", "b"], ["default"], [], device="cpu", shard=None,
                      executor="local", created="")
    for c in sweep.cells:
        c.status, c.run_dir, c.attempts = CellStatus.DONE, c.model, 1
    quiet = _result([[2.0] * 6] * 10, [[1.6] * 6] * 10)  # a steady 0.8 ratio: 1.25x
    return build_table(sweep, {"a": quiet, "b": _result(*_stalled_rounds(disturbed))})


def test_the_stalled_rounds_are_over_the_policys_limit():
    """The rule written out again: 7 of the mode's block medians lie above its step samples'
    steady limit (the faster half's: most samples are not stalls here, so the median's own)."""
    eager, mode = _stalled_rounds(7)
    lim = limit_of_repeats([x for blk in mode for x in blk])
    assert 1.86 < lim < 9.9
    assert sum(statistics.median(b) > lim for b in mode) == 7
    assert sum(statistics.median(b) > limit_of_repeats([x for blk in eager for x in blk]) for b in eager) == 0


def test_a_mode_with_most_rounds_disturbed_has_no_speedup_and_is_out_of_the_geomean():
    table = _table(7)
    f = table.rows["b"]["default"]
    assert f.speedup is None and f.speedup_ci is None and f.verdict is None
    assert f.no_speedup == "7 of 10 rounds disturbed" and f.speedup_rounds == 10
    g, n = table.geomeans["default"]
    assert n == 1 and g == pytest.approx(2.0 / 1.6, rel=1e-12)  # model a alone
    text = render_sweep(table)
    assert "Geomean speedup over eager: default 1.25x (1 of 2 models; b left out: 7 of 10 rounds disturbed)" in text
    row = next(line for line in text.splitlines() if line.startswith("b ") and " default " in line)
    assert row.split()[2:8] == ["n/m", "-", "7", "of", "10", "rounds"]
    doc = json.loads(render_sweep(table, "json"))
    assert doc["geomean_speedup"]["default"] == {"geomean": pytest.approx(1.25), "models": 1,
                                                 "left_out": {"b": "7 of 10 rounds disturbed"}}
    cell = next(c for c in doc["cells"] if c["model"] == "b" and c["mode"] == "default")
    assert cell["speedup"] is None and cell["no_speedup"] == "7 of 10 rounds disturbed"


def test_half_the_rounds_disturbed_still_gives_the_median():
    """5 of 10: not most; the speedup is the median of the rounds' ratios (the steady middle)."""
    table = _table(5)
    f = table.rows["b"]["default"]
    eager, mode = _stalled_rounds(5)
    ratios = sorted(statistics.fmean(m) / statistics.fmean(e) for e, m in zip(eager, mode, strict=True))
    # each block's steady mean: the stalled blocks' medians are stalls themselves, so nothing is
    # left out of a block of 6 (below 5 kept would not be judged: the set is too small to judge)
    assert f.no_speedup is None and table.geomeans["default"][1] == 2
    assert f.speedup == pytest.approx(1 / (ratios[4] * ratios[5]) ** 0.5, rel=1e-9)
    assert "left out" not in render_sweep(table).splitlines()[0]


def test_the_recorded_loaded_rounds_keep_their_speedup():
    """``loaded_paired_rounds.json`` (a compare beside five compiling processes): over three
    quarters of each column's calls were stalls, the faster half's included, so the policy's
    limits lie among the stalls (eager's 766 ms, default's 463 ms) and only default's first two
    blocks (medians 560 and 500 ms) are over: 2 of 10 rounds, not most; its speedup stays, but
    2 rounds are enough to set its interval's bounds (10 rounds: the 2nd and the 9th), so it has
    no interval and no verdict (not judged; tests/test_stats.py reads the rounds alone within noise)."""
    from .conftest import FIXTURES

    rec = json.loads((FIXTURES / "results" / "loaded_paired_rounds.json").read_text())
    limits = [limit_of_repeats([x for blk in rec[k] for x in blk]) for k in ("eager", "default")]
    assert limits == [pytest.approx(766.21, abs=0.01), pytest.approx(462.51, abs=0.01)]
    over = [any(statistics.median(rec[k][r]) > lim for k, lim in zip(("eager", "default"), limits, strict=True))
            for r in range(10)]
    assert sum(over) == 2
    result = _result(rec["eager"], rec["default"])
    sweep = new_sweep(["/m/t.py"], ["t"], ["default"], [], device="cpu", shard=None, executor="local", created="")
    sweep.cells[0].status, sweep.cells[0].run_dir, sweep.cells[0].attempts = CellStatus.DONE, "t", 1
    f = build_table(sweep, {"t": result}).rows["t"]["default"]
    assert f.no_speedup is None and f.speedup is not None and f.verdict == "not judged"
    assert f.no_interval == "too few steady rounds for an interval"


def test_the_gates_count_says_eager_is_in_it():
    """Two models whose compares each timed eager and default, under a "2 models x 1 mode" sweep:
    4 model-modes judged, 2 of them eager columns, which the count says; without eager, 2."""
    from inductor_bench.core.sweep_table import gate
    from inductor_bench.render.doc import new_doc
    from inductor_bench.render.sweep import gate_line

    d = json.loads(FIXTURE.read_text())
    d["modes"] = d["modes"][:2]
    assert [m["mode"] for m in d["modes"]] == ["eager", "default"]
    two = {"a": CompareResult.from_dict(d), "b": CompareResult.from_dict(d)}
    g = gate(two, two, 5.0)
    assert (g.judged, g.judged_eager) == (4, 2)
    assert gate_line(g, new_doc("text")) == "NO REGRESSION above the 5% gate (4 model-modes judged, eager included)"
    d["modes"] = d["modes"][1:]
    one = {"a": CompareResult.from_dict(d)}
    assert gate_line(gate(one, one, 5.0), new_doc("text")) == "NO REGRESSION above the 5% gate (1 model-mode judged)"


def test_the_page_says_why_a_cell_has_no_speedup():
    import re

    from inductor_bench.render.sweep_html import render_sweep_html

    b_row = re.search(r"<tr><th>b</th>(.*?)</tr>", render_sweep_html(_table(7)), re.S).group(1)
    assert "background" not in b_row
    assert ">n/m<small>7 of 10 rounds disturbed</small></td>" in b_row
    assert 'title="b, default: n/m over eager (7 of 10 rounds disturbed)' in b_row


def test_the_pages_geomean_chart_counts_the_models_of_the_sweep():
    """The chart's bar says of how many models its geomean is, as the headline does: b is left
    out, so 1 of 2 (it read '(1 models)', as if the sweep held one)."""
    from inductor_bench.render.sweep_html import render_sweep_html

    page = render_sweep_html(_table(7))
    assert ">1.25x over eager (1 of 2 models)</text>" in page
    assert "(1 models)" not in page


def _gate_pair(disturbed_old: int, disturbed_new: int):
    """Model b on both sides: eager steady, default's blocks stalled in ``disturbed_*`` rounds of
    10 (its step time the steady mean of its samples, 1.85 ms, on both sides)."""
    from inductor_bench.core.sweep_table import gate

    old = {"b": _result(*_stalled_rounds(disturbed_old))}
    new = {"b": _result(*_stalled_rounds(disturbed_new))}
    return gate(old, new, 10.0)


def test_the_gate_judges_no_mode_whose_rounds_were_mostly_disturbed():
    """A mode whose own blocks were mostly disturbed on either side has no step time to judge:
    it is named as not comparable with the reason and the side, not counted as judged, and the
    gate fails in one line; eager, steady on both sides, is judged."""
    from inductor_bench.commands.sweep import _exit_error
    from inductor_bench.core.errors import NotComparable
    from inductor_bench.render.doc import new_doc
    from inductor_bench.render.sweep import gate_line

    g = _gate_pair(0, 7)
    assert g.regressions == [] and (g.judged, g.judged_eager) == (1, 1)
    assert g.unmeasured == ["b:default: not comparable: 7 of 10 rounds disturbed in this sweep" + OWN]
    assert not g.passed
    assert gate_line(g, new_doc("text")) == (
        "NOT COMPARABLE, SO THE 10% GATE FAILS: b:default: not comparable: 7 of 10 rounds disturbed "
        "in this sweep (its own blocks above its steady limit) - no verdict without them")
    assert _gate_pair(6, 0).unmeasured == ["b:default: not comparable: 6 of 10 rounds disturbed in the baseline" + OWN]
    assert _gate_pair(7, 6).unmeasured == [
        "b:default: not comparable: 7 of 10 rounds disturbed in the baseline, 6 of 10 in this sweep" + OWN]
    table = _table(0)
    table.gate = g
    err = _exit_error(table, None, 10.0, Path("/tmp/out"))
    assert isinstance(err, NotComparable)
    assert str(err) == "no verdict: b:default: not comparable: 7 of 10 rounds disturbed in this sweep" + OWN


def test_the_gate_judges_a_mode_with_half_its_rounds_disturbed():
    g = _gate_pair(5, 5)
    assert g.unmeasured == [] and g.regressions == [] and (g.judged, g.judged_eager) == (2, 1) and g.passed


def test_the_gates_count_of_a_modes_own_blocks_says_whose_beside_the_tables_count():
    """Eager's block stalled in rounds 0-2, default's in 3-9: the table counts the rounds with
    either block disturbed (10 of 10, n/m), the gate default's own blocks (7 of 10); each says
    which (the gate read '7 of 10 rounds disturbed' beside the table's '10 of 10 rounds disturbed'
    for the same mode of the same sweep)."""
    from inductor_bench.core.sweep_table import gate

    eager, mode = _stalled_rounds(0)
    for r in range(3):
        eager[r] = [1.85, 1.85] + [STALLS[r]] * 4
    for r in range(3, 10):
        mode[r] = [1.85, 1.85] + [STALLS[r - 3]] * 4
    head = _result(eager, mode)
    sweep = new_sweep(["/m/b.py"], ["b"], ["default"], [], device="cpu", shard=None, executor="local", created="")
    sweep.cells[0].status, sweep.cells[0].run_dir, sweep.cells[0].attempts = CellStatus.DONE, "b", 1
    assert build_table(sweep, {"b": head}).rows["b"]["default"].no_speedup == "10 of 10 rounds disturbed"
    g = gate({"b": _result(*_stalled_rounds(0))}, {"b": head}, 10.0)
    assert g.unmeasured == ["b:default: not comparable: 7 of 10 rounds disturbed in this sweep (its own blocks "
                            "above its steady limit)"]
    assert (g.judged, g.judged_eager) == (1, 1)  # eager: 3 of its own 10 blocks, judged


def test_a_mode_read_slower_on_a_busy_side_is_not_counted_as_judged(tmp_path):
    """The baseline's default steps 1.5x the sweep's, timed beside 1.5 busy cores, the same code:
    no verdict (diff's rule), named, and not in the count of model-modes judged (it was counted:
    'judged': 1 in the JSON beside that mode's 'no verdict')."""
    from inductor_bench.core.sweep_table import gate

    from .test_diff import base_result
    from .test_diff_compare_code import BUSY, QUIET, STEP, _compare

    def timed(name: str, steps: list[float], load: dict) -> CompareResult:
        r, _ = _compare(tmp_path, name, base_result(), steps)
        r.modes[0].paired_ms = [steps[:4], steps[4:8], steps[8:]]
        r.interleaved = {"rounds": 3, "block_steps": [4], "load": load}
        return r

    g = gate({"m": timed("old", [1.5 * x for x in STEP], BUSY)}, {"m": timed("new", STEP, QUIET)}, 10.0)
    assert g.unmeasured == ["m:default: the step time read slower in the baseline, measured on a busy or slow "
                            "machine (steps timed while other processes kept 1.5 of 2 cores busy): measure again, "
                            "or time both sides in one process (compare)"]
    assert (g.judged, g.judged_eager) == (0, 0) and not g.passed and g.regressions == []
