"""`inductor-bench sweep` on the command line without compiling: a sweep whose cells are all
done only renders (no job, no executor), the gate against a baseline sweep exits 1 on a
regression and 5 on a model measured on one side only, bad input is one line and exit 2.
The saved compare results are the recorded CPU compare of models/mlp.py; a slowed copy of it
is synthetic (its max-autotune steps x1.5)."""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench.commands.sweep_options import compare_args
from inductor_bench.commands.sweep_setup import plan_sweep
from inductor_bench.core.sweep import CellStatus
from inductor_bench.runner.compare_timer import STEP_BUDGET_S
from inductor_bench.runner.sweep_exec import local_device
from inductor_bench.runner.window_plan import DEFAULT_WINDOWS
from inductor_bench.runner.worker import DEFAULT_TIMEOUT_S

from .steady_rule import limit
from .sweep_helpers import FIXTURE

ROOT = Path(__file__).resolve().parents[1]
MODELS = [ROOT / "models" / "mlp.py", ROOT / "models" / "transformer_block.py"]
MODES = "default,max-autotune"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "inductor_bench", "sweep", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _done_sweep(d: Path, slowed: float = 1.0, models=MODELS, batch_size: int | None = None) -> Path:
    """A sweep directory as `sweep MODELS --modes default,max-autotune --device cpu` (``models``)
    leaves it when every cell is done, each cell's compare the recorded one (max-autotune x
    ``slowed``; its batch size ``batch_size`` where given)."""
    args = compare_args(
        False,
        "float32",
        False,
        None,
        False,
        False,
        None,
        STEP_BUDGET_S,
        None,
        DEFAULT_WINDOWS,
        DEFAULT_TIMEOUT_S,
        False,
    )
    plan = plan_sweep(list(models), MODES, False, "cpu", False, "float32", False, None, False, args, None, "local")
    d.mkdir()
    for c in plan.cells:
        c.status, c.run_dir, c.attempts = CellStatus.DONE, c.model, 1
        (d / c.model).mkdir()
        data = json.loads(Path(FIXTURE).read_text())
        data["modes"][2]["step_samples_ms"] = [x * slowed for x in data["modes"][2]["step_samples_ms"]]
        data["batch_size"] = batch_size if batch_size is not None else data["batch_size"]
        (d / c.model / "compare.json").write_text(json.dumps(data))
    (d / "sweep.json").write_text(plan.to_json())
    return d


def _argv(out: Path, *more: str) -> list[str]:
    return [*map(str, MODELS), "--modes", MODES, "--device", "cpu", "--out", str(out), *more]


def test_a_finished_sweep_only_renders_its_report(tmp_path):
    d = _done_sweep(tmp_path / "s")
    r = _cli(*_argv(d), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "sweep: 2 models x 2 modes, 2 done before, 0 to run on the local executor\n"
    assert r.stdout.startswith(
        "Geomean speedup over eager: default 0.90x (2 of 2 models), max-autotune 0.63x"
    )
    assert (d / "report.txt").read_text() == r.stdout
    assert "heat" in (d / "index.html").read_text()
    assert not (d / "logs").exists()  # no job ran


def test_the_gate_fails_on_a_regression_against_the_baseline(tmp_path):
    old = _done_sweep(tmp_path / "old")
    new = _done_sweep(tmp_path / "new", slowed=1.5)
    r = _cli(*_argv(new, "--baseline", str(old), "--fail-on-regression", "10"), cwd=tmp_path)
    assert r.returncode == 1
    assert r.stderr.splitlines()[-1] == (
        "inductor-bench: error: significant step-time regression above 10%: "
        "mlp:max-autotune: step time 4.478 -> 6.716 ms: +50.0% of the step (the real model call); "
        "transformer_block:max-autotune: step time 4.478 -> 6.716 ms: +50.0% of the step (the real model call)"
    )
    assert r.stdout.startswith("REGRESSION ABOVE THE 10% GATE: mlp:max-autotune +50.0% [")
    calm = _cli(
        *_argv(new, "--baseline", str(old), "--fail-on-regression", "60", "--format", "json"), cwd=tmp_path
    )
    assert calm.returncode == 0 and json.loads(calm.stdout)["gate"]["judged"] == 6
    # a report, not a gate: worded as diff words it without one, no "0% gate" beside exit 0
    shown = _cli(*_argv(new, "--baseline", str(old)), cwd=tmp_path)
    assert shown.returncode == 0 and shown.stdout.startswith("REGRESSION: mlp:max-autotune +50.0% [")
    assert "GATE" not in shown.stdout.splitlines()[0]
    data = _cli(*_argv(new, "--baseline", str(old), "--format", "json"), cwd=tmp_path)
    assert json.loads(data.stdout)["gate"]["threshold_pct"] is None


def test_a_baseline_that_is_not_there_or_is_the_sweep_itself_says_so(tmp_path):
    """A --baseline path that does not exist is named as such (it read 'not a sweep's directory
    (no sweep.json)'); a --baseline that is this sweep's own --out judges each model against
    itself, so no change can show: a note says so, as diff says of BASE and HEAD that are one
    result (the gate passed in silence)."""
    new = _done_sweep(tmp_path / "new", slowed=1.5)
    gone = tmp_path / "old"
    r = _cli(*_argv(new, "--baseline", str(gone), "--fail-on-regression", "10"), cwd=tmp_path)
    assert (r.returncode, r.stderr) == (2, f"inductor-bench: error: --baseline {gone}: no such directory\n")
    r = _cli(*_argv(new, "--baseline", str(new), "--fail-on-regression", "10"), cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("NO REGRESSION above the 10% gate")
    assert (f"note: --baseline {new} is this sweep's own --out: each model is judged against itself, so no "
            "change can show; give the earlier sweep's directory") in r.stderr.splitlines()


def test_the_gate_names_the_workload_options_the_baseline_sweep_was_given_otherwise(tmp_path):
    """A baseline sweep given --batch-size 64 (the factory's default) beside one given none ran
    the same workload, as their results record it: judged, the options named."""
    old = _done_sweep(tmp_path / "old", batch_size=64)
    saved = json.loads((old / "sweep.json").read_text())
    saved["compare_args"] = [*saved["compare_args"], "--batch-size", "64"]
    (old / "sweep.json").write_text(json.dumps(saved))
    new = _done_sweep(tmp_path / "new", batch_size=64)
    r = _cli(*_argv(new, "--baseline", str(old)), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == (
        "NO REGRESSION against the baseline (6 model-modes judged, eager included) (the baseline sweep's workload "
        "options: --batch-size 64 there, not here)"
    )
    data = _cli(*_argv(new, "--baseline", str(old), "--format", "json"), cwd=tmp_path)
    gate = json.loads(data.stdout)["gate"]
    assert (gate["settings"], gate["other_workload"]) == (["--batch-size 64 there, not here"], [])


def _steady_ms(xs: list[float]) -> float:
    """A step figure by docs/statistics.md: the mean of the samples within the limit."""
    return statistics.fmean([x for x in xs if x <= limit(xs)])


def test_a_baseline_of_another_workload_is_not_judged_and_fails_the_gate(tmp_path):
    """A baseline that ran batch 128 against this sweep's batch 64 was judged faster or slower
    all the same (its max-autotune x1.5 here read as a regression): it is not comparable, each
    mode's step times shown side by side, no regression named; the gate fails with one line,
    exit 5."""
    old = _done_sweep(tmp_path / "old", batch_size=128)
    new = _done_sweep(tmp_path / "new", slowed=1.5, batch_size=64)
    raw = json.loads(Path(FIXTURE).read_text())["modes"]
    steps = [(m["mode"], _steady_ms(m["step_samples_ms"]), _steady_ms(
        [x * (1.5 if i == 2 else 1.0) for x in m["step_samples_ms"]])) for i, m in enumerate(raw[:3])]
    r = _cli(*_argv(new, "--baseline", str(old), "--fail-on-regression", "10"), cwd=tmp_path)
    assert r.returncode == 5, r.stderr
    assert r.stderr.splitlines()[-1] == (
        "inductor-bench: error: no verdict: mlp: the baseline ran another workload: batch size 128 -> 64; "
        "transformer_block: the baseline ran another workload: batch size 128 -> 64"
    )
    side = ", ".join(f"{mode} {b:.4g} -> {h:.4g} ms" for mode, b, h in steps)
    assert r.stdout.splitlines()[0] == (
        "NOT COMPARABLE, SO THE 10% GATE FAILS: "
        f"mlp: the baseline ran another workload: batch size 128 -> 64 ({side}, not judged); "
        f"transformer_block: the baseline ran another workload: batch size 128 -> 64 ({side}, not judged) "
        "- no verdict without them"
    )
    data = _cli(*_argv(new, "--baseline", str(old), "--format", "json"), cwd=tmp_path)
    assert data.returncode == 0, data.stderr  # a report, not a gate
    gate = json.loads(data.stdout)["gate"]
    assert (gate["regressions"], gate["judged"], gate["unmeasured"]) == ([], 0, [])
    assert [o["model"] for o in gate["other_workload"]] == ["mlp", "transformer_block"]
    assert gate["other_workload"][0]["changes"] == ["batch size 128 -> 64"]
    assert gate["other_workload"][0]["steps"] == [list(x) for x in steps]


def _not_comparable_against(old: Path, tmp_path: Path) -> None:
    """A finished sweep gated against ``old``, which has no result of transformer_block: exit 5."""
    new = _done_sweep(tmp_path / "new")
    r = _cli(*_argv(new, "--baseline", str(old), "--fail-on-regression", "10"), cwd=tmp_path)
    assert r.returncode == 5
    assert (
        r.stderr.splitlines()[-1]
        == "inductor-bench: error: no verdict: transformer_block: no result in the baseline"
    )


def test_a_model_missing_from_the_baseline_is_not_comparable(tmp_path):
    old = _done_sweep(tmp_path / "old", models=MODELS[:1])
    _not_comparable_against(old, tmp_path)


def test_a_regression_beside_a_model_missing_from_the_baseline_names_both(tmp_path):
    """mlp's max-autotune +50% and transformer_block, absent from the baseline: the report and
    the error line named the regression alone, and no line said that transformer_block was not
    judged. Both now say it (exit 1: a regression is a regression)."""
    old = _done_sweep(tmp_path / "old", models=MODELS[:1])
    new = _done_sweep(tmp_path / "new", slowed=1.5)
    r = _cli(*_argv(new, "--baseline", str(old), "--fail-on-regression", "10"), cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert r.stderr.splitlines()[-1] == (
        "inductor-bench: error: significant step-time regression above 10%: mlp:max-autotune: step time 4.478 -> "
        "6.716 ms: +50.0% of the step (the real model call); "
        "no verdict: transformer_block: no result in the baseline"
    )
    first = r.stdout.splitlines()[0]
    assert first.startswith("REGRESSION ABOVE THE 10% GATE: mlp:max-autotune +50.0% [")
    assert first.endswith("] | not comparable, no verdict: transformer_block: no result in the baseline")


def test_a_baseline_result_that_cannot_be_read_is_named_with_its_cause(tmp_path):
    """The baseline's transformer_block/compare.json cut in half read "no result in the
    baseline", as if the model had never run there: the line now says why (exit 5 all the same)."""
    old = _done_sweep(tmp_path / "old")
    torn = old / "transformer_block" / "compare.json"
    text = torn.read_text()
    torn.write_text(text[: len(text) // 2])
    try:
        json.loads(torn.read_text())
    except json.JSONDecodeError as e:
        cause = f"{torn}: not readable as JSON ({e})"
    new = _done_sweep(tmp_path / "new")
    r = _cli(*_argv(new, "--baseline", str(old), "--fail-on-regression", "10"), cwd=tmp_path)
    assert r.returncode == 5
    assert r.stderr.splitlines()[-1] == (
        f"inductor-bench: error: no verdict: transformer_block: no result in the baseline: {cause}"
    )


def test_a_baseline_cell_whose_job_was_stopped_after_its_timing_is_not_judged(tmp_path):
    """The baseline's transformer_block was interrupted once its compare had saved every
    column: not a result to judge against (exit 5), though its figures equal this sweep's."""
    old = _done_sweep(tmp_path / "old")
    saved = json.loads((old / "sweep.json").read_text())
    saved["cells"][1].update(status=CellStatus.INTERRUPTED, exit_code=130, reason="stopped by SIGINT")
    (old / "sweep.json").write_text(json.dumps(saved))
    _not_comparable_against(old, tmp_path)


def test_a_sweeps_files_given_to_report_say_what_they_are(tmp_path):
    """``report`` of a sweep's report.txt, index.html, sweep.json or the table it printed as
    JSON: one line saying what the file is and where the runs are (exit 2), not 'not readable
    as JSON' or 'not a breakdown or compare result'."""
    d = _done_sweep(tmp_path / "s")
    r = _cli(*_argv(d, "--json", str(tmp_path / "table.json")), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    runs = f"; the runs in it, newest first: {d}/"
    said = {
        "report.txt": f"the report of the sweep in {d} (read it as it is), not one run's result (the same",
        "index.html": f"the report of the sweep in {d} (read it as it is), not one run's result (the same",
        "sweep.json": f"the record of the sweep in {d}, not one run: its report is {d}/report.txt (the same",
    }
    for name, words in said.items():
        out = subprocess.run([sys.executable, "-m", "inductor_bench", "report", str(d / name)],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 2 and out.stdout == "" and len(out.stderr.splitlines()) == 1, out.stderr
        assert out.stderr.startswith(f"inductor-bench: error: {d / name}: {words}") and runs in out.stderr
    table = subprocess.run([sys.executable, "-m", "inductor_bench", "report", str(tmp_path / "table.json")],
                           capture_output=True, text=True, timeout=120)
    assert table.returncode == 2 and table.stderr == (
        f"inductor-bench: error: {tmp_path / 'table.json'}: a sweep's record, not one run: `inductor-bench "
        "sweep` renders it; report and diff read each model's compare run directory inside the sweep's "
        "directory\n"
    )


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    d = _done_sweep(tmp_path / "s")
    cases = {
        ("--fail-on-regression", "5"): "--fail-on-regression needs --baseline OLD_DIR",
        ("--shard", "3/2"): "--shard 3/2: I must be from 1 to N",
        ("--baseline", str(tmp_path)): f"--baseline {tmp_path}: not a sweep's directory",
        ("--train",): "holds another sweep (--train here, not there): give another --out",
    }
    for more, line in cases.items():
        r = _cli(*_argv(d, *more), cwd=tmp_path)
        assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and line in r.stderr, (more, r.stderr)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("x")
    r = _cli(*_argv(other), cwd=tmp_path)
    assert r.returncode == 2 and "not empty and holds no sweep" in r.stderr
    r = _cli(str(MODELS[0]), str(MODELS[0]), "--out", str(tmp_path / "twice"), cwd=tmp_path)
    assert r.returncode == 2 and "a model file is given twice" in r.stderr
    for out in (other / "notes.txt", other / "notes.txt" / "s"):  # a file, a path under a file
        r = _cli(*_argv(out), cwd=tmp_path)
        assert (r.returncode, r.stderr) == (2, f"inductor-bench: error: --out {out}: not a directory\n")


def test_a_model_named_as_a_file_of_the_sweeps_own_runs_in_a_directory_of_its_own(tmp_path):
    """A model file logs.py ran in DIR/logs, the folder of every attempt's console output: the
    logs of all the models landed in its compare run directory."""
    for name in ("logs.py", "sweep.json.py"):
        shutil.copy(MODELS[0], tmp_path / name)
    models = [tmp_path / "logs.py", MODELS[0], tmp_path / "sweep.json.py"]
    plan = plan_sweep(models, "default", False, "cpu", False, "float32", False, None, False, [], None, "local")
    assert [c.model for c in plan.cells] == ["logs-2", "mlp", "sweep.json-2"]


def test_every_compare_gets_the_seconds_given_every_digit_kept():
    """--step-budget 0.1234567 reached each compare as 0.123457 and --timeout 1234567 as
    1.23457e+06 (1234570 s); a resume with 0.1234568 passed as the same sweep."""
    def seconds_args(step_budget: float, timeout: float) -> list[str]:
        a = compare_args(False, "float32", False, None, False, False, None, step_budget, None, 5, timeout, False)
        return [a[a.index("--step-budget") + 1], a[a.index("--timeout") + 1]]

    assert seconds_args(0.1234567, 1234567.0) == ["0.1234567", "1234567.0"]
    assert seconds_args(0.1234568, 900.0) == ["0.1234568", "900"]
    assert seconds_args(1.0, 0.5) == ["1", "0.5"]  # as sweeps already saved spell them


def test_an_executors_options_given_for_another_are_refused_before_anything_is_written(tmp_path):
    """--slurm-opt, --slurm-time or --ray-address with the local executor were ignored: the
    sweep ran on this machine as though they had not been given."""
    out = tmp_path / "s"
    cases = {
        ("--slurm-opt", "mem_gb=64", "--slurm-time", "5"): "--slurm-time, --slurm-opt: for --executor slurm, not local",
        ("--executor", "slurm", "--ray-address", "auto"): "--ray-address: for --executor ray, not slurm",
        ("--executor", "ray", "--slurm-partition", "gpu"): "--slurm-partition: for --executor slurm, not ray",
        # --slurm-cluster local with the local executor ran the jobs here as though not given
        ("--slurm-cluster", "local"): "--slurm-cluster: for --executor slurm, not local",
        ("--executor", "ray", "--slurm-cluster", "slurm"): "--slurm-cluster: for --executor slurm, not ray",
    }
    for more, line in cases.items():
        r = _cli(str(MODELS[0]), "--modes", "default", "--device", "cpu", "--out", str(out), *more, cwd=tmp_path)
        assert (r.returncode, r.stderr) == (2, f"inductor-bench: error: {line}\n"), (more, r.stderr)
        assert not out.exists()


NO_GPU = pytest.mark.skipif(local_device("auto") != "cpu", reason="a GPU is visible here")


@NO_GPU
def test_a_bad_mode_or_an_absent_device_is_refused_before_anything_is_written(tmp_path):
    out = tmp_path / "s"
    r = _cli(str(MODELS[0]), "--modes", "bogus", "--device", "cpu", "--out", str(out), cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.startswith("inductor-bench: error: torch.compile mode 'bogus': torch ")
    assert not out.exists()
    r = _cli(str(MODELS[0]), "--modes", "default", "--device", "cuda", "--out", str(out), cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.startswith("inductor-bench: error: --device cuda: CUDA is not available here")
    assert not out.exists()


@NO_GPU
def test_auto_resumes_a_cpu_sweep_on_a_machine_without_a_gpu(tmp_path):
    d = _done_sweep(tmp_path / "s")
    argv = _argv(d)
    argv[argv.index("--device") : argv.index("--device") + 2] = []
    r = _cli(*argv, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads((d / "sweep.json").read_text())["device"] == "cpu"


def test_ray_and_submitit_missing_name_the_extra(tmp_path):
    env_py = (
        "import sys; sys.modules['ray'] = None; sys.modules['submitit'] = None; "
        "from inductor_bench.cli import main; main()"
    )
    for executor, extra in (("ray", "ray"), ("slurm", "slurm")):
        out = tmp_path / executor
        r = subprocess.run(
            [
                sys.executable,
                "-c",
                env_py,
                "sweep",
                str(MODELS[0]),
                "--device",
                "cpu",
                "--out",
                str(out),
                "--executor",
                executor,
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 2, r.stderr
        assert f"pip install 'inductor-bench[{extra}]'" in r.stderr.splitlines()[-1]
        # refused before the sweep's directory is made (its sweep.json of pending cells was
        # saved, and its start line printed, before the refusal)
        assert len(r.stderr.splitlines()) == 1 and not out.exists(), r.stderr


@pytest.mark.parametrize(("cell", "value", "said"), [
    ("seconds", "x", "cells[0].seconds: 'x' is not a number or null"),  # exit 70, formatting it
    ("seconds", -5.0, "cells[0].seconds: -5.0 is below 0"),  # 'mlp: done in -5.00 s'
    ("attempts", "x", "cells[0].attempts: 'x' is not an integer"),  # exit 70
    ("attempts", -3, "cells[0].attempts: -3 is below 0"),
    ("status", "dne", "cells[0].status: 'dne' is not a cell's status (done, pending, running, failed, timeout, "
                      "killed, interrupted)"),  # run again as though unfinished
    ("run_dir", "/etc", "cells[0].run_dir: '/etc' is not a directory's name inside the sweep's"),  # read
    ("run_dir", "../../x", "cells[0].run_dir: '../../x' is not a directory's name inside the sweep's"),
    # another model's run shown as this one's, a model name whose attempts' directories lie outside
    ("run_dir", "transformer_block", "cells[0].run_dir: 'transformer_block' is no attempt of 'mlp' (mlp, "
                                     "mlp.try2, ...)"),
    ("run_dir", "mlp.try1", "cells[0].run_dir: 'mlp.try1' is no attempt of 'mlp' (mlp, mlp.try2, ...)"),
    ("model", "../escape", "cells[0].model: '../escape' is not a directory's name inside the sweep's"),
    ("seconds", 1e308, "cells[0].seconds: 1e+308 is beyond any figure a result holds (at most 1e+24 in size)"),
    (None, [1, 2, 3], "shard: [1, 2, 3] is no shard I/N (I from 1 to N)"),
    (None, "x", "shard: 'x' is not a list or null"),  # exit 70, IndexError
])
def test_a_damaged_sweep_json_is_refused_as_a_damaged_result_is(tmp_path, cell, value, said):
    """sweep.json is checked as it is read as breakdown.json and compare.json are: each field's
    kind and number, and what a report would print as it is."""
    from inductor_bench.core.errors import ResultError
    from inductor_bench.runner.sweep_run import load_sweep

    d = _done_sweep(tmp_path / "s")
    data = json.loads((d / "sweep.json").read_text())
    if cell is None:
        data["shard"] = value
    else:
        data["cells"][0][cell] = value
    (d / "sweep.json").write_text(json.dumps(data))
    with pytest.raises(ResultError) as e:
        load_sweep(d)
    assert str(e.value) == f"{d / 'sweep.json'}: damaged: {said}"


def test_a_damaged_sweep_or_baseline_is_one_line_and_exit_2_before_any_job(tmp_path):
    d = _done_sweep(tmp_path / "s")
    data = json.loads((d / "sweep.json").read_text())
    data["cells"][0]["seconds"] = -5.0
    (d / "sweep.json").write_text(json.dumps(data))
    line = f"inductor-bench: error: {d / 'sweep.json'}: damaged: cells[0].seconds: -5.0 is below 0\n"
    r = _cli(*_argv(d), cwd=tmp_path)
    assert (r.returncode, r.stderr, r.stdout) == (2, line, "")
    assert not (d / "report.txt").exists() and not (d / "logs").exists()
    new = _done_sweep(tmp_path / "new")
    r = _cli(*_argv(new, "--baseline", str(d)), cwd=tmp_path)
    assert (r.returncode, r.stderr, r.stdout) == (2, line, "")


@pytest.mark.parametrize(("edit", "said"), [
    (lambda cells: cells.pop(),  # '1 model x 2 modes ... 1/1 done': transformer_block never run
     f"cells: none for '{MODELS[1]}', one of the sweep's models"),
    (lambda cells: cells[1].update(model="mlp"),  # '2/2 done', the geomeans 'of 1 models'
     "cells[1].model: 'mlp' names another cell too"),
    (lambda cells: cells[1].update(model_path=str(MODELS[0])), f"cells[1].model_path: '{MODELS[0]}' has a cell "
                                                               "before it"),
    (lambda cells: cells[1].update(model_path="/x.py"), "cells[1].model_path: '/x.py' is not one of the sweep's "
                                                        "models"),
])
def test_a_sweep_json_whose_cells_are_not_its_models_is_damaged(tmp_path, edit, said):
    from inductor_bench.core.errors import ResultError
    from inductor_bench.runner.sweep_run import load_sweep

    d = _done_sweep(tmp_path / "s")
    data = json.loads((d / "sweep.json").read_text())
    edit(data["cells"])
    (d / "sweep.json").write_text(json.dumps(data))
    with pytest.raises(ResultError) as e:
        load_sweep(d)
    assert str(e.value) == f"{d / 'sweep.json'}: damaged: {said}"
