"""`analyze` names a CPU-only trace's columns, legends and titles for what it holds: its rows are
CPU threads running ATen ops, so the steps table says ops ms, between ops and after last op where
a device trace's says kernel ms, waiting on CPU and nothing launched (which a CPU user read as
device kernels and launches), and the category and top tables' share is of the op time. The
figures, and the JSON's keys, are the same; a GPU trace's report is word for word as before."""

from __future__ import annotations

import json
import re
from pathlib import Path

from inductor_bench.core.analyze import analyze_file
from inductor_bench.render.analyze import render_analyze

FIXTURES = Path(__file__).parent / "fixtures"
# recorded on CPU, torch 2.13.0, 2026-12-07 (tests/fixtures/cpu_torchscript/record.py)
CPU = FIXTURES / "cpu_torchscript" / "torchscript-fork-torch-2.13.0.json.gz"
# recorded on an NVIDIA H200, torch 2.11.0 (tests/fixtures/cuda_h200_stack_loop/README.md)
GPU = FIXTURES / "cuda_h200_stack_loop" / "stack-loop.pt.trace.json.gz"

CPU_STEP_HEADER = ["step", "thread", "wall ms", "busy ms", "busy", "ops ms", "other steps' work", "between ops",
                   "after last op"]
GPU_STEP_HEADER = ["step", "device", "wall ms", "busy ms", "busy", "kernel ms", "other steps' work",
                   "waiting on CPU", "queued", "nothing launched"]
GPU_WORDS = ("kernel ms", "waiting on CPU", "nothing launched", "% kernel", "Kernel time", "kernels")


def _md_header(out: str, first: str) -> list[str]:
    """The cells of the markdown table header that starts with ``first``."""
    line = next(ln for ln in out.splitlines() if re.match(rf"\| +{re.escape(first)} +\|", ln))
    return [c.strip() for c in line.strip("|").split("|")]


def _text_header(out: str, first: str) -> list[str]:
    line = next(ln for ln in out.splitlines() if ln.lstrip().startswith(first + "  "))
    return re.split(r"\s{2,}", line.strip())


def _figcaptions(page: str) -> list[str]:
    return re.findall(r"<figcaption>(.*?)</figcaption>", page)


def test_a_cpu_traces_tables_name_ops_and_threads_in_text_and_markdown():
    r = analyze_file(CPU)
    for out, header in ((render_analyze(r, "text"), _text_header), (render_analyze(r, "markdown"), _md_header)):
        assert header(out, "step") == CPU_STEP_HEADER
        assert header(out, "category") == ["category", "ms", "% op time", "% wall"]
        assert header(out, "#") == ["#", "thread", "op", "category", "calls", "ms", "% op time"]
        notes = out.replace("\n", " ")
        assert "; ops ms sums them." in notes
        assert ("idle = wall - busy: other steps' work (an op of another step still running), between ops "
                "(Python, the framework, data loading), after last op (the thread's last op had ended)") in notes
        assert not any(w in out for w in ("kernel ms", "waiting on CPU", "nothing launched", "% kernel"))


def test_a_cpu_traces_figures_are_the_jsons_under_the_new_names():
    """The renamed columns hold the JSON's kernel_ms, waiting_on_cpu_ms and nothing_launched_ms,
    keys unchanged: ProfilerStep#1 on the loop's thread 7.290, 0.862, 0.105 ms."""
    r = analyze_file(CPU)
    d = next(x for x in json.loads(r.to_json())["steps"][0]["devices"] if x["device"] == "CPU thread 29911")
    assert {"kernel_ms", "waiting_on_cpu_ms", "queued_ms", "nothing_launched_ms"} <= set(d)
    assert (round(d["kernel_ms"], 3), round(d["waiting_on_cpu_ms"], 3), round(d["nothing_launched_ms"], 3)) == (
        7.290, 0.862, 0.105)
    out = render_analyze(r, "text")
    row = next(ln for ln in out.splitlines() if ln.startswith("ProfilerStep#1  CPU thread 29911"))
    cells = dict(zip(CPU_STEP_HEADER, re.split(r"\s{2,}", row.strip()), strict=True))
    assert (cells["ops ms"], cells["between ops"], cells["after last op"]) == ("7.290", "0.862", "0.105")


def test_a_cpu_traces_charts_name_ops_threads_and_the_idle_as_the_table_does():
    page = render_analyze(analyze_file(CPU), "html")
    caps = _figcaptions(page)
    assert "Op time by category (the steady mean step)" in caps and "Top 10 ops" in caps
    assert "idle: between ops" in page and "idle: after last op" in page
    assert "% of its thread&#x27;s op time" in page or "% of its thread's op time" in page
    assert not any(w in page for w in ("idle: waiting on CPU", "idle: nothing launched", "device CPU thread",
                                       "Kernel time", "kernel ms"))


def test_a_gpu_traces_report_keeps_its_device_words():
    r = analyze_file(GPU)
    text, md, page = (render_analyze(r, f) for f in ("text", "markdown", "html"))
    for out, header in ((text, _text_header), (md, _md_header)):
        assert header(out, "step") == GPU_STEP_HEADER
        assert header(out, "category") == ["category", "ms", "% kernel", "% wall"]
        assert header(out, "#")[:7] == ["#", "device", "kernel", "category", "calls", "ms", "% kernel"]
    assert "; kernel ms sums them (concurrent streams can exceed busy)." in text.replace("\n", " ")
    caps = _figcaptions(page)
    assert any(c.startswith("Kernel time by category") for c in caps)
    assert any(re.fullmatch(r"Top \d+ kernels", c) for c in caps)
    assert "idle: waiting on CPU" in page and "idle: nothing launched" in page
    # ("Host Python between ops" heads a section of its own, on any trace)
    assert not any(w in text + page for w in ("ops ms", "idle: between ops", "after last op", "% op time"))
    assert all(w in text for w in GPU_WORDS[:4])
