"""A compare's own meta.json: the claim its directory was made with (``status: claimed`` and
the process id) stayed there after the compare ended, so a finished compare read as one still
under way. Its result now writes it over, with the whole compare's status and each column's.
Synthetic results, no torch."""

from __future__ import annotations

import json

import pytest

from inductor_bench.core.compare import CompareResult, ModeResult
from inductor_bench.runner.rundir import new_run_dir, save_result


def _compare(*states: str, errors: list[str] | None = None) -> CompareResult:
    modes = [ModeResult(mode=m, status=s, reason=None if s == "ok" else f"{m} {s}")
             for m, s in zip(("eager", "default", "max-autotune"), states, strict=False)]
    return CompareResult(model="mlp", device="cpu", device_name="AMD EPYC (2 cores, 2 threads)",
                         versions={"torch": "2.13.0+cpu"}, created="2026-12-07T08:10:05+00:00",
                         modes=modes, errors=errors or [])


@pytest.mark.parametrize("states, errors, status", [
    (("ok", "ok", "ok"), [], "ok"),
    (("ok", "failed", "ok"), ["default: compiling failed"], "partial"),
    (("ok", "ok", "interrupted"), ["interrupted"], "interrupted"),
    (("failed", "timeout"), ["eager: failed"], "failed"),
    (("ok", "ok"), ["the timing worker crashed"], "partial"),
])
def test_a_saved_compare_writes_its_meta_over_the_claim(tmp_path, states, errors, status):
    run = new_run_dir("mlp", "compare", out=tmp_path / "cmp")
    assert json.loads((run / "meta.json").read_text())["status"] == "claimed"
    result = _compare(*states, errors=errors)
    save_result(run, result)
    meta = json.loads((run / "meta.json").read_text())
    assert meta == {
        "tool": "inductor-bench compare", "status": status, "device": "cpu",
        "device_name": "AMD EPYC (2 cores, 2 threads)", "versions": {"torch": "2.13.0+cpu"},
        "created": "2026-12-07T08:10:05+00:00", "errors": errors,
        "columns": [{"column": m.label, "status": m.status, "reason": m.reason} for m in result.modes],
    }
    assert [c["column"] for c in meta["columns"]] == ["eager", "default", "max-autotune"][:len(states)]
