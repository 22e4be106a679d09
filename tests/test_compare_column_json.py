"""A compare's JSON holds each column's breakdown as that column's own JSON holds it, the
figures derived on writing included: the step block (the wall a kernel's max gain is a share
of, the step against its graphs) was left out of every column of `compare.json`, while the
column's `breakdown.json` had it.

``tests/fixtures/results/cpu_mlp_compare`` (``compare models/mlp.py --train`` on the 2-core
CPU, torch 2.13): each column's breakdown is written out here as a run of its own and reported
alone, to be held against the compare's copy.
"""

from __future__ import annotations

import json

from inductor_bench.cli import main

from .conftest import FIXTURES

CMP = FIXTURES / "results" / "cpu_mlp_compare"


def report_json(path, capsys) -> dict:
    main(["report", str(path), "--format", "json"])
    return json.loads(capsys.readouterr().out)


def test_each_columns_breakdown_in_the_compares_json_is_its_own_json(tmp_path, capsys):
    columns = [m for m in report_json(CMP, capsys)["modes"] if m.get("breakdown")]
    assert [m["mode"] for m in columns] == ["default", "max-autotune"]
    raw = {m["mode"]: m["breakdown"] for m in json.loads((CMP / "compare.json").read_text())["modes"]}
    for m in columns:
        alone = tmp_path / m["mode"]
        alone.mkdir()
        (alone / "breakdown.json").write_text(json.dumps(raw[m["mode"]]))
        own = report_json(alone, capsys)
        assert "step" in own and m["breakdown"]["step"] == own["step"], m["mode"]
        assert m["breakdown"] == own | {"run_dir": m["breakdown"]["run_dir"]}, m["mode"]
