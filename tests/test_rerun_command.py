"""The breakdown command a diff gives to measure a run again (``core/rerun.py``) is one the
command line reads back as the run's own workload: every option that made it (batch size,
dtype, autocast, mode, freezing, the script's arguments) given, a name with a space quoted.
The command had named the file, --train and --device alone: run as given, a base of another
batch size or dtype measured another workload, which diff then refused to judge."""

from __future__ import annotations

import json
import shlex

import typer.main

from inductor_bench.cli import app
from inductor_bench.core.rerun import breakdown_again
from inductor_bench.core.results import BreakdownResult

from .conftest import FIXTURES

# recorded: `models/mlp.py --train --device cpu` of 2026-12-07 (torch 2.13.0+cpu)
RUN = FIXTURES / "results" / "cpu_mlp_train_20261207" / "breakdown.json"


def _parsed(command: str) -> dict:
    words = shlex.split(command)
    assert words[:2] == ["inductor-bench", "breakdown"]
    cmd = typer.main.get_command(app).commands["breakdown"]
    return cmd.make_context("breakdown", words[2:]).params


def test_the_recorded_run_is_measured_again_as_it_ran():
    r = BreakdownResult.from_dict(json.loads(RUN.read_text()))
    command = breakdown_again(r)
    assert command == "inductor-bench breakdown mlp.py --train --batch-size 64 --device cpu"
    params = _parsed(command)
    assert (params["train"], params["batch_size"], params["device"], params["dtype"]) == (True, 64, "cpu", "float32")


def test_every_option_of_the_workload_is_given_and_quoted():
    data = json.loads(RUN.read_text()) | {
        "model_path": "/home/user/my models/tiny mlp.py", "mode": "max-autotune", "dtype": "bfloat16",
        "autocast": True, "freezing": True, "train": False, "batch_size": 8,
        "script_args": ["--layers", "2 3"]}
    command = breakdown_again(BreakdownResult.from_dict(data))
    assert command == ("inductor-bench breakdown 'tiny mlp.py' --mode max-autotune --dtype bfloat16 "
                       "--autocast --freezing --batch-size 8 --device cpu -- --layers '2 3'")
    params = _parsed(command)
    assert str(params["model"]) == "tiny mlp.py"
    assert (params["mode"], params["dtype"], params["autocast"], params["freezing"]) == (
        "max-autotune", "bfloat16", True, True)
    assert (params["train"], params["batch_size"], params["device"]) == (False, 8, "cpu")
    assert list(params["script_args"]) == ["--layers", "2 3"]


def _suggested(capsys, *argv: str) -> list[str]:
    """The command the error line gives between backticks, split as a shell would."""
    from inductor_bench.cli import main

    try:
        main(list(argv))
    except SystemExit as e:
        assert e.code == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    return shlex.split(line.split("`")[1])


def test_a_path_with_a_space_stays_one_word_in_the_command_given(tmp_path, capsys):
    """Copied as given, the command had split the path at its space."""
    import shutil

    here = tmp_path / "my runs"
    here.mkdir()
    trace, model, run = here / "t.json.gz", here / "m.py", here / "run"
    shutil.copy(FIXTURES / "cpu_mlp_train" / "0-forward" / "trace.json.gz", trace)
    model.write_text("")
    shutil.copytree(FIXTURES / "runs" / "cpu_mlp_train_stalled", run)
    assert _suggested(capsys, "report", str(trace)) == ["inductor-bench", "analyze", str(trace)]
    assert _suggested(capsys, "report", str(model)) == ["inductor-bench", "breakdown", str(model)]
    assert _suggested(capsys, "breakdown", str(run)) == ["inductor-bench", "report", str(run)]
