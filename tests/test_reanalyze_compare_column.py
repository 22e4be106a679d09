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


def _reanalysed_by_an_older_version(column):
    """What a re-analysis of ``column`` by an inductor-bench that did not rebuild the compare
    left: the column's result kept beside it and replaced (here by the recorded one, what the
    profiles say), the compare's copy of it untouched."""
    shutil.copy(column / "breakdown.json", column / "breakdown.before-reanalysis.json")
    shutil.copy(RUN / "breakdown.json", column / "breakdown.json")


def test_a_compare_holding_a_columns_result_from_before_its_reanalysis_says_so(tmp_path):
    cmp, column = _compare(tmp_path)
    assert cli("report", str(cmp)).stderr == ""  # a compare whose column was never re-analysed
    _reanalysed_by_an_older_version(column)
    line = (f"note: {cmp / 'compare.json'}: its column default was re-analysed after it was saved, and it still "
            f"holds their results from before; `inductor-bench report {column} --reanalyze` rebuilds it with "
            "their current ones")
    r = cli("report", str(cmp))
    assert r.returncode == 0 and r.stderr.splitlines() == [line], r.stderr
    other = tmp_path / "other"
    shutil.copytree(cmp, other)
    d = cli("diff", str(other), str(cmp))
    assert d.returncode == 0 and f"HEAD {line}" in d.stderr.splitlines(), d.stderr
    fixed = cli("report", str(column), "--reanalyze")  # as the note says
    assert fixed.returncode == 0, fixed.stderr
    assert cli("report", str(cmp)).stderr == ""


def test_a_compare_whose_column_differs_without_a_reanalysis_is_not_called_stale(tmp_path):
    """A column's result that differs from the compare's copy with no result kept from a
    re-analysis (a compare stopped after the column was saved) is no sign of one."""
    cmp, column = _compare(tmp_path)
    shutil.copy(RUN / "breakdown.json", column / "breakdown.json")
    assert cli("report", str(cmp)).stderr == ""
    # a re-analysis whose result is the compare's copy: nothing stale either
    shutil.copy(column / "breakdown.json", column / "breakdown.before-reanalysis.json")
    assert cli("report", str(cmp)).stderr == ""


def test_reanalysing_a_compare_run_itself_names_a_column_not_a_run_that_ended_unsaved(tmp_path):
    """A compare's directory has no breakdown.json, and a compare saved before its meta.json was
    written over kept the claim its directory was made with (status ``claimed``, as `compare` left
    it on torch 2.13 CPU, 2026-12-07): `report CMP --reanalyze` said the command had ended before
    saving any result."""
    cmp, column = _compare(tmp_path)
    (cmp / "meta.json").write_text(json.dumps({"tool": "inductor-bench", "status": "claimed", "pid": 2989,
                                               "created": "2026-12-07T08:10:05+00:00"}))
    before = (cmp / "compare.json").read_bytes()
    r = cli("report", str(cmp), "--reanalyze")
    assert r.returncode == 2
    assert r.stderr == (f"inductor-bench: error: {cmp}: a compare run: --reanalyze takes a breakdown run "
                        f"directory, as one of its columns ({column}), whose re-analysis rebuilds compare.json "
                        "too\n")
    assert (cmp / "compare.json").read_bytes() == before
    assert not (cmp / "compare.before-reanalysis.json").exists()
