"""The report of a sweep stopped part way (hand-built, synthetic: no job runs): the summary
counts every cell, the pending ones too; the reference row of a cell whose job did not run to
its end reads no 1.00x, nor does its JSON hold 1.0; the legend defines a speedup only where a
cell has one (or the rounds of one, too disturbed to give it), and the other columns' figures
only where a cell has them. The compare results are the recorded CPU compare of
models/mlp.py, cut and edited as each test says."""

from __future__ import annotations

import json
from pathlib import Path

from inductor_bench.core.compare import CompareResult
from inductor_bench.core.sweep import CellStatus
from inductor_bench.core.sweep_cells import progress_line
from inductor_bench.core.sweep_plan import new_sweep
from inductor_bench.core.sweep_table import build_table
from inductor_bench.render.sweep import render_sweep
from inductor_bench.render.sweep_html import render_sweep_html

FIXTURE = Path(__file__).parent / "fixtures" / "results" / "cpu_mlp_compare" / "compare.json"
NOT_RUN = "not run: the compare was interrupted before this column finished"
NO_SPEEDUP_NOTE = "no speedup: no model's compare timed another mode beside eager (each row's status says why)"


def _eager_then_stopped() -> CompareResult:
    """Eager timed, default left interrupted before it ran (as compare saves a Ctrl-C)."""
    d = json.loads(FIXTURE.read_text())
    d["modes"] = d["modes"][:2]
    d["modes"][1].update(status="interrupted", reason=NOT_RUN, compile_s=None, step_samples_ms=[],
                         breakdown=None)
    return CompareResult.from_dict(d)


def _default_mostly_disturbed() -> dict:
    """Both columns timed in 10 interleaved rounds, 9 of default's blocks stalled."""
    d = json.loads(FIXTURE.read_text())
    d["modes"] = d["modes"][:2]
    d["modes"][0]["paired_ms"] = [[1.85] * 6 for _ in range(10)]
    d["modes"][1]["paired_ms"] = [[1.85, 1.85] + [50.0] * 4 for _ in range(9)] + [[1.85] * 6]
    return d


def _stopped_sweep(first: str = CellStatus.INTERRUPTED):
    """mlp ended ``first`` after timing eager alone; transformer_block never reached."""
    s = new_sweep(["/m/mlp.py", "/m/transformer_block.py"], ["mlp", "transformer_block"], ["default"], [],
                  device="cpu", shard=None, executor="local", created="")
    mlp = s.cells[0]
    mlp.status, mlp.run_dir, mlp.attempts, mlp.seconds, mlp.reason = first, "mlp", 1, 15.59, "stopped by SIGINT"
    return s, {"mlp": _eager_then_stopped(), "transformer_block": None}


def _rows(text: str) -> dict[tuple[str, str], list[str]]:
    rows = {}
    for ln in text.splitlines():
        cols = ln.split("  ")
        parts = [c.strip() for c in cols if c.strip()]
        if len(parts) >= 3 and parts[1] in ("eager", "default") and parts[0] in ("mlp", "transformer_block"):
            rows[parts[0], parts[1]] = parts
    return rows


def test_the_summary_counts_the_pending_cells_of_a_stopped_sweep():
    sweep, results = _stopped_sweep()
    assert progress_line(sweep) == "0/2 done, 1 interrupted, 1 pending"
    assert render_sweep(build_table(sweep, results)).splitlines()[1] == "0/2 done, 1 interrupted, 1 pending"
    # a line of a sweep under way leaves the cells still to come to its 'k/N done'
    assert progress_line(sweep, live=True) == "0/2 done, 1 interrupted"
    sweep.cells[1].status = CellStatus.RUNNING
    assert progress_line(sweep) == "0/2 done, 1 interrupted, 1 running"


def test_the_reference_row_of_a_stopped_cell_reads_no_speedup():
    for stopped in (CellStatus.INTERRUPTED, CellStatus.TIMEOUT, CellStatus.KILLED):
        sweep, results = _stopped_sweep(stopped)
        table = build_table(sweep, results)
        assert table.rows["mlp"]["eager"].status == stopped
        rows = _rows(render_sweep(table))
        assert rows["mlp", "eager"][2] == "- (reference)" and rows["mlp", "eager"][-1] == stopped
        assert rows["transformer_block", "eager"][2] == "- (reference)"
    # a cell that ran to its end keeps its 1.00x
    done, _ = _stopped_sweep()
    done.cells[0].status, done.cells[0].reason = CellStatus.DONE, None
    ok = _rows(render_sweep(build_table(done, {"mlp": CompareResult.from_dict(json.loads(FIXTURE.read_text()))})))
    assert ok["mlp", "eager"][2] == "1.00x (reference)"


def test_with_no_speedup_anywhere_the_legend_defines_none():
    sweep, results = _stopped_sweep()
    lines = render_sweep(build_table(sweep, results)).splitlines()
    assert NO_SPEEDUP_NOTE in lines
    assert not [ln for ln in lines if ln.startswith("speedup =")]


def test_with_every_speedup_too_disturbed_the_legend_is_the_rounds_one():
    """Both columns timed in 10 interleaved rounds, 9 of default's blocks stalled: n/m, whose
    note speaks of rounds; the legend says what the speedup over those rounds would have been."""
    d = _default_mostly_disturbed()
    sweep = new_sweep(["/m/mlp.py"], ["mlp"], ["default"], [], device="cpu", shard=None, executor="local",
                      created="")
    sweep.cells[0].status, sweep.cells[0].run_dir, sweep.cells[0].attempts = CellStatus.DONE, "mlp", 1
    table = build_table(sweep, {"mlp": CompareResult.from_dict(d)})
    assert table.rows["mlp"]["default"].no_speedup == "9 of 10 rounds disturbed"
    lines = render_sweep(table).splitlines()
    assert ("speedup = compare's median over the model's interleaved rounds of eager's step "
                             "time / the mode's in that round (every column timed in one process), not the "
                             "ratio of the two step times; its 95% interval and verdict are compare's "
                             "(docs/compare-and-diff.md); geomean over the models where the mode was timed by "
                             "a job that ran to its end") in lines
    assert NO_SPEEDUP_NOTE not in lines


def _cells_json(table) -> dict[tuple[str, str], dict]:
    return {(c["model"], c["mode"]): c for c in json.loads(render_sweep(table, "json"))["cells"]}


def test_the_json_gives_a_stopped_cells_reference_no_speedup():
    """As its row reads '- (reference)': null, the status saying why; not a measured 1.0."""
    for stopped in (CellStatus.INTERRUPTED, CellStatus.TIMEOUT, CellStatus.KILLED):
        sweep, results = _stopped_sweep(stopped)
        cells = _cells_json(build_table(sweep, results))
        assert (cells["mlp", "eager"]["speedup"], cells["mlp", "eager"]["status"]) == (None, stopped)
        assert cells["mlp", "eager"]["step_ms"] is not None  # what it measured is still shown
        assert (cells["transformer_block", "eager"]["speedup"],
                cells["transformer_block", "eager"]["status"]) == (None, CellStatus.PENDING)
    done, _ = _stopped_sweep()
    done.cells[0].status, done.cells[0].reason = CellStatus.DONE, None
    full = CompareResult.from_dict(json.loads(FIXTURE.read_text()))
    cells = _cells_json(build_table(done, {"mlp": full}))
    assert (cells["mlp", "eager"]["speedup"], cells["mlp", "eager"]["status"]) == (1.0, "ok")


def test_the_html_page_of_a_stopped_sweep_draws_its_cells_by_their_status():
    sweep, results = _stopped_sweep()
    page = render_sweep_html(build_table(sweep, results))
    assert 'data-speedup="">interrupted</td>' in page and 'data-speedup="">pending</td>' in page


FIGURES_NOTE = ("busy % and top category (share of kernel time): from each mode's breakdown; compile: the first "
                "call, timed on its own; graph breaks: the distinct breaks Dynamo met compiling it (each one's "
                "place and reason: that model's compare report)")


def test_the_legend_names_only_the_columns_a_cell_has_figures_in():
    sweep, results = _stopped_sweep()  # eager alone timed, no breakdown, nothing compiled
    lines = render_sweep(build_table(sweep, results)).splitlines()
    assert not [ln for ln in lines if "busy %" in ln and "breakdown" in ln or "compile: " in ln]
    # compiled, no breakdown profiled: the compile figure alone
    d = json.loads(FIXTURE.read_text())
    for m in d["modes"]:
        m["breakdown"] = None
    sweep.cells[0].status, sweep.cells[0].reason = CellStatus.DONE, None
    lines = render_sweep(build_table(sweep, {"mlp": CompareResult.from_dict(d)})).splitlines()
    assert "compile: the first call, timed on its own" in lines
    assert not [ln for ln in lines if "busy % and top category" in ln]
    # every figure: the whole legend
    full = CompareResult.from_dict(json.loads(FIXTURE.read_text()))
    assert FIGURES_NOTE in render_sweep(build_table(sweep, {"mlp": full})).splitlines()


def test_the_heatmap_caption_offers_on_hover_only_what_a_cell_holds():
    sweep, results = _stopped_sweep()
    # no cell coloured: no colour named, nothing to hover for
    assert ("<figcaption>Speedup over eager: no cell is coloured: none holds a speedup compare judged, timed by "
            "a job that ran to its end (each cell says why)</figcaption>") in render_sweep_html(build_table(sweep, results))
    sweep.cells[0].status, sweep.cells[0].reason = CellStatus.DONE, None
    full = CompareResult.from_dict(json.loads(FIXTURE.read_text()))
    page = render_sweep_html(build_table(sweep, {"mlp": full}))  # default significantly slower: red alone
    assert "eager: red slower (full colour at 2x); hover a cell for busy %, top category, compile time</figcaption>" in page


def test_a_mode_with_no_geomean_reads_its_count():
    """'-' alone said nothing of why: no model's job ran to its end, or each was left out."""
    sweep, results = _stopped_sweep()
    first = render_sweep(build_table(sweep, results)).splitlines()[0]
    assert first == "Geomean speedup over eager: default - (0 of 2 models)"
    d = _default_mostly_disturbed()
    sweep.cells[0].status, sweep.cells[0].reason = CellStatus.DONE, None
    first = render_sweep(build_table(sweep, {"mlp": CompareResult.from_dict(d)})).splitlines()[0]
    assert first == "Geomean speedup over eager: default - (0 of 2 models; mlp left out: 9 of 10 rounds disturbed)"


def test_the_tooltip_of_a_cell_with_no_figure_says_so():
    from inductor_bench.render.sweep_html import cell_tip

    sweep, results = _stopped_sweep()
    table = build_table(sweep, results)
    assert cell_tip(table.rows["mlp"]["default"], "eager").splitlines() == [
        "mlp, default: no speedup over eager", f"interrupted: {NOT_RUN}"]
    assert cell_tip(table.rows["transformer_block"]["default"], "eager").splitlines() == [
        "transformer_block, default: no speedup over eager", "pending: not run yet"]
