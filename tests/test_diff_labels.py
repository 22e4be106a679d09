"""diff's refusal of an input names the side it was given as, BASE or HEAD, whatever is wrong
with it: missing, or a torn file."""

from __future__ import annotations

import json

import pytest

from .conftest import FIXTURES
from .test_diff import run_cli

GOOD = FIXTURES / "results" / "cpu_mlp_compare"
TORN = '{"schema": "inductor-bench/breakdown", "graphs": [\n'


def _torn_why() -> str:
    try:
        json.loads(TORN)
    except json.JSONDecodeError as e:
        return str(e)
    raise AssertionError("not torn")


@pytest.mark.parametrize("torn_side", ["BASE", "HEAD"])
def test_a_torn_file_is_named_with_its_side(tmp_path, capsys, torn_side):
    torn = tmp_path / "torn.json"
    torn.write_text(TORN)
    args = [str(torn), str(GOOD)] if torn_side == "BASE" else [str(GOOD), str(torn)]
    assert run_cli(args) == 2
    assert capsys.readouterr().err == (
        f"inductor-bench: error: {torn_side} {torn}: not readable as JSON ({_torn_why()})\n")


def test_a_missing_side_and_a_torn_one_read_alike(tmp_path, capsys):
    missing = tmp_path / "a"
    assert run_cli([str(missing), str(GOOD)]) == 2
    assert capsys.readouterr().err == f"inductor-bench: error: BASE {missing}: no such result file or run directory\n"
    assert run_cli([str(GOOD), str(missing)]) == 2
    assert capsys.readouterr().err == f"inductor-bench: error: HEAD {missing}: no such result file or run directory\n"
