"""CUDA-graph replays in analyze: per step and device, the cudaGraphLaunch calls the step made,
the device events they replayed (each carries its graph launch's correlation) and their time; the
header gives the steady mean step's. Checked on HTA's recorded A100 rank-0 trace of a
torch.compile training run with CUDA graphs (tests/fixtures/hta/README.md: source and license)
against the raw JSON."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from inductor_bench.core.analyze import analyze_file
from inductor_bench.render.analyze import render_analyze

HTA = Path(__file__).parent / "fixtures" / "hta"
RANK0 = HTA / "negative_queue_length_values_check_rank0.json.gz"
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def _raw(path: Path) -> tuple[list[str], dict[str, tuple[set[int], int, float, float]]]:
    """Steps, and per step: (graph launch correlations, replayed events, their µs, the µs of
    every device event the step launched)."""
    with gzip.open(path) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    launches = {e["args"]["correlation"]: e for e in events
                if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    graph = {c for c, e in launches.items() if e["name"] == "cudaGraphLaunch"}
    steps = sorted((e for e in events if e.get("cat") == "user_annotation"
                    and re.fullmatch(r"ProfilerStep#\d+", e["name"])), key=lambda e: e["ts"])
    out = {s["name"]: (set(), 0, 0.0, 0.0) for s in steps}
    for e in events:
        if e.get("cat") not in DEVICE_CATS or e["args"].get("correlation") not in launches:
            continue
        t = launches[e["args"]["correlation"]]["ts"]
        step = next((s["name"] for s in steps if s["ts"] <= t <= s["ts"] + s["dur"]), None)
        if step is None:
            continue
        corrs, n, us, total = out[step]
        if e["args"]["correlation"] in graph:
            corrs.add(e["args"]["correlation"])
            n, us = n + 1, us + e["dur"]
        out[step] = (corrs, n, us, total + e["dur"])
    return [s["name"] for s in steps], out


def test_replays_per_step_against_the_raw_trace():
    names, raw = _raw(RANK0)
    r = analyze_file(RANK0)
    (g,) = r.graph_replays
    assert g.device == "0"
    assert [s.name for s in r.steps] == names
    assert g.launches == [len(raw[n][0]) for n in names] == [14] * 5
    assert g.events == [raw[n][1] for n in names] == [69] * 5
    assert g.ms == pytest.approx([raw[n][2] / 1000 for n in names], abs=1e-9)
    assert [s.devices[0].kernel_ms for s in r.steps] == pytest.approx([raw[n][3] / 1000 for n in names], abs=1e-9)


def test_the_header_gives_the_steady_mean_step():
    names, raw = _raw(RANK0)
    r = analyze_file(RANK0)
    assert r.to_dict()["steady_steps"] == names  # all five are steady
    ms = sum(raw[n][2] for n in names) / len(names) / 1000
    kernel = sum(raw[n][3] for n in names) / len(names) / 1000
    assert (round(ms, 3), round(100 * ms / kernel, 1)) == (21.093, 27.0)  # 105.467 / 5 ms
    text = render_analyze(r)
    assert ("CUDA-graph replays on device 0 (steady mean step): 14 graph launches replaying 69 device "
            f"events, {ms:.3f} ms, {100 * ms / kernel:.1f}% of its kernel time") in text


def test_a_trace_without_graph_launches_has_none():
    r = analyze_file(HTA / "ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
    assert r.graph_replays == []
    assert "CUDA-graph replays on device" not in render_analyze(r)
