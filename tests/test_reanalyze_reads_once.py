"""`report RUN --reanalyze` reads the run's breakdown.json once: the document its refusal of a run
with no saved profile is judged on is the one re-analysed. Built from the recorded run in
tests/fixtures/runs, no compile needed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from inductor_bench.cli import main
from inductor_bench.core import rundir

from .conftest import FIXTURES

RUN = FIXTURES / "runs" / "cpu_fft_inference"


def test_a_reanalysis_reads_the_runs_result_once(tmp_path, monkeypatch, capsys):
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    read: list[Path] = []
    real = rundir.read_result_json

    def counted(path, names):
        p, data = real(path, names)
        read.append(p)
        return p, data

    monkeypatch.setattr(rundir, "read_result_json", counted)
    assert not main(["report", str(run), "--reanalyze", "--format", "json"])
    assert read == [run / "breakdown.json"]
    shown = json.loads(capsys.readouterr().out)
    saved = json.loads((run / "breakdown.json").read_text())
    assert shown["graphs"][0]["id"] == saved["graphs"][0]["id"] == "0-inference"
    assert shown == saved
