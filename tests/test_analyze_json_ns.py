"""`analyze --format json`: every figure to the nanosecond. A trace times its events in µs with
at most three decimals, so a figure in ms holds six; the sums and differences of float64
timestamps wrote binary noise past them (a device's kernel ms ``94.56979499999997``, a rank's
idle ``0.6222568359374998``, a straggler's excess ``2.7749599609375006``). Walked over every
float of the JSON of each recorded trace: the GPU traces of HTA (tests/fixtures/hta/, and
../shared/gpu-traces/hta/ where the checkout has it) and the ranks of tests/fixtures/ranks/
(a directory of ranks, gloo ranks on CPU, their profiler cycles)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inductor_bench.cli import main

from .conftest import FIXTURES
from .test_analyze import TRACES

RANKS = FIXTURES / "ranks"
INPUTS = {**TRACES, **{f"ranks/{d}": RANKS / d for d in ("", "cpu_gloo", "cpu_gloo_allreduce", "cpu_gloo_cycles")}}


def floats(value: object, where: str = "") -> list[tuple[str, float]]:
    """Every float in a JSON value, with where it sits."""
    if isinstance(value, float):
        return [(where, value)]
    if isinstance(value, dict):
        return [f for k, v in value.items() for f in floats(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [f for i, v in enumerate(value) for f in floats(v, f"{where}[{i}]")]
    return []


def analyze_json(path: Path, capsys: pytest.CaptureFixture[str]) -> object:
    capsys.readouterr()
    assert main(["analyze", str(path), "--format", "json"]) in (None, 0)
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_every_figure_of_the_json_has_six_decimals_at_most(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    found = floats(analyze_json(INPUTS[name], capsys))
    assert found
    noisy = [(where, v) for where, v in found if v != round(v, 6)]
    assert noisy == []
    # written as six decimals at most: the JSON text a reader sees
    assert all(len(repr(v).partition(".")[2]) <= 6 for _, v in found if "e" not in repr(v))


def test_a_rank_straggling_reads_its_figures_to_the_ns(capsys: pytest.CaptureFixture[str]) -> None:
    """cpu_gloo: rank 1 straggles; its wall less the median rank's, to the ns (the raw
    difference of the two float64 walls is 2.7749599609375006)."""
    d = analyze_json(RANKS / "cpu_gloo", capsys)
    s = d["stragglers"][0]
    assert s["excess_ms"] == round(s["wall_ms"] - s["median_wall_ms"], 6)
    assert repr(s["excess_ms"]) == "2.77496"
