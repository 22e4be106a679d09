"""The sweep's pure side: shards, resuming, cell statuses, the table from saved compare results
(speedup over eager as compare reports it, busy %, top category, geomean), the gate against a
baseline, and every format of the report. No job runs here (executors: test_sweep_exec*.py)."""

from __future__ import annotations

import copy
import json
import math
import re
import statistics
from pathlib import Path

import pytest

from inductor_bench.core.errors import ResultError, UsageError
from inductor_bench.core.rundir import load_compare
from inductor_bench.core.sweep import Cell, CellStatus, Sweep, shard_of
from inductor_bench.core.sweep_cells import ended, last_error_line, progress_line
from inductor_bench.core.sweep_plan import attempt_dir, new_sweep, parse_shard, resume
from inductor_bench.core.sweep_table import build_table, gate, geomean
from inductor_bench.render.compare import render_compare
from inductor_bench.render.doc import new_doc
from inductor_bench.render.sweep import gate_line, render_sweep
from inductor_bench.render.sweep_html import cell_colour, render_sweep_html

from .steady_rule import limit

FIXTURE = Path(__file__).parent / "fixtures" / "results" / "cpu_mlp_compare" / "compare.json"


def _sweep(models=("/m/a.py", "/m/b.py"), modes=("default", "max-autotune"), **kw) -> Sweep:
    names = [Path(m).stem for m in models]
    opts = {"device": "cpu", "shard": None, "executor": "local", "created": "now", **kw}
    return new_sweep(list(models), names, list(modes), ["--train"], **opts)


# ---- the grid ------------------------------------------------------------------------------


def test_shards_are_even_contiguous_slices_covering_every_model_once():
    models = [f"m{i}" for i in range(10)]
    parts = [shard_of(models, [i, 3]) for i in (1, 2, 3)]
    assert parts == [["m0", "m1", "m2"], ["m3", "m4", "m5"], ["m6", "m7", "m8", "m9"]]
    assert shard_of(models, [1, 1]) == models and shard_of(models, None) == models
    assert [shard_of(["a", "b"], [i, 4]) for i in (1, 2, 3, 4)] == [[], ["a"], [], ["b"]]


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "a/b", "2", "1/2/3", "-1/2"])
def test_a_bad_shard_is_refused(text):
    with pytest.raises(UsageError, match="--shard"):
        parse_shard(text)


def test_a_shard_is_parsed_from_one():
    assert parse_shard("2/4") == [2, 4] and parse_shard(None) is None


def test_resume_keeps_the_done_cells_and_refuses_another_sweep():
    old = _sweep()
    old.cells[0].status = CellStatus.DONE
    old.cells[1].status = CellStatus.KILLED
    again = resume(_sweep(executor="ray"), old, "DIR")
    assert again is old and again.executor == "ray"
    assert [c.model for c in again.unfinished()] == ["b"]
    with pytest.raises(UsageError) as e:
        resume(_sweep(modes=("default",)), old, "DIR")
    assert str(e.value) == (
        "DIR holds another sweep (--modes default,max-autotune there, default here): "
        "give another --out, or the same options to resume it"
    )
    with pytest.raises(UsageError, match=r"\(models /m/b.py there, not here; --shard 1/2 here, not there\)"):
        resume(_sweep(models=("/m/a.py",), shard=[1, 2]), old, "DIR")
    assert resume(old, None, "DIR") is old


def test_another_sweep_is_refused_naming_only_the_options_that_differ():
    def refusal(old_args, new_args, **kw):
        old, new = _sweep(), _sweep(**kw)
        old.compare_args, new.compare_args = old_args, new_args
        with pytest.raises(UsageError) as e:
            resume(new, old, "DIR")
        return str(e.value).removeprefix("DIR holds another sweep (").removesuffix(
            "): give another --out, or the same options to resume it")

    line = ["--dtype", "float32", "--windows", "5", "--timeout", "900", "--step-budget", "1"]
    assert refusal(line, [*line, "--train"]) == "--train here, not there"
    assert refusal([*line, "--repeat", "3"], line) == "--repeat 3 there, not here"
    assert refusal(line, ["--dtype", "bfloat16", *line[2:]], modes=("default",)) == (
        "--modes default,max-autotune there, default here; --dtype float32 there, bfloat16 here")
    assert refusal(line, [*line[2:4], *line[:2], *line[4:]]) == (
        "--dtype float32 --windows 5 --timeout 900 --step-budget 1 there, "
        "--windows 5 --dtype float32 --timeout 900 --step-budget 1 here")
    assert refusal(line, line, models=("/m/a.py", "/m/c.py")) == "models /m/b.py there, not here; models /m/c.py here, not there"
    assert refusal(line, line, models=("/m/b.py", "/m/a.py")) == "models /m/a.py,/m/b.py there, /m/b.py,/m/a.py here"


def test_resume_compares_the_devices_the_values_run_on():
    old = _sweep(device="cpu")
    on_cpu = {"auto": "cpu"}.get
    assert resume(_sweep(device="auto"), old, "DIR", lambda d: on_cpu(d, d)) is old
    assert old.device == "cpu"  # the saved sweep's value is kept
    with pytest.raises(UsageError, match=r"\(--device cpu there, auto here\)"):
        resume(_sweep(device="auto"), old, "DIR")  # a cluster: each node resolves auto itself
    with pytest.raises(UsageError, match=r"\(--device cuda there, cpu here\)"):
        resume(_sweep(device="cpu"), _sweep(device="cuda"), "DIR", lambda d: on_cpu(d, d))


def test_attempts_get_directories_of_their_own():
    c = Cell(model="mlp", model_path="/m/mlp.py")
    assert attempt_dir(c) == "mlp"
    c.attempts = 2
    assert attempt_dir(c) == "mlp.try3"


@pytest.mark.parametrize(
    ("code", "timed_out", "status"),
    [
        (0, False, CellStatus.DONE),
        (3, False, CellStatus.FAILED),
        (4, False, CellStatus.FAILED),
        (130, False, CellStatus.INTERRUPTED),
        (143, False, CellStatus.INTERRUPTED),
        (-9, False, CellStatus.KILLED),
        (-9, True, CellStatus.TIMEOUT),
        (None, False, CellStatus.FAILED),
    ],
)
def test_a_job_s_end_sets_its_cell(code, timed_out, status):
    c = Cell(model="m", model_path="/m.py", reason="earlier")
    ended(c, code, timed_out=timed_out, reason=None)
    assert c.status == status and c.exit_code == code
    assert (c.reason is None) == (status == CellStatus.DONE)


@pytest.mark.parametrize(("code", "said", "reason"), [
    (130, "interrupted", "stopped by SIGINT"),  # compare's bare line: not "interrupted: interrupted"
    (143, None, "stopped by SIGTERM"),
    (129, "interrupted", "stopped by SIGHUP"),
    (130, "the model raised", "the model raised"),
])
def test_an_interrupted_cell_says_what_stopped_it(code, said, reason):
    c = Cell(model="m", model_path="/m.py")
    ended(c, code, timed_out=False, reason=said)
    assert (c.status, c.reason) == (CellStatus.INTERRUPTED, reason)


def test_the_progress_line_counts_every_way_a_cell_ended():
    s = _sweep(models=[f"/m/{i}.py" for i in range(7)])
    for c, st in zip(s.cells, ["done", "done", "failed", "killed", "running", "pending", "done"], strict=True):
        c.status = st
    assert progress_line(s) == "3/7 done, 1 failed, 1 killed, 1 running, 1 pending"
    assert progress_line(s, live=True) == "3/7 done, 1 failed, 1 killed"  # the rest still to come


def test_the_error_line_is_the_commands_own():
    log = "compiling ...\ninductor-bench: error: mlp.py: the model raised\nTraceback: no\n"
    assert last_error_line(log) == "error: mlp.py: the model raised"
    assert last_error_line("nothing\n") is None


def test_a_damaged_sweep_file_is_refused():
    with pytest.raises(ResultError, match="not an inductor-bench sweep"):
        Sweep.from_dict({"schema": "other"})
    with pytest.raises(ResultError, match="version 9"):
        Sweep.from_dict({"schema": "inductor-bench/sweep", "schema_version": 9})
    d = _sweep().to_dict()
    assert Sweep.from_dict(json.loads(json.dumps(d))).to_dict() == d


def test_a_sweeps_directory_given_as_one_run_says_how_to_render_it(tmp_path):
    """``report DIR`` / ``diff DIR ...`` of a sweep's directory: one line naming its report and
    the sweep command, and the runs inside, not a bare "no compare.json"."""
    (tmp_path / "sweep.json").write_text(_sweep(models=("/m/mlp.py",)).to_json())
    (tmp_path / "mlp").mkdir()
    (tmp_path / "mlp" / "compare.json").write_text(FIXTURE.read_text())
    rest = ("(the same `inductor-bench sweep` command renders it again, with --baseline OLD_DIR against "
            f"another sweep); the runs in it, newest first: {tmp_path}/mlp")
    with pytest.raises(ResultError) as e:  # a sweep copied (cp -r) before its end: no report written yet
        load_compare(tmp_path)
    assert str(e.value) == (f"{tmp_path}: a sweep's directory, not one run: it has no report yet "
                            f"({tmp_path}/report.txt is written as a sweep ends) {rest}")
    (tmp_path / "report.txt").write_text("the sweep's report\n")
    with pytest.raises(ResultError) as e:
        load_compare(tmp_path)
    assert str(e.value) == f"{tmp_path}: a sweep's directory, not one run: its report is {tmp_path}/report.txt {rest}"


# ---- the table ------------------------------------------------------------------------------


def _steady_mean(xs: list[float]) -> float:
    kept = [x for x in xs if x <= limit(xs)]
    return statistics.fmean(kept)


def _done(sweep: Sweep, run_dirs: list[str]) -> Sweep:
    for c, d in zip(sweep.cells, run_dirs, strict=True):
        c.status, c.run_dir, c.attempts = CellStatus.DONE, d, 1
    return sweep


def test_the_table_holds_compares_speedup_busy_and_top_category():
    raw = json.loads(FIXTURE.read_text())
    result = load_compare(FIXTURE)
    sweep = _done(_sweep(models=("/m/mlp.py",)), ["mlp"])
    table = build_table(sweep, {"mlp": result})
    assert table.reference == "eager" and table.modes == ["eager", "default", "max-autotune"]
    eager = _steady_mean(raw["modes"][0]["step_samples_ms"])
    for i, mode in ((1, "default"), (2, "max-autotune")):
        f = table.rows["mlp"][mode]
        expect = eager / _steady_mean(raw["modes"][i]["step_samples_ms"])
        assert f.speedup == pytest.approx(expect, rel=1e-12)
        # the speedup, its interval and verdict read as compare's own report prints them
        lo, hi = f.speedup_ci
        assert f"{f.speedup:.2f}x [{lo:.2f}x-{hi:.2f}x] ({f.verdict})" in render_compare(result)
        graphs = raw["modes"][i]["breakdown"]["graphs"]
        cats: dict[str, float] = {}
        for g in graphs:
            for k, v in g["categories"].items():
                cats[k] = cats.get(k, 0.0) + v
        top = max(cats, key=cats.get)
        assert f.top_category == top
        assert f.top_share_pct == pytest.approx(100 * cats[top] / sum(g["kernel_ms"] for g in graphs))
        assert f.busy_pct == pytest.approx(
            100 * sum(g["busy_ms"] for g in graphs) / sum(g["wall_ms"] for g in graphs)
        )
        assert f.compile_s == raw["modes"][i]["compile_s"]
        assert f.graph_breaks == len(raw["modes"][i]["breakdown"].get("extras", {}).get("graph_breaks", []))
    assert table.rows["mlp"]["eager"].speedup == 1.0 and table.rows["mlp"]["eager"].graph_breaks is None
    assert table.geomeans["default"] == (pytest.approx(table.rows["mlp"]["default"].speedup), 1)


def test_a_cell_profiled_on_a_disturbed_machine_is_marked_and_said_why():
    """The default column's graphs were profiled while other processes kept 1.5 of 2 cores busy
    (its windows' loads): its busy % and top category carry the mark and a note under the table
    says why; the undisturbed max-autotune column carries none."""
    from inductor_bench.core.load import Load

    result = load_compare(FIXTURE)
    for g in result.mode("default").breakdown.graphs:
        g.window_load = [Load(others_cores=1.5, steal_pct=0.0, cores=2)] * max(1, len(g.windows_ms))
    sweep = _done(_sweep(models=("/m/mlp.py",)), ["mlp"])
    table = build_table(sweep, {"mlp": result})
    assert table.rows["mlp"]["default"].disturbed and not table.rows["mlp"]["max-autotune"].disturbed
    text = render_sweep(table)
    row = next(ln for ln in text.splitlines() if ln.startswith("mlp") and " default " in ln)
    assert row.count("(!)") == 2
    assert not [ln for ln in text.splitlines() if ln.startswith("mlp") and "max-autotune" in ln and "(!)" in ln]
    assert ("(!) mlp default: profiled disturbed, its busy % and top category may be off: 0-forward was "
            "measured while other processes kept 1.5 of 2 cores busy") in " ".join(text.split())
    # the heatmap's tooltip marks them as the table does
    from inductor_bench.render.sweep_html import cell_tip

    tip = cell_tip(table.rows["mlp"]["default"], "eager").splitlines()
    f = table.rows["mlp"]["default"]
    assert tip[1:3] == [f"busy {f.busy_pct:.1f}% (!)", f"top category GEMM (extern) {f.top_share_pct:.0f}% (!)"]
    assert tip[-1].startswith("(!) profiled disturbed: 0-forward was measured while other processes kept 1.5")
    assert "(!)" not in cell_tip(table.rows["mlp"]["max-autotune"], "eager")


def test_compares_warning_that_its_steps_were_timed_on_a_busy_machine_is_kept():
    """default's steps timed while other processes kept 1.5 of 2 cores busy: compare warns that
    its step time may be inflated; the sweep's notes and JSON say the same of that model."""
    from inductor_bench.core.load import Load

    result = load_compare(FIXTURE)
    result.mode("default").step_load = Load(others_cores=1.5, steal_pct=0.0, cores=2)
    table = build_table(_done(_sweep(models=("/m/mlp.py",)), ["mlp"]), {"mlp": result})
    line = "default: steps timed while other processes kept 1.5 of 2 cores busy: its step time may be inflated"
    assert f"warning: {line}" in " ".join(render_compare(result).split())
    assert f"warning: mlp: {line}" in " ".join(render_sweep(table).split())
    assert json.loads(render_sweep(table, "json"))["step_disturbed"] == {"mlp": [line]}
    quiet = build_table(_done(_sweep(models=("/m/mlp.py",)), ["mlp"]), {"mlp": load_compare(FIXTURE)})
    assert quiet.step_disturbed == {} and "warning" not in render_sweep(quiet)


def test_the_geomean_is_over_the_models_that_were_timed():
    assert geomean([2.0, 0.5, 4.0]) == pytest.approx(math.exp((math.log(2) + math.log(0.5) + math.log(4)) / 3))
    assert geomean([]) is None
    result = load_compare(FIXTURE)
    sweep = _sweep(models=("/m/a.py", "/m/b.py"))
    sweep.cells[0].status, sweep.cells[0].run_dir = CellStatus.DONE, "a"
    sweep.cells[1].status, sweep.cells[1].reason = CellStatus.KILLED, "killed by signal 9"
    table = build_table(sweep, {"a": result, "b": None})
    assert table.geomeans["default"][1] == 1
    assert table.rows["b"]["default"].status == "killed"
    assert table.rows["b"]["default"].reason == "killed by signal 9"


def test_an_interleaved_compares_speedup_is_its_median_round_ratio_and_the_note_says_so():
    """Five rounds (synthetic): compare's speedup is the median of the rounds' ratios, 1 / 0.97,
    not the ratio of the two columns' step times, 1 / 0.982."""
    d = json.loads(FIXTURE.read_text())
    eager_blocks = [[1.0] * 6] * 5
    mode_blocks = [[0.95] * 6, [0.96] * 6, [0.97] * 6, [1.01] * 6, [1.02] * 6]
    d["modes"] = [d["modes"][0], d["modes"][1]]
    d["modes"][0]["paired_ms"], d["modes"][1]["paired_ms"] = eager_blocks, mode_blocks
    sweep = new_sweep(["/m/mlp.py"], ["mlp"], ["default"], [], device="cpu", shard=None,
                      executor="local", created="")
    table = build_table(_done(sweep, ["mlp"]), {"mlp": load_compare_dict(d)})
    f = table.rows["mlp"]["default"]
    step = _steady_mean([x for blk in mode_blocks for x in blk])
    assert step == pytest.approx(0.982) and f.step_ms == pytest.approx(step, rel=1e-12)
    assert f.speedup == pytest.approx(1 / 0.97, rel=1e-12) and f.speedup_rounds == 5
    assert ("speedup = compare's median over the model's interleaved rounds of eager's step time / the "
            "mode's in that round (every column timed in one process), not the ratio of the two step times; "
            "its 95% interval") in render_sweep(table)
    plain = build_table(_done(_sweep(models=("/m/mlp.py",)), ["mlp"]), {"mlp": load_compare(FIXTURE)})
    assert plain.rows["mlp"]["default"].speedup_rounds is None
    # the recorded compare's columns were timed each in its own compile worker (its report: "steps
    # timed in each column's compile worker, not interleaved"); the legend had said "every column
    # timed in one process, interleaved"
    assert ("speedup = step time of eager / step time of the mode, from each model's compare, each column's "
            "steps timed in its own compile worker (separate processes, not interleaved); its 95% "
            "interval") in render_sweep(plain)
    mixed = build_table(_done(_sweep(models=("/m/mlp.py", "/m/b.py"), modes=("default",)), ["mlp", "b"]),
                        {"mlp": load_compare_dict(d), "b": load_compare(FIXTURE)})
    assert ("(every column timed in one process), not the ratio of the two step times; where a compare was "
            "not timed in rounds (b): step time of eager / step time of the mode, from each model's compare, "
            "each column's steps timed in its own compile worker (separate processes, not interleaved); "
            "its 95% interval") in render_sweep(mixed)


def test_an_empty_shard_says_so():
    """Four shards of three models: one shard holds none, and its report says why it is empty."""
    models = ["/m/a.py", "/m/b.py", "/m/c.py"]
    held = [shard_of(models, [i, 4]) for i in range(1, 5)]
    assert held == [[], ["/m/a.py"], ["/m/b.py"], ["/m/c.py"]]
    sweep = new_sweep(models, ["a", "b", "c"], ["default"], [], device="cpu", shard=[1, 4],
                      executor="local", created="")
    assert sweep.cells == []
    text = render_sweep(build_table(sweep, {}))
    assert "shard 1/4 holds none of the 3 models given: 4 shards of 3 leave 1 empty" in text.splitlines()


def test_without_eager_the_first_mode_is_the_reference():
    result = load_compare(FIXTURE)
    sweep = new_sweep(["/m/mlp.py"], ["mlp"], ["default", "max-autotune"], ["--no-eager"], device="cpu",
                      shard=None, executor="local", created="")
    table = build_table(_done(sweep, ["mlp"]), {"mlp": result})
    raw = json.loads(FIXTURE.read_text())
    expect = _steady_mean(raw["modes"][1]["step_samples_ms"]) / _steady_mean(raw["modes"][2]["step_samples_ms"])
    assert table.reference == "default" and table.modes == ["default", "max-autotune"]
    assert table.rows["mlp"]["max-autotune"].speedup == pytest.approx(expect, rel=1e-12)
    text = render_sweep(table)
    assert "no eager column (--no-eager): speedups are over the first mode, default" in text
    # the reference is a compiled mode: its compile time is shown as the others' are
    (line,) = [ln for ln in text.splitlines() if ln.startswith("mlp ") and " default " in ln]
    assert "1.00x (reference)" in line and f"{raw['modes'][1]['compile_s']:.2f} s" in line


# ---- the gate -------------------------------------------------------------------------------


def _slowed(factor: float):
    """A copy of the recorded compare with every step of max-autotune ``factor`` times slower
    (synthetic)."""
    d = json.loads(FIXTURE.read_text())
    m = copy.deepcopy(d)
    m["modes"][2]["step_samples_ms"] = [x * factor for x in m["modes"][2]["step_samples_ms"]]
    return load_compare_dict(m)


def load_compare_dict(d: dict):
    from inductor_bench.core.compare import CompareResult

    return CompareResult.from_dict(d)


def test_the_gate_finds_a_slowdown_and_names_what_it_could_not_judge():
    base = load_compare(FIXTURE)
    g = gate({"a": base, "b": base, "c": None}, {"a": _slowed(1.5), "b": base, "c": base}, 10.0)
    assert [(r.model, r.mode) for r in g.regressions] == [("a", "max-autotune")]
    assert g.regressions[0].rel_pct == pytest.approx(50.0)
    assert g.unmeasured == ["c: no result in the baseline"]
    assert not g.passed
    calm = gate({"a": base}, {"a": _slowed(1.5)}, 60.0)
    assert calm.passed and calm.judged == 3  # eager, default, max-autotune (reduce-overhead skipped on both)


def test_a_baseline_run_another_way_is_not_comparable_without_advice_the_sweep_cannot_take():
    """A baseline model timed on another device (or as a training step against inference here)
    was named with diff's "(pass --allow-mismatch to diff them anyway)": sweep has no such
    option."""
    base = load_compare(FIXTURE)
    d = json.loads(FIXTURE.read_text())
    d["device_name"] = "another CPU"
    g = gate({"a": load_compare_dict(d)}, {"a": base}, 5.0)
    assert g.unmeasured == [f"a: not comparable: base ran on 'another CPU', head on {base.device_name!r}"]
    assert g.judged == 0 and not g.regressions


def test_a_baseline_without_a_gate_is_worded_without_one():
    """``--baseline`` alone (threshold None): every significant slowdown named, as diff names
    them without ``--fail-on-regression``; no gate said to pass or fail."""
    base = load_compare(FIXTURE)
    doc = new_doc("text")
    slow = gate({"a": base}, {"a": _slowed(1.5)}, None)
    assert slow.threshold_pct is None and [r.mode for r in slow.regressions] == ["max-autotune"]
    assert gate_line(slow, doc).startswith("REGRESSION: a:max-autotune +50.0% [")
    assert gate_line(gate({"a": base}, {"a": base}, None), doc) == (
        "NO REGRESSION against the baseline (3 model-modes judged, eager included)"
    )
    assert gate_line(gate({}, {"a": base}, None), doc) == (
        "NOT COMPARABLE: a: no result in the baseline - no verdict without them"
    )


# ---- the report -----------------------------------------------------------------------------


def _table_with_gate():
    base = load_compare(FIXTURE)
    sweep = _done(_sweep(models=("/m/mlp.py", "/m/mlp2.py")), ["mlp", "mlp2"])
    table = build_table(sweep, {"mlp": base, "mlp2": _slowed(1.5)})
    table.gate = gate({"mlp": base, "mlp2": base}, {"mlp": base, "mlp2": _slowed(1.5)}, 10.0)
    return table


def test_the_text_report_leads_with_the_gate_and_the_geomeans():
    table = _table_with_gate()
    text = render_sweep(table)
    first = text.splitlines()[0]
    assert first.startswith("REGRESSION ABOVE THE 10% GATE: mlp2:max-autotune +50.0% [")
    g = geomean([table.rows[m]["max-autotune"].speedup for m in ("mlp", "mlp2")])
    assert f"max-autotune {g:.2f}x (2 of 2 models)" in text
    assert "2/2 done" in text
    assert "mlp2     max-autotune" in text


def test_the_markdown_and_json_reports():
    table = _table_with_gate()
    md = render_sweep(table, "markdown")
    assert re.search(r"^\| mlp2 +\| max-autotune +\| 0\.\d\dx +\| \[", md, re.M)
    assert md.startswith("**REGRESSION above the 10% gate**: mlp2:max-autotune +50.0% [")
    data = json.loads(render_sweep(table, "json"))
    assert (data["schema"], data["schema_version"]) == ("inductor-bench/sweep-table", 1)  # at the top, as every JSON
    assert data["sweep"]["schema"] == "inductor-bench/sweep"
    assert data["reference"] == "eager" and len(data["cells"]) == 6
    assert data["gate"]["regressions"][0]["model"] == "mlp2"
    assert data["sweep"]["cells"][0]["status"] == "done"


def test_the_html_heatmap_colours_cells_by_speedup_and_noise():
    table = _table_with_gate()
    page = render_sweep_html(table)
    assert page.count('<td class="h"') == 2 * 2 + 2  # 2 models x 2 modes (eager is the reference), geomeans
    default = table.rows["mlp"]["default"]
    assert default.verdict == "significant" and default.speedup < 1  # this recorded run: default was slower
    assert cell_colour(default).startswith("rgba(215,58,73,")
    slow = table.rows["mlp2"]["max-autotune"]
    assert slow.speedup == pytest.approx(table.rows["mlp"]["max-autotune"].speedup / 1.5, rel=0.05)
    assert "<script" not in page.split("<main>")[1].split("<footer>")[0]  # nothing but the page's own script


def test_a_cell_compare_could_not_judge_is_blank_and_noise_is_grey():
    from inductor_bench.core.sweep_table import Figures

    assert cell_colour(Figures("m", "default", "ok", speedup=3.0, verdict="too few samples")) == ""
    assert cell_colour(Figures("m", "default", "ok", speedup=3.0, verdict="within noise")) == "rgba(160,164,170,0.35)"
    assert cell_colour(Figures("m", "default", "ok", speedup=2.0, verdict="significant")) == "rgba(45,164,78,0.85)"
    # half the log-distance to the full colour: sqrt(2) faster
    assert cell_colour(Figures("m", "default", "ok", speedup=2**0.5, verdict="significant")) == "rgba(45,164,78,0.53)"
    assert cell_colour(Figures("m", "default", "failed", reason="boom")) == ""


def test_the_table_counts_each_cells_graph_breaks():
    result = load_compare(FIXTURE)
    brk = {"file": "/m/mlp.py", "line": 9, "reason": "User-inserted graph break.", "skipped": False, "count": 1}
    result.mode("max-autotune").breakdown.graph_breaks = [brk, {**brk, "line": 12, "reason": "other"}]
    table = build_table(_done(_sweep(models=("/m/mlp.py",)), ["mlp"]), {"mlp": result})
    assert [table.rows["mlp"][m].graph_breaks for m in table.modes] == [None, 0, 2]
    rows = [ln.split() for ln in render_sweep(table).splitlines() if ln.startswith("mlp ")]
    assert [r[1] for r in rows] == ["eager", "default", "max-autotune"]
    assert [r[-2] for r in rows] == ["-", "0", "2"]  # the column before the status


def test_a_speedup_under_the_floor_never_prints_as_reaching_it():
    """default timed exactly 1.097 times as fast as eager on the CPU (a 10% floor): two decimals
    would print 1.10x, the floor itself, beside "within noise"; the sweep prints 1.097x as
    compare does, in the row, the geomean, the heatmap cell and the markdown table."""
    d = json.loads(FIXTURE.read_text())
    d["modes"][1]["step_samples_ms"] = [x / 1.097 for x in d["modes"][0]["step_samples_ms"]]
    result = load_compare_dict(d)
    table = build_table(_done(_sweep(models=("/m/mlp.py",)), ["mlp"]), {"mlp": result})
    f = table.rows["mlp"]["default"]
    assert f.speedup == pytest.approx(1.097, rel=1e-12) and f.verdict == "within noise"
    assert "1.097x" in render_compare(result)  # compare's own precision
    text = render_sweep(table)
    row = next(ln for ln in text.splitlines() if ln.startswith("mlp") and " default " in ln)
    assert row.split()[2] == "1.097x" and "1.10x" not in text
    assert "default 1.097x (1 of 1 model)" in text
    assert re.search(r"^\| mlp +\| default +\| 1\.097x +\|", render_sweep(table, "markdown"), re.M)
    page = render_sweep_html(table)
    assert 'data-speedup="' in page and ">1.097x<small>" in page and "<strong>1.097x</strong>" in page
    # away from the floor, two decimals as before
    assert row_speedup(table, "max-autotune") == f"{table.rows['mlp']['max-autotune'].speedup:.2f}x"
    assert f.min_rel == pytest.approx(0.10)


def row_speedup(table, mode: str) -> str:
    line = next(ln for ln in render_sweep(table).splitlines() if ln.startswith("mlp") and f" {mode} " in ln)
    return line.split()[2]


def test_a_job_that_crashed_with_a_traceback_gives_its_exception_line():
    """A job that died in a Python traceback before printing the tool's one line (synthetic log)
    is said to have crashed with that traceback's exception line, not 'exited with code 1'."""
    log = ("sweep: mlp started\n"
           "Traceback (most recent call last):\n"
           '  File "<string>", line 1, in <module>\n'
           "    started(x)\n"
           "TypeError: started() missing 2 required positional arguments: 'a' and 'b'\n")
    assert last_error_line(log) == ("crashed: TypeError: started() missing 2 required positional "
                                    "arguments: 'a' and 'b'")
    chained = log + "\nDuring handling of the above exception, another exception occurred:\n\n" + log.replace(
        "TypeError: started()", "RuntimeError: again")
    assert last_error_line(chained).startswith("crashed: RuntimeError: again")
    assert last_error_line("Traceback (most recent call last):\n") is None
    assert last_error_line(log + "inductor-bench: error: the model raised\n") == "error: the model raised"
