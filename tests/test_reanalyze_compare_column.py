"""`report COLUMN --reanalyze` of a compare's column (a breakdown run inside the compare's
directory) rebuilt the column's breakdown.json only: the compare's compare.json, which holds each
column's breakdown too, kept the old figures, so `report` of the compare and of its column
disagreed. Built from the recorded run in tests/fixtures/runs (no torch)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from inductor_bench.core.compare import CompareResult, ModeResult
from inductor_bench.core.result_json import result_json
from inductor_bench.core.rundir import load_breakdown

from .conftest import FIXTURES
from .test_damaged_digests import cli

RUN = FIXTURES / "runs" / "cpu_fft_inference"


def _compare(tmp_path):
    """A compare of one column, ``default``, whose saved figures (in the column and in the
    compare alike) are not what its profiles say: each graph's wall time ten times over, as an
    older analysis might have judged it."""
    cmp = tmp_path / "cmp"
    column = cmp / "default"
    shutil.copytree(RUN, column)
    saved = json.loads((column / "breakdown.json").read_text())
    for g in saved["graphs"]:
        g["wall_ms"] *= 10
    (column / "breakdown.json").write_text(json.dumps(saved))
    result = CompareResult(model="fft", device="cpu", modes=[
        ModeResult(mode="default", step_samples_ms=[5.0, 5.2, 4.9], run_dir=str(column),
                   breakdown=load_breakdown(column))])
    (cmp / "compare.json").write_text(result_json(result))
    return cmp, column


def test_reanalysing_a_column_rebuilds_its_compare_from_it(tmp_path):
    cmp, column = _compare(tmp_path)
    recorded = [g["wall_ms"] for g in json.loads((RUN / "breakdown.json").read_text())["graphs"]]
    before = (cmp / "compare.json").read_bytes()
    r = cli("report", str(column), "--reanalyze")
    assert r.returncode == 0, r.stderr
    rebuilt = json.loads((column / "breakdown.json").read_text())
    assert [g["wall_ms"] for g in rebuilt["graphs"]] == recorded  # the profiles' figure again
    compare = json.loads((cmp / "compare.json").read_text())
    assert [g["wall_ms"] for g in compare["modes"][0]["breakdown"]["graphs"]] == recorded
    held = compare["modes"][0]["breakdown"]  # the result; breakdown.json adds what is derived from it
    assert held == {k: rebuilt[k] for k in held}
    assert f"{cmp / 'compare.json'} rebuilt with this column's result (the result it replaced: " \
           f"{cmp / 'compare.before-reanalysis.json'})" in r.stderr.splitlines()
    assert (cmp / "compare.before-reanalysis.json").read_bytes() == before
    shown = cli("report", str(cmp), "--format", "json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["modes"][0]["breakdown"] == held
    assert (cmp / "report.txt").read_text() == cli("report", str(cmp)).stdout
    again = cli("report", str(column), "--reanalyze")  # the compare's own result kept once
    assert again.returncode == 0, again.stderr
    assert (cmp / "compare.before-reanalysis.json").read_bytes() == before


def test_a_breakdown_run_beside_an_unreadable_compare_is_still_reanalysed(tmp_path):
    """compare.json damaged: the column is rebuilt, and the compare said to be left as it was."""
    cmp, column = _compare(tmp_path)
    (cmp / "compare.json").write_text("{")
    r = cli("report", str(column), "--reanalyze")
    assert r.returncode == 0, r.stderr
    assert any(ln.startswith(f"{cmp / 'compare.json'}: not rebuilt with this column's result: ")
               for ln in r.stderr.splitlines()), r.stderr
    assert (cmp / "compare.json").read_text() == "{"


def test_a_column_named_from_inside_it_finds_its_compare(tmp_path):
    """`report .. --reanalyze` from a column's graphs/ looked for the compare in the column."""
    cmp, column = _compare(tmp_path)
    recorded = [g["wall_ms"] for g in json.loads((RUN / "breakdown.json").read_text())["graphs"]]
    r = subprocess.run([sys.executable, "-m", "inductor_bench.cli", "report", "..", "--reanalyze"],
                       capture_output=True, text=True, cwd=column / "graphs", timeout=120)
    assert r.returncode == 0, r.stderr
    assert f"{cmp / 'compare.json'} rebuilt with this column's result (the result it replaced: " \
           f"{cmp / 'compare.before-reanalysis.json'})" in r.stderr.splitlines()
    compare = json.loads((cmp / "compare.json").read_text())
    assert [g["wall_ms"] for g in compare["modes"][0]["breakdown"]["graphs"]] == recorded
