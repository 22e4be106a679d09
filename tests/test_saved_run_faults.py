"""A saved run with a damaged file: `report` (and `diff`, `kernel`, `analyze`, which read the
same files) says so in one line with exit 2 — no traceback unless --verbose — whether the file
is torn, not JSON, or JSON of the wrong shape. Built from the saved runs in
tests/fixtures/results, no compile needed."""

from __future__ import annotations

import copy
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from inductor_bench.cli import main
from inductor_bench.core.compare import COMPARE_SCHEMA
from inductor_bench.core.results import SCHEMA as BREAKDOWN_SCHEMA
from inductor_bench.core.rundir import load_any

from .conftest import FIXTURES, MODELS

BREAKDOWN_RUN = FIXTURES / "results" / "cpu_mlp_train_autotune"
COMPARE_RUN = FIXTURES / "results" / "cpu_mlp_compare"
TRACE = FIXTURES / "cpu_mlp_train" / "0-forward" / "trace.json.gz"


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = 0
    try:
        main(list(argv))
    except SystemExit as e:
        code = e.code or 0
    out, err = capsys.readouterr()
    return code, out, err


def one_line(code: int, out: str, err: str) -> str:
    """The single error line of a refused command, without its prefix."""
    assert code == 2, err
    assert out == "" and "Traceback" not in err
    (line,) = err.splitlines()
    assert line.startswith("inductor-bench: error: ")
    return line.removeprefix("inductor-bench: error: ")


def saved(tmp_path: Path, fixture: Path, name: str) -> tuple[Path, dict]:
    """A copy of a saved run in tmp_path, and its result file's JSON."""
    run = tmp_path / fixture.name
    shutil.copytree(fixture, run)
    return run, json.loads((run / name).read_text())


def rewritten(run: Path, name: str, data: dict, change: Callable[[dict], object]) -> Path:
    data = copy.deepcopy(data)
    change(data)
    (run / name).write_text(json.dumps(data))
    return run / name


def saved_results() -> list[Path]:
    """Every breakdown and compare result kept in tests/fixtures (goldens included)."""
    out = []
    for f in sorted(FIXTURES.rglob("*.json")):
        data = json.loads(f.read_text())
        if isinstance(data, dict) and data.get("schema") in (BREAKDOWN_SCHEMA, COMPARE_SCHEMA):
            out.append(f)
    return out


def test_no_saved_result_is_refused():
    """The shape check refuses nothing this tool wrote: schema versions 1 and 2, CPU and
    synthetic CUDA breakdowns, autotune records, compares."""
    found = saved_results()
    assert len(found) >= 9
    kinds = {type(load_any(f)).__name__ for f in found}
    assert kinds == {"BreakdownResult", "CompareResult"}


# -- not JSON ---------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [("report",), ("diff", "RUN")])
def test_a_model_file_given_for_a_run(capsys, command):
    """A model file where a saved run goes: said so, with the command that makes a run."""
    model = str(MODELS / "mlp.py")
    argv = [a if a != "RUN" else model for a in command]
    side = "BASE " if command[0] == "diff" else ""  # diff names the side it was given as
    assert one_line(*run_cli(capsys, *argv, model)) == (
        f"{side}{model}: a Python file, not a saved result: give a run directory (or its compare.json or "
        f"breakdown.json); `inductor-bench breakdown {model}` makes one"
    )


@pytest.mark.parametrize("fixture,name", [(BREAKDOWN_RUN, "breakdown.json"), (COMPARE_RUN, "compare.json")])
@pytest.mark.parametrize(
    "damage",
    [lambda b: b[: len(b) // 2], lambda b: b"\x89PNG\r\n\x1a\n" + b[:64], lambda b: b""],
    ids=["truncated", "garbage", "empty"],
)
def test_a_result_file_that_is_not_json(capsys, tmp_path, fixture, name, damage):
    run, _ = saved(tmp_path, fixture, name)
    f = run / name
    f.write_bytes(damage(f.read_bytes()))
    with pytest.raises((UnicodeDecodeError, json.JSONDecodeError)) as why:
        json.loads(f.read_text())
    assert one_line(*run_cli(capsys, "report", str(run))) == f"{f}: not readable as JSON ({why.value})"


# -- JSON of the wrong shape ------------------------------------------------------------------

def _set(path: str, value: object) -> Callable[[dict], None]:
    """Set (or, with value DELETE, remove) the key at a dotted path: "graphs.0.kernel_ms"."""
    def change(d: dict) -> None:
        *parents, last = path.split(".")
        for key in parents:
            d = d[int(key)] if isinstance(d, list) else d[key]
        if value is DELETE:
            del d[last]
        else:
            d[int(last) if isinstance(d, list) else last] = value
    return change


DELETE = object()

BREAKDOWN_DAMAGE = {
    "no graphs": (_set("graphs", DELETE), "'graphs' is missing"),
    "graphs not a list": (_set("graphs", "0-forward"), "graphs: '0-forward' is not a list"),
    "a graph without id": (_set("graphs.0.id", DELETE), "graphs[0]: 'id' is missing"),
    "a graph that is a number": (_set("graphs.1", 7), "graphs[1]: 7 is not an object"),
    "kernel time as text": (_set("graphs.0.kernel_ms", "1.2 ms"), "graphs[0].kernel_ms: '1.2 ms' is not a number"),
    "a kernel time null": (_set("graphs.1.kernels.0.ms", None), "graphs[1].kernels[0].ms: None is not a number"),
    "a sample as text": (_set("graphs.0.wall_samples_ms.3", "x"), "graphs[0].wall_samples_ms[3]: 'x' is not a number"),
    "categories a list": (_set("graphs.0.categories", [1, 2]), "graphs[0].categories: [1, 2] is not an object"),
    "a category as text": (_set("graphs.0.categories.extern_gemm", "big"),
                           "graphs[0].categories['extern_gemm']: 'big' is not a number"),
    "kernels an object": (_set("graphs.0.kernels", {"a": 1}), "graphs[0].kernels: {'a': 1} is not a list"),
    "extras a list": (_set("extras", [1]), "extras: [1] is not an object"),
    "compile time as text": (_set("extras.compile_s", "slow"), "extras.compile_s: 'slow' is not a number or null"),
    "train as text": (_set("train", "yes"), "train: 'yes' is not true or false"),
    "errors as text": (_set("errors", "oops"), "errors: 'oops' is not a list"),
    "model null": (_set("model", None), "model: None is not a string"),
    "autotune rows as text": (_set("extras.autotune.rows", "none"), "extras.autotune.rows: 'none' is not a list"),
}


COMPARE_DAMAGE = {
    "modes not a list": (_set("modes", {"default": 1}), "modes: {'default': 1} is not a list"),
    "a mode without its name": (_set("modes.1.mode", DELETE), "modes[1]: 'mode' is missing"),
    "a step sample as text": (_set("modes.1.step_samples_ms.2", "fast"),
                              "modes[1].step_samples_ms[2]: 'fast' is not a number"),
    "a mode's breakdown without graphs' ids": (_set("modes.2.breakdown.graphs.0.id", DELETE),
                                               "modes[2].breakdown.graphs[0]: 'id' is missing"),
    "a mode's load as text": (_set("modes.1.step_load", "busy"), "modes[1].step_load: 'busy' is not an object or null"),
}


WRONG_SHAPES = [(BREAKDOWN_RUN, "breakdown.json", BREAKDOWN_DAMAGE, c) for c in sorted(BREAKDOWN_DAMAGE)] + [
    (COMPARE_RUN, "compare.json", COMPARE_DAMAGE, c) for c in sorted(COMPARE_DAMAGE)]


@pytest.mark.parametrize("fixture, name, damage, case", WRONG_SHAPES, ids=[w[3] for w in WRONG_SHAPES])
def test_a_result_of_the_wrong_shape(capsys, tmp_path, fixture, name, damage, case):
    change, where = damage[case]
    run, data = saved(tmp_path, fixture, name)
    f = rewritten(run, name, data, change)
    assert one_line(*run_cli(capsys, "report", str(run))) == f"{f}: damaged: {where}"


def test_verbose_shows_the_traceback(capsys, tmp_path):
    run, data = saved(tmp_path, BREAKDOWN_RUN, "breakdown.json")
    f = rewritten(run, "breakdown.json", data, _set("graphs.0.kernel_ms", "1.2 ms"))
    code, out, err = run_cli(capsys, "--verbose", "report", str(run))
    assert code == 2 and out == ""
    assert "Traceback (most recent call last)" in err and "inductor_bench/core/rundir.py" in err
    assert err.splitlines()[-1] == f"inductor-bench: error: {f}: damaged: graphs[0].kernel_ms: '1.2 ms' is not a number"


def test_diff_and_kernel_read_the_same_way(capsys, tmp_path):
    run, data = saved(tmp_path, BREAKDOWN_RUN, "breakdown.json")
    f = rewritten(run, "breakdown.json", data, _set("graphs.0.id", DELETE))
    expected = f"{f}: damaged: graphs[0]: 'id' is missing"
    assert one_line(*run_cli(capsys, "diff", str(BREAKDOWN_RUN), str(run))) == f"HEAD {expected}"
    assert one_line(*run_cli(capsys, "kernel", str(run), "cpp_fused_gelu_0")) == expected


# -- a damaged trace --------------------------------------------------------------------------

def test_a_damaged_trace_leaves_the_report_whole_and_analyze_says_one_line(capsys, tmp_path):
    """`report` (text and HTML) reads no trace, only links it: a torn trace changes nothing
    there. `analyze` of that trace, the command that reads it, refuses it in one line."""
    run, data = saved(tmp_path, BREAKDOWN_RUN, "breakdown.json")
    trace = run / data["graphs"][0]["trace"]
    trace.parent.mkdir(parents=True)  # a run directory, as report reads one, before and after
    before = run_cli(capsys, "report", str(run))
    trace.write_bytes(TRACE.read_bytes()[: TRACE.stat().st_size // 2])
    assert run_cli(capsys, "report", str(run)) == before and before[0] == 0
    code, _, err = run_cli(capsys, "report", str(run), "--html", str(tmp_path / "r.html"))
    assert code == 0 and err == before[2]  # the torn trace adds no line (the result's own notes stay)
    assert 'href="graphs/0-forward/trace.json.gz"' in (tmp_path / "r.html").read_text()
    assert one_line(*run_cli(capsys, "analyze", str(trace))) == (
        f"{trace}: not readable as a (gzipped) JSON trace "
        "(Compressed file ended before the end-of-stream marker was reached)")


def test_a_directory_of_runs_names_the_runs_in_it(tmp_path, capsys):
    """`report runs/` (the directory the runs go in, not one run): the one line names the runs
    it holds, newest first (by their result file's time), so the next command is a paste away."""
    runs = tmp_path / "runs"
    old, new = runs / "mlp-default-1", runs / "mlp-compare-2"
    shutil.copytree(BREAKDOWN_RUN, old)
    shutil.copytree(COMPARE_RUN, new)
    (runs / "notes").mkdir()
    os.utime(old / "breakdown.json", (1_000, 1_000))
    line = one_line(*run_cli(capsys, "report", str(runs)))
    assert line == (f"{runs}: no compare.json or breakdown.json in this directory; "
                    f"the runs in it, newest first: {new}, {old}")
    line = one_line(*run_cli(capsys, "report", str(runs / "notes")))
    assert line == f"{runs / 'notes'}: no compare.json or breakdown.json in this directory"
