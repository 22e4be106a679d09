"""A compare asked ``--device auto`` whose every compile worker stopped before choosing the device
(past --timeout) says so in its title; it read ``on auto`` as if that were a device (hand-built
results: the recorded mlp compare with its device left unresolved, its columns timed out)."""

from __future__ import annotations

import json
from pathlib import Path

from inductor_bench.core.compare import CompareResult
from inductor_bench.render.compare import render_compare

RECORDED = Path(__file__).resolve().parent / "fixtures" / "results" / "cpu_mlp_compare" / "compare.json"
TITLE = "mlp: train step (forward + backward), float32, on "


def _result(device: str, device_name: str) -> CompareResult:
    cmp = json.loads(RECORDED.read_text())
    for m in cmp["modes"]:
        m.update(status="timeout", reason="compile worker ran past --timeout 60s", step_samples_ms=[],
                 paired_ms=[], breakdown=None)
    cmp.update(device=device, device_name=device_name, interleaved=None)
    return CompareResult.from_dict(cmp)


def _title(r: CompareResult) -> str:
    return next(ln for ln in render_compare(r).splitlines() if ln.startswith("inductor-bench compare: mlp: "))


def test_a_device_no_worker_chose_is_said_to_be_unchosen():
    r = _result("auto", "")
    assert _title(r) == ("inductor-bench compare: " + TITLE
                         + "--device auto: no worker got as far as choosing the device")
    assert "no worker got as far as choosing the device" in render_compare(r, "html")


def test_a_chosen_device_is_named_as_before():
    assert _title(_result("cpu", "AMD EPYC (2 cores, 1 thread)")).endswith(", on AMD EPYC (2 cores, 1 thread)")
