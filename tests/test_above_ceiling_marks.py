"""A compute-bound kernel above the measured compute ceiling (beyond the measurement's 5 % of
noise) is marked ``!`` wherever its % is shown, and so is a group's % that takes one in: the
kernel tables, the op view, the views by module and line (with a note saying what ``!`` is), the
roofline table's verdict and legend, and the JSON. Synthetic calls against a 100 GB/s, 1 TFLOP/s
ceiling, the expected figures computed here from their FLOPs and times."""

from __future__ import annotations

import json
import re

import pytest

from inductor_bench.core.ceilings import Ceilings, Roofline
from inductor_bench.core.result_json import result_json
from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
from inductor_bench.core.sources import CallSite, Origin
from inductor_bench.render.breakdown import render_breakdown

from .conftest import FIXTURES

GBPS, TFLOPS = 100.0, 1.0  # ridge at 10 FLOP/byte

# aten::mm called from two modules: (module, ms, bytes, FLOPs), one launch each, all compute-bound
# (1,000 FLOP/byte and more) and long (1 ms at best): none latency-bound
CALLS = [
    ("fast", 1.0, 1e6, 1.5e9),  # 1.5 TFLOP/s: 150 % of the ceiling, which was measured low
    ("fast", 1.0, 1e6, 0.4e9),  # 40 %
    ("even", 1.0, 1e6, 1.04e9),  # 104 %: within the measurement's noise
    ("even", 1.0, 1e6, 0.4e9),
]


def _result() -> BreakdownResult:
    ms = sum(c[1] for c in CALLS)
    mm = KernelStat("aten::mm", "extern_gemm", float(len(CALLS)), ms, bytes=sum(c[2] for c in CALLS),
                    flops=sum(c[3] for c in CALLS), compute="fp32")
    sites = [CallSite("aten::mm", i, "extern_kernels.mm", 1.0, t, origin=Origin(nodes=[f"mm_{i}"], modules=[m]))
             for i, (m, t, _, _) in enumerate(CALLS)]
    g = GraphResult("0-inference", "inference", iterations=1, wall_ms=ms, kernel_ms=ms, busy_ms=ms,
                    categories={"extern_gemm": ms}, kernels=[mm], sites=sites,
                    site_counts=[[b, f] for _, _, b, f in CALLS])
    return BreakdownResult("m", graphs=[g], roofline=Roofline(Ceilings("test device", gbps=GBPS,
                                                                      tflops={"fp32": TFLOPS})))


def _pcts() -> list[float]:
    out = []
    for _, ms, moved, flops in CALLS:
        assert flops / moved > TFLOPS * 1e3 / GBPS  # above the ridge: compute-bound
        out.append(100 * flops / (ms / 1e3) / 1e12 / TFLOPS)
    return out


def _cells(text: str, name: str) -> list[str]:
    rows = [re.split(r"\s{2,}", ln.strip()) for ln in text.splitlines() if re.search(rf"{re.escape(name)}(?! #)\s", ln)]
    return [[c for c in row if "%" in c][-1] for row in rows if any("%" in c for c in row)]


RUN = FIXTURES / "results" / "cpu_mlp_train_roofline" / "breakdown.json"


def test_the_recorded_runs_gemms_above_the_low_ceiling_are_marked_where_their_percent_is_shown():
    """The recorded MLP training step, whose fp32 ceiling was measured low beside other work: its
    forward ``aten::addmm #1`` (33.6 MFLOP in 0.823 ms) is 160 % of it, marked ``!160%`` in the
    kernel tables, its verdict ``compute (ceiling low: the roofline warning says why)``, and ``above_ceiling`` in
    the JSON; ``aten::mm #3`` at 38 % is not marked, nor is a kernel within 5 % of noise."""
    d = json.loads(RUN.read_text())
    tflops = d["extras"]["roofline"]["measured"]["tflops"]["fp32"]
    fwd = next(g for g in d["graphs"] if g["id"] == "0-forward")
    site = next(s for s in fwd["sites"] if s["kernel"] == "aten::addmm" and s["index"] == 1)
    moved, flops = fwd["site_counts"][1]
    gbps = d["extras"]["roofline"]["measured"]["gbps"]
    assert flops / moved * gbps / 1e3 > tflops  # above the ridge: held against the compute ceiling
    pct = 100 * flops / (site["ms"] / 1e3) / 1e12 / tflops
    assert round(pct, 1) == 160.1
    r = BreakdownResult.from_dict(d)
    text = render_breakdown(r, width=250)
    assert _cells(text, "aten::addmm #1").count(f"!{pct:.0f}%") == 2  # the top table, the graph's
    assert _cells(text, "aten::mm #3").count("38%") == 2
    row = next(ln for ln in text.splitlines() if ln.startswith("0-forward ") and "aten::addmm #1 " in ln)
    assert f"{pct:.1f}%  compute (ceiling low: the roofline warning says why)" in row
    assert "the kernel tables mark it !" in " ".join(text.split())
    figures = {(k["graph"], k["kernel"]): k for k in json.loads(result_json(r))["extras"]["roofline"]["kernels"]}
    assert figures[("0-forward", "aten::addmm #1")]["above_ceiling"] is True
    assert figures[("0-forward", "aten::addmm #1")]["pct"] == pytest.approx(pct)
    assert "above_ceiling" not in figures[("0-backward", "aten::mm #3")]
    assert figures[("0-backward", "cpp_fused_sum_2")]["no_distance"] == "in cache"


def test_a_kernel_within_the_noise_of_the_ceiling_is_not_marked():
    """Synthetic: 150 % is marked in the roofline JSON, 104 % (within 5 %) and 40 % are not."""
    figures = {k["kernel"]: k for k in json.loads(result_json(_result()))["extras"]["roofline"]["kernels"]}
    assert [round(figures[f"aten::mm #{i}"]["pct"]) for i in range(4)] == [round(p) for p in _pcts()]
    assert [figures[f"aten::mm #{i}"].get("above_ceiling", False) for i in range(4)] == [True, False, False, False]


def test_a_group_that_takes_in_such_a_kernel_is_marked_and_the_note_says_why():
    """The module ``fast`` (150 % and 40 %, 1 ms each) reads ``!95.0%``; ``even`` (104 % and
    40 %) ``72.0%`` unmarked; the total, taking in the first, ``!83.5%``; the op view ``!84%``."""
    from inductor_bench.render.view_marks import LOW_GROUP

    pcts = _pcts()
    fast, even = (pcts[0] + pcts[1]) / 2, (pcts[2] + pcts[3]) / 2
    total = sum(pcts) / 4
    assert (round(fast, 1), round(even, 1), round(total, 1)) == (95.0, 72.0, 83.5)
    text = render_breakdown(_result(), by="module", width=250)
    table = text.split("Time by module", 1)[1].split("\n\n")[1]
    rows = {re.split(r"\s{2,}", ln.strip())[-1]: re.split(r"\s{2,}", ln.strip())[4]
            for ln in table.splitlines() if re.match(r"\s*(\d+|total)\s", ln)}
    assert rows["fast"] == f"!{fast:.1f}%" and rows["even"] == f"{even:.1f}%"
    assert rows[f"!{total:.1f}%"] == f"!{total:.1f}%"  # the total row: its % is its last cell
    assert " ".join(LOW_GROUP.split()) in " ".join(text.split())
    assert _cells(render_breakdown(_result(), by="op", width=250), "aten::mm")[:2] == [f"!{total:.0f}%"] * 2
