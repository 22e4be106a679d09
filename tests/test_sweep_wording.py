"""The words of a sweep's report where its counts are one or its heatmap has few colours: a
one-model sweep counts "1 model", and the heatmap's legend names only the colours its cells
have (why none is coloured, where none is). Built from the recorded CPU compare of
tests/fixtures/results/cpu_mlp_compare (torch CPU build), with the cells' statuses set by hand."""

from __future__ import annotations

import re
from pathlib import Path

from inductor_bench.commands.sweep import _exit_error
from inductor_bench.core.errors import WorkerError
from inductor_bench.core.rundir import load_compare
from inductor_bench.core.sweep import CellStatus
from inductor_bench.core.sweep_plan import new_sweep
from inductor_bench.core.sweep_table import Figures, build_table
from inductor_bench.render.sweep import render_sweep
from inductor_bench.render.sweep_html import colour_legend, render_sweep_html

FIXTURE = Path(__file__).parent / "fixtures" / "results" / "cpu_mlp_compare" / "compare.json"


def _one_model(status: str = CellStatus.DONE):
    sweep = new_sweep(["/m/mlp.py"], ["mlp"], ["default", "max-autotune"], [], device="cpu", shard=None,
                      executor="local", created="now")
    cell = sweep.cells[0]
    cell.status, cell.run_dir, cell.attempts = status, "mlp", 1
    cell.reason = None if status == CellStatus.DONE else "error: boom"
    return build_table(sweep, {"mlp": load_compare(FIXTURE) if status == CellStatus.DONE else None})


def _caption(page: str) -> str:
    return re.search(r"<figcaption>(.*?)</figcaption>", page).group(1)


def test_a_one_model_sweep_counts_one_model():
    table = _one_model()
    assert [k for _, k in table.geomeans.values()] == [1, 1]
    text = render_sweep(table)
    line = next(ln for ln in text.splitlines() if ln.startswith("Geomean speedup over eager: "))
    assert re.fullmatch(r"Geomean speedup over eager: default \d\.\d\dx \(1 of 1 model\), "
                        r"max-autotune \d\.\d\dx \(1 of 1 model\)", line), line
    assert "1 models" not in text and "1 models" not in render_sweep_html(table)
    assert "1 model x 2 modes" in text


def test_a_one_model_sweep_that_did_not_finish_says_one_model():
    err = _exit_error(_one_model(CellStatus.FAILED), None, None, Path("/tmp/out"))
    assert isinstance(err, WorkerError)
    assert str(err) == "1 of 1 model did not finish (mlp: failed); the same command retries them"


def test_the_heatmap_legend_says_why_no_cell_is_coloured():
    """Every job failed: no cell holds a speedup, so no colour is named."""
    page = render_sweep_html(_one_model(CellStatus.FAILED))
    assert _caption(page) == ("Speedup over eager: no cell is coloured: none holds a speedup compare judged, "
                              "timed by a job that ran to its end (each cell says why)")


def test_the_heatmap_legend_names_only_the_colours_its_cells_have():
    table = _one_model()
    kinds = {m: table.rows["mlp"][m].verdict for m in ("default", "max-autotune")}
    # this recorded run: both modes significantly slower than eager: no green, no grey
    assert kinds == {"default": "significant", "max-autotune": "significant"}
    assert max(table.rows["mlp"][m].speedup for m in kinds) < 1
    assert _caption(render_sweep_html(table)) == (
        "Speedup over eager: red slower (full colour at 2x); hover a cell for busy %, top category, compile time")
    cell = Figures("m", "default", "ok", speedup=0.5, verdict="significant")
    noise = Figures("m", "default", "ok", speedup=1.02, verdict="within noise")
    few = Figures("m", "default", "ok", speedup=3.0, verdict="too few samples")
    assert colour_legend([cell, noise]) == "red slower (full colour at 2x), grey within noise"
    faster = Figures("m", "default", "ok", speedup=1.5, verdict="significant")
    assert colour_legend([noise, faster, cell]) == "green faster, red slower (full colour at 2x), grey within noise"
    assert colour_legend([noise, few]) == "grey within noise"
