"""A compare of one model file given a name (``--names x``), saved by an earlier version that
labelled its columns ``x:eager`` and named no models, reads as a compare saved today: its
columns the plain modes and the name its title, so ``diff`` matches them with today's run and
with another such run of another name, where it had matched none ("only in base", "only in head")
(hand-built: the recorded compare of mlp.py with its columns given model names, synthetic)."""

from __future__ import annotations

import json
from pathlib import Path

from inductor_bench.core.compare import CompareResult
from inductor_bench.core.diff import diff_results

FIXTURE = Path(__file__).parent / "fixtures" / "results" / "cpu_mlp_compare" / "compare.json"


def _saved(name: str | None, models: list[str] | None = None) -> CompareResult:
    d = json.loads(FIXTURE.read_text())
    for m in d["modes"]:
        m["model"] = name or ""
    if models is not None:
        d["models"] = models
    return CompareResult.from_dict(d)


def test_an_earlier_named_run_reads_with_plain_columns_and_its_name_as_title():
    r = _saved("before")
    assert (r.model, r.models) == ("before", [])
    assert [m.label for m in r.modes] == ["eager", "default", "max-autotune", "reduce-overhead"]


def test_diff_matches_the_columns_of_two_earlier_named_runs_and_of_a_run_saved_today():
    for base, head in ((_saved("before"), _saved("after")), (_saved("before"), _saved(None))):
        d = diff_results(base, head)
        assert [s.mode for s in d.sections] == ["eager", "default", "max-autotune"]
        (skipped,) = d.skipped  # skipped on both sides, not "only in base"
        assert skipped.startswith("reduce-overhead: both skipped (CUDA graphs need a CUDA device")


def test_a_compare_of_several_model_files_keeps_its_labels():
    r = _saved("a", models=["a", "b"])
    assert [m.label for m in r.modes][:2] == ["a:eager", "a:default"] and r.model == "mlp"
