"""A rank whose trace has no ProfilerStep# markers (its loop never called ``prof.step()``, or called it with no profiler schedule) is one
window, its whole trace, beside ranks whose figures are of one typical step. Before, its line
read "1 step" and its row of the per-rank tables stood among the others' as one step: rank 3 of
the synthetic set, two steps long, read twice every other rank's time in every category, and on
the real gloo ranks rank 1 read the slowest in every range by three steps' worth."""

from __future__ import annotations

import gzip
import html
import json
import re

import pytest

from .test_analyze import run_cli
from .test_analyze_ranks import CPU_GLOO, RANK_FILES

DEVICE = {"kernel", "gpu_memcpy", "gpu_memset"}


def _without_steps(trace: dict) -> dict:
    return trace | {"traceEvents": [e for e in trace["traceEvents"]
                                    if not str(e.get("name", "")).startswith("ProfilerStep#")]}


def _write(tmp_path, sources, unmarked: int) -> list[dict]:
    """Each source as rank-<r>.json, the one of rank ``unmarked`` without its step markers."""
    traces = []
    for r, src in enumerate(sources):
        trace = json.loads(gzip.decompress(src.read_bytes()))
        trace = _without_steps(trace) if r == unmarked else trace
        (tmp_path / f"rank-{r}.json").write_text(json.dumps(trace))
        traces.append(trace)
    return traces


def test_a_rank_without_step_markers_is_named_whole_trace_in_its_line_and_its_rows(tmp_path, capsys):
    traces = _write(tmp_path, RANK_FILES[:4], unmarked=3)
    code, out, err = run_cli(capsys, str(tmp_path))
    assert code == 0, err
    lines = out.splitlines()
    assert f"rank 3: {tmp_path / 'rank-3.json'} (device 0, no ProfilerStep# markers: its whole trace is one window)" in lines
    assert f"rank 0: {tmp_path / 'rank-0.json'} (device 0, 2 steps)" in lines
    at = lines.index("Time by category per rank (steady mean step; rank 3: whole trace, ms)")
    rows = {line.split("  ")[0].strip(): line for line in lines[at + 5:at + 9]}
    assert list(rows) == ["0", "1", "2", "3 (whole trace)"]
    # the row is every device event of the trace: its cells add up to their summed durations
    whole = sum(e["dur"] for e in traces[3]["traceEvents"] if e.get("cat") in DEVICE) / 1000
    cells = [float(x) for x in rows["3 (whole trace)"].split()[3:]]
    assert sum(cells) == pytest.approx(whole, abs=0.005)
    assert ("rank 3: no ProfilerStep# markers, so its figures are of its whole trace (all it recorded), "
            "not of one step.") in lines


def test_its_ranges_are_named_whole_trace_beside_the_other_ranks_typical_step(tmp_path, capsys):
    """The real gloo ranks, rank 1's markers taken out: its ranges are its three steps' worth."""
    traces = _write(tmp_path, CPU_GLOO, unmarked=1)
    code, out, err = run_cli(capsys, str(tmp_path))
    assert code == 0, err
    lines = out.splitlines()
    assert sum(e.get("name") == "Optimizer.step#SGD.step" for e in traces[1]["traceEvents"]) == 3
    assert "Named ranges per rank: record_function (steady mean step; rank 1: whole trace, wall ms)" in lines
    row = next(line for line in lines if line.startswith("Optimizer.step#SGD.step "))
    assert "rank 1 (whole trace): " in row and "rank 0: " in row
    assert ("rank 1: no ProfilerStep# markers, so its figures are of its whole trace (all it recorded), "
            "not of one step.") in lines
    assert "(whole trace)" not in run_cli(capsys, *map(str, CPU_GLOO))[1]


def test_the_html_category_chart_names_its_bars_and_scope_as_the_table_does(tmp_path, capsys):
    """Its bar read ``rank 3`` and its caption "(steady mean step)" beside the table's
    ``3 (whole trace)``: the bar's length is rank 3's whole trace, two steps' worth."""
    _write(tmp_path, RANK_FILES[:4], unmarked=3)
    page_path = tmp_path / "ranks.html"
    code, _, err = run_cli(capsys, str(tmp_path), "--html", str(page_path))
    assert code == 0, err
    page = page_path.read_text()
    captions = [html.unescape(c) for c in re.findall(r"<figcaption>(.*?)</figcaption>", page)]
    assert captions[1] == "Time by category per rank (steady mean step; rank 3: whole trace)"
    headings = [html.unescape(h) for h in re.findall(r"<h2[^>]*>(.*?)</h2>", page)]
    assert "Time by category per rank (steady mean step; rank 3: whole trace, ms)" in headings
    labels = re.findall(r'text-anchor="end"><title>(rank [^<]*)</title>', page)
    assert labels == ["rank 0", "rank 1", "rank 2", "rank 3 (whole trace)"]
    rows = [html.unescape(re.sub(r"<[^>]*>", "", r)) for r in re.findall(r"<tr><td[^>]*>(.*?)</td>", page)]
    assert "3 (whole trace)" in rows and "3" not in rows


def test_ranks_all_without_step_markers_head_their_tables_whole_trace(tmp_path, capsys):
    for r, src in enumerate(RANK_FILES[:2]):
        trace = _without_steps(json.loads(gzip.decompress(src.read_bytes())))
        (tmp_path / f"rank-{r}.json").write_text(json.dumps(trace))
    code, out, err = run_cli(capsys, str(tmp_path))
    assert code == 0, err
    assert "Time by category per rank (whole trace, ms)" in out.splitlines()
