"""`diff --fail-on-regression` against a base saved before graphs' calls were counted: no
verdict (exit 5), and the line says what to do: measure the base again with this version, the
command given. The base is the recorded `models/mlp.py --train --device cpu` run of 2026-12-07
(torch 2.13.0+cpu, tests/fixtures/results/README.md) with each graph's `calls` taken out, as
an older run saved it; the head is that run as recorded."""

from __future__ import annotations

import json

import pytest

from inductor_bench import cli

from .conftest import FIXTURES

RUN = FIXTURES / "results" / "cpu_mlp_train_20261207" / "breakdown.json"


def test_a_base_without_call_counts_is_not_judged_and_the_line_says_how_to_measure_it_again(tmp_path, capsys):
    data = json.loads(RUN.read_text())
    for g in data["graphs"]:
        g["calls"] = None
    old = tmp_path / "breakdown.json"
    old.write_text(json.dumps(data))
    with pytest.raises(SystemExit) as e:
        cli.main(["diff", str(old), str(RUN), "--fail-on-regression", "5"])
    assert e.value.code == 5
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "inductor-bench: error: not comparable, no verdict: default: the calls of each graph not measured "
        "in base (an older run: its step adds each graph once; measure base again with this version, "
        "`inductor-bench breakdown mlp.py --train --batch-size 64 --device cpu` on base's code)")
