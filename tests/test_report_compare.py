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


BREAKDOWN_RESULT = COMPARE_RESULT.parent.parent / "cpu_mlp_train_autotune" / "breakdown.json"


@pytest.mark.parametrize("args, said", [
    (["--module-depth", "2"], "--module-depth 2 cuts the module paths of --by module; add --by module "
                              "(here --by kernel)"),
    (["--by", "line", "--module-depth", "1"], "--module-depth 1 cuts the module paths of --by module; add "
                                              "--by module (here --by line)"),
    (["--by", "line", "--format", "json"], "--by line: the JSON holds what every view is made from (each "
                                           "kernel's origin), not the view; ask the view of --format text, "
                                           "markdown or html"),
])
def test_a_view_option_that_would_change_nothing_is_refused(capsys, args, said):
    """--module-depth without --by module, and a view asked of the JSON, were ignored without a
    word (the default table, or the same JSON byte for byte): one line and exit 2 now; the
    breakdown command refuses them before it compiles anything."""
    for command in (["report", str(BREAKDOWN_RESULT)], ["breakdown", "no-such-model.py"]):
        with pytest.raises(SystemExit) as e:
            main([*command, *args])
        assert e.value.code == 2
        assert capsys.readouterr().err == f"inductor-bench: error: {said}\n"
    main(["report", str(BREAKDOWN_RESULT), "--by", "module", "--module-depth", "1"])
    assert "Time by module" in capsys.readouterr().out
