"""``--fail-on-regression PCT`` takes a finite percent of 0 or more, in diff, compare and sweep
alike, refused in one line (exit 2) before anything is read or run: ``inf`` was taken and printed
"the inf% gate", which no regression can fail; ``nan`` was called below 0."""

from __future__ import annotations

import pytest

from inductor_bench.cli import main

RUN = "tests/fixtures/results/cpu_mlp_train_quiet"
WHY = "Invalid value for '--fail-on-regression': a finite percent of 0 or more, not "
COMMANDS = {
    "diff": ["diff", RUN, RUN],
    "compare": ["compare", "models/mlp.py", "models/mlp.py", "--device", "cpu"],
    "sweep": ["sweep", "models/mlp.py", "--out", "{tmp}/sweep", "--baseline", "{tmp}/base"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize(("value", "said"), [("inf", "inf: a gate of inf% fails on no regression"),
                                             ("nan", "nan"), ("-3", "-3.0")])
def test_a_gate_no_change_can_cross_is_refused(command, value, said, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(__file__.rsplit("/tests/", 1)[0])
    args = [a.format(tmp=tmp_path) for a in COMMANDS[command]]
    with pytest.raises(SystemExit) as e:
        main([*args, "--fail-on-regression", value])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.splitlines()[-1].startswith(f"inductor-bench: error: {WHY}{said} (")
    assert list(tmp_path.iterdir()) == []  # nothing made: refused before the run
