"""`report` of a compare run asked for a breakdown's views: one line and the usage-error exit."""

from __future__ import annotations

from pathlib import Path

import pytest

from inductor_bench.cli import main

COMPARE_RESULT = Path(__file__).resolve().parent / "fixtures" / "results" / "cpu_mlp_compare" / "compare.json"


@pytest.mark.parametrize("args, asked", [
    (["--by", "line"], "--by line"),
    (["--module-depth", "2"], "--module-depth 2"),
    (["--by", "module", "--module-depth", "1"], "--by module and --module-depth 1"),
])
def test_report_views_of_a_compare_run_are_refused(tmp_path, capsys, args, asked):
    """The views are a breakdown's: a compare run asked for one says so, rather than showing
    its table as if the option had been heard."""
    run = tmp_path / "cmp"
    (run / "default").mkdir(parents=True)
    (run / "compare.json").write_text(COMPARE_RESULT.read_text())
    (run / "default" / "breakdown.json").write_text("{}")  # a column's breakdown directory
    with pytest.raises(SystemExit) as e:
        main(["report", str(run), *args])
    assert e.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"inductor-bench: error: {asked}: the views apply to breakdown runs, and {run} is a compare run: "
        f"report one of its columns' breakdown directories instead ({run / 'default'})\n")
    with pytest.raises(SystemExit) as e:
        main(["report", str(COMPARE_RESULT), *args])
    assert e.value.code == 2 and capsys.readouterr().err.startswith(f"inductor-bench: error: {asked}: ")
    main(["report", str(run)])  # without a view: the comparison's table
    assert capsys.readouterr().out.startswith("Fastest steady state: ")
