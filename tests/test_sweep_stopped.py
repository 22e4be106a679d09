"""A sweep's cells whose jobs did not run to their end (stopped with the sweep or on their own,
timed out, killed) after they had measured something: the figures are shown, marked with the
cell's status, and left out of the geomeans and the gate in the text, the JSON and the page;
how such a cell ended reads as one phrase; a mode measured on one side only is named by the
gate as its other reasons are. The compare results are the recorded CPU compare of
models/mlp.py; a copy with max-autotune's steps x3 is synthetic. No job runs here."""

from __future__ import annotations

import copy
import json
import math
import re
import signal
import statistics
from pathlib import Path

import pytest

from inductor_bench.core.compare import CompareResult
from inductor_bench.core.rundir import load_compare
from inductor_bench.core.sweep import Cell, CellStatus
from inductor_bench.core.sweep_cells import ended, how_it_ended
from inductor_bench.core.sweep_plan import new_sweep
from inductor_bench.core.sweep_table import build_table, comparable_results, gate
from inductor_bench.render.sweep import render_sweep
from inductor_bench.render.sweep_html import heatmap
from inductor_bench.runner import stop
from inductor_bench.runner.sweep_job import JobOutcome
from inductor_bench.runner.sweep_run import record_outcome

from .steady_rule import limit

FIXTURE = Path(__file__).parent / "fixtures" / "results" / "cpu_mlp_compare" / "compare.json"


def _steady_mean(xs: list[float]) -> float:
    return statistics.fmean([x for x in xs if x <= limit(xs)])


def _slowed(factor: float) -> CompareResult:
    d = copy.deepcopy(json.loads(FIXTURE.read_text()))
    d["modes"][2]["step_samples_ms"] = [x * factor for x in d["modes"][2]["step_samples_ms"]]
    return CompareResult.from_dict(d)


def _sweep(stopped: str) -> tuple:
    """Cell ``a`` done; cell ``b`` ended ``stopped`` after its compare saved every column's
    timing (max-autotune x3 slower)."""
    s = new_sweep(["/m/a.py", "/m/b.py"], ["a", "b"], ["default", "max-autotune"], [], device="cpu",
                  shard=None, executor="local", created="")
    a, b = s.cells
    a.status, a.run_dir, a.attempts, a.seconds = CellStatus.DONE, "a", 1, 60.0
    b.status, b.run_dir, b.attempts, b.seconds = stopped, "b", 1, 9.6
    b.reason = "stopped by SIGINT" if stopped == CellStatus.INTERRUPTED else "ran past --job-timeout and was killed"
    return s, {"a": load_compare(FIXTURE), "b": _slowed(3.0)}


@pytest.mark.parametrize("stopped", [CellStatus.INTERRUPTED, CellStatus.TIMEOUT, CellStatus.KILLED])
def test_a_cell_stopped_after_its_timing_is_marked_and_left_out_of_the_geomean(stopped):
    sweep, results = _sweep(stopped)
    raw = json.loads(FIXTURE.read_text())
    eager = _steady_mean(raw["modes"][0]["step_samples_ms"])
    a_default = eager / _steady_mean(raw["modes"][1]["step_samples_ms"])
    a_max = eager / _steady_mean(raw["modes"][2]["step_samples_ms"])
    b_max = eager / _steady_mean([3.0 * x for x in raw["modes"][2]["step_samples_ms"]])
    table = build_table(sweep, results)
    # the geomeans are cell a's alone
    assert table.geomeans["default"] == (pytest.approx(a_default, rel=1e-12), 1)
    assert table.geomeans["max-autotune"] == (pytest.approx(a_max, rel=1e-12), 1)
    # b's figures stay, marked with its status
    fb = table.rows["b"]["max-autotune"]
    assert fb.speedup == pytest.approx(b_max, rel=1e-12)
    assert fb.status == stopped and "left out of the geomean" in fb.reason
    assert [f.status for f in table.rows["a"].values()] == ["ok"] * 3
    assert (table.rows["b"]["eager"].status, table.rows["b"]["eager"].reason) == (stopped, None)
    # text: the geomean line, the row's status, the note on the cell
    text = render_sweep(table)
    assert f"max-autotune {a_max:.2f}x (1 of 2 models)" in text
    row = next(ln for ln in text.splitlines() if ln.startswith("b ") and "max-autotune" in ln)
    assert f"{b_max:.2f}x" in row and row.endswith(f"{stopped}: left out of the geomean")
    note = next(ln for ln in text.splitlines() if ln.startswith("b: "))
    assert f"what it measured is shown, marked {stopped}, left out of the geomeans and the gate" in note
    assert "geomean over the models where the mode was timed by a job that ran to its end" in " ".join(text.split())
    # JSON: the same statuses, and the geomean recomputed from its cells with status ok
    d = json.loads(render_sweep(table, "json"))
    ok_max = [c["speedup"] for c in d["cells"] if c["mode"] == "max-autotune" and c["status"] == "ok"]
    assert ok_max == [pytest.approx(a_max, rel=1e-12)]
    assert d["geomean_speedup"]["max-autotune"] == {"geomean": pytest.approx(a_max, rel=1e-12), "models": 1,
                                                    "left_out": {}}
    # the page: b's cells uncoloured and marked, the geomean cell a's
    page = heatmap(table)
    b_row = re.search(r"<tr><th>b</th>(.*?)</tr>", page, re.S).group(1)
    assert "background" not in b_row and b_row.count(f"{stopped}: not in the geomean") == 2
    a_row = re.search(r"<tr><th>a</th>(.*?)</tr>", page, re.S).group(1)
    assert a_row.count("background") == 2
    assert f"<strong>{a_max:.2f}x</strong>" in page


def test_the_gate_judges_only_cells_whose_jobs_ran_to_their_end():
    """b's job was interrupted after timing a 3x slower max-autotune: not a regression to name,
    a model with no result (the gate fails as not comparable)."""
    sweep, results = _sweep(CellStatus.INTERRUPTED)
    base = {"a": load_compare(FIXTURE), "b": load_compare(FIXTURE)}
    g = gate(base, comparable_results(sweep, results), 10.0)
    assert g.regressions == [] and g.unmeasured == ["b: no result in this sweep"]
    assert comparable_results(sweep, results)["a"] is results["a"]


def test_a_failed_cell_keeps_its_timed_modes_in_the_geomean():
    """A compare that exited with its own error (one mode failed) ran to its end: the modes it
    timed count."""
    sweep, results = _sweep(CellStatus.INTERRUPTED)
    sweep.cells[1].status, sweep.cells[1].reason = CellStatus.FAILED, "error: max-autotune failed"
    table = build_table(sweep, results)
    raw = json.loads(FIXTURE.read_text())
    eager = _steady_mean(raw["modes"][0]["step_samples_ms"])
    a_max = eager / _steady_mean(raw["modes"][2]["step_samples_ms"])
    b_max = eager / _steady_mean([3.0 * x for x in raw["modes"][2]["step_samples_ms"]])
    assert table.geomeans["max-autotune"] == (pytest.approx(math.sqrt(a_max * b_max), rel=1e-12), 2)


@pytest.mark.parametrize("said", [
    "interrupted",
    "error: interrupted; what was measured is saved in /s/mlp",
    "error: interrupted; what was measured is saved in /s/mlp (by SIGTERM)",
])
def test_compares_own_stop_line_is_not_the_reason(said):
    c = Cell(model="mlp", model_path="/m/mlp.py", run_dir="mlp", seconds=9.6)
    ended(c, 130, timed_out=False, reason=said)
    assert (c.status, c.reason) == (CellStatus.INTERRUPTED, "stopped by SIGINT")
    assert how_it_ended(c, "9.6 s", "/s/mlp") == (
        "interrupted: stopped by SIGINT after 9.6 s; what was measured is saved in /s/mlp"
    )
    assert how_it_ended(c, "9.6 s") == "interrupted: stopped by SIGINT after 9.6 s"


def test_a_job_stopped_past_its_time_limit_says_so_once():
    """compare's own stop line is not the reason of a job stopped past --job-timeout either."""
    c = Cell(model="mlp", model_path="/m/mlp.py", run_dir="mlp")
    ended(c, 130, timed_out=True, reason="error: interrupted; what was measured is saved in /s/mlp")
    assert (c.status, c.reason) == (CellStatus.TIMEOUT, "ran past --job-timeout and was stopped")
    assert how_it_ended(c, "40.4 s", "/s/mlp") == (
        "timeout: ran past --job-timeout and was stopped after 40.4 s; what was measured is saved in /s/mlp"
    )


def test_a_job_stopped_with_the_sweep_names_the_sweeps_signal(tmp_path, monkeypatch):
    """SIGTERM to the sweep: each job is stopped as Ctrl-C stops compare (SIGINT, exit 130);
    the cell says what stopped the sweep."""
    monkeypatch.setattr(stop, "received", lambda: signal.SIGTERM)
    c = Cell(model="mlp", model_path="/m/mlp.py", run_dir="mlp")
    log = "running ...\ninductor-bench: error: interrupted; what was measured is saved in /s/mlp\n"
    record_outcome(tmp_path, c, JobOutcome(exit_code=130, stopped=True, seconds=9.64, log=log))
    assert (c.status, c.reason, c.seconds) == (CellStatus.INTERRUPTED, "stopped by SIGTERM", 9.64)
    assert (tmp_path / "logs" / "mlp.log").read_text() == log


def test_a_job_stopped_before_it_measured_anything_claims_nothing_measured(tmp_path, capsys):
    """Stopped while its first column ran: the compare saved only columns marked not run. The
    note and the progress line do not say that what it measured is shown or saved; a job that
    had measured a column says where."""
    from inductor_bench.commands.sweep_options import ExecutorKind
    from inductor_bench.commands.sweep_progress import print_event

    sweep, results = _sweep(CellStatus.INTERRUPTED)
    d = json.loads(FIXTURE.read_text())
    for m in d["modes"]:
        m["status"] = "interrupted"
    results["b"] = CompareResult.from_dict(d)
    note = next(ln for ln in render_sweep(build_table(sweep, results)).splitlines() if ln.startswith("b: "))
    assert note == "b: interrupted: stopped by SIGINT after 9.60 s (b)"
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "compare.json").write_text(json.dumps(d))
    say = print_event(ExecutorKind.local, tmp_path, queued=False)
    say("end", sweep.cells[1], sweep)
    (tmp_path / "b" / "compare.json").write_text(FIXTURE.read_text())
    say("end", sweep.cells[1], sweep)
    assert capsys.readouterr().err.splitlines() == [  # the time as the note says it
        "sweep: b interrupted: stopped by SIGINT after 9.60 s; 1/2 done, 1 interrupted",
        f"sweep: b interrupted: stopped by SIGINT after 9.60 s; what was measured is saved in {tmp_path / 'b'}; "
        "1/2 done, 1 interrupted",
    ]


def _stopped_three_times(tmp_path: Path) -> tuple:
    """Cell ``a`` done; ``b``'s first two attempts timed every column (max-autotune x3, then
    x2) and were stopped; its third (``b.try3``) was stopped after eager alone."""
    sweep, _ = _sweep(CellStatus.INTERRUPTED)
    b = sweep.cells[1]
    b.attempts, b.run_dir = 3, "b.try3"
    raw = json.loads(FIXTURE.read_text())
    for run_dir, factor in (("a", 1.0), ("b", 3.0), ("b.try2", 2.0), ("b.try3", None)):
        d = copy.deepcopy(raw)
        if factor is None:
            for m in d["modes"][1:3]:
                m["status"], m["step_samples_ms"], m["breakdown"] = "interrupted", [], None
        else:
            d["modes"][2]["step_samples_ms"] = [x * factor for x in d["modes"][2]["step_samples_ms"]]
        (tmp_path / run_dir).mkdir()
        (tmp_path / run_dir / "compare.json").write_text(json.dumps(d))
    return sweep, raw


def test_the_page_links_each_model_to_the_attempt_whose_figures_it_shows(tmp_path):
    """b's figures are b.try2's: its link on the page went to b.try3/index.html, the last
    attempt's page, which holds eager alone. It now goes to b.try2's, and says so; a's, whose
    last attempt is shown, to its own."""
    from inductor_bench.render.sweep_html import render_sweep_html
    from inductor_bench.runner.sweep_run import read_results

    sweep, _ = _stopped_three_times(tmp_path)
    results, _, shown_from = read_results(tmp_path, sweep)
    page = render_sweep_html(build_table(sweep, results, shown_from))
    assert re.findall(r'<a href="([^"]+)"[^>]*>([^<]+)</a>', page) == [
        ("a/index.html", "a: compare report"),
        ("b.try2/index.html", "b: compare report of b.try2, whose figures are shown"),
    ]


def test_a_cell_stopped_again_shows_the_newest_attempt_that_measured_the_most(tmp_path):
    """b's first two attempts timed every column (max-autotune x3, then x2) and were stopped;
    its third was stopped after eager alone. The table showed that third attempt's eager and
    nothing else, though b.try2 held every figure: it now shows b.try2's (the newest of the
    attempts that measured the most), marked, and the note names that directory."""
    from inductor_bench.runner.sweep_run import read_results

    sweep, raw = _stopped_three_times(tmp_path)
    b = sweep.cells[1]
    results, unread, shown_from = read_results(tmp_path, sweep)
    assert (unread, shown_from) == ({}, {"b": "b.try2"})
    table = build_table(sweep, results, shown_from)
    eager = _steady_mean(raw["modes"][0]["step_samples_ms"])
    b_max = eager / _steady_mean([2.0 * x for x in raw["modes"][2]["step_samples_ms"]])
    fb = table.rows["b"]["max-autotune"]
    assert fb.speedup == pytest.approx(b_max, rel=1e-12)
    assert (fb.status, fb.reason) == (CellStatus.INTERRUPTED, "left out of the geomean")
    assert table.geomeans["max-autotune"][1] == 1
    note = next(ln for ln in render_sweep(table).splitlines() if ln.startswith("b: "))
    assert note.endswith("(b.try3); what it measured is shown, marked interrupted, left out of the geomeans "
                         "and the gate (the same command runs it again); the figures shown are b.try2's, "
                         "an earlier attempt that measured more columns")
    assert json.loads(render_sweep(table, "json"))["shown_from"] == {"b": "b.try2"}
    # a done cell, or one whose last attempt measured as much, shows its last attempt
    b.status = CellStatus.FAILED
    assert read_results(tmp_path, sweep)[2] == {}


def test_a_mode_measured_on_one_side_is_named_as_the_gates_other_reasons_are():
    """A mode that failed in this sweep is named model:mode and by the gate's sides, as a mode
    with most rounds disturbed is (it read 'a: default: the step not measured in head (...)'
    beside 'b:default: ... in this sweep', diff's base and head in the sweep's line)."""
    base = load_compare(FIXTURE)
    d = json.loads(FIXTURE.read_text())
    d["modes"][1]["status"], d["modes"][1]["reason"] = "failed", "error: the model raised"
    g = gate({"a": base}, {"a": CompareResult.from_dict(d)}, 10.0)
    assert g.unmeasured == ["a:default: the step not measured in this sweep (failed: error: the model raised)"]
    g = gate({"a": CompareResult.from_dict(d)}, {"a": base}, 10.0)
    assert g.unmeasured == ["a:default: the step not measured in the baseline (failed: error: the model raised)"]
    assert not g.passed and g.judged == 2  # eager and max-autotune


def test_a_column_the_compare_left_interrupted_takes_the_cells_status():
    """A job stopped past --job-timeout stops its compare as Ctrl-C does, so the compare calls
    its unfinished column interrupted: the row reads the cell's 'timeout' as the others do (it
    read 'interrupted: not run: ...' under the cell's 'timeout' eager row)."""
    sweep, results = _sweep(CellStatus.TIMEOUT)
    d = json.loads(FIXTURE.read_text())
    d["modes"][2]["status"], d["modes"][2]["reason"] = "interrupted", "not run: the compare was interrupted"
    results["b"] = CompareResult.from_dict(d)
    rows = build_table(sweep, results).rows["b"]
    assert [(m, f.status) for m, f in rows.items()] == [
        ("eager", "timeout"), ("default", "timeout"), ("max-autotune", "timeout")]
    assert rows["max-autotune"].reason == "not run: the compare was interrupted"
    stopped, _ = _sweep(CellStatus.INTERRUPTED)
    assert build_table(stopped, results).rows["b"]["max-autotune"].status == "interrupted"
