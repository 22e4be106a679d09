"""A compute-bound kernel above the measured compute ceiling (from the first percent over: no
figure above 100 % reads unmarked) is marked ``!`` wherever its % is shown, and so is a group's % that takes one in: the
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
    ("even", 1.0, 1e6, 0.98e9),  # 98 %: under the ceiling
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
    the JSON; ``aten::mm #3`` at 38 % is not marked."""
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


def test_a_kernel_under_the_ceiling_is_not_marked():
    """Synthetic: 150 % is marked in the roofline JSON, 98 % and 40 % are not."""
    figures = {k["kernel"]: k for k in json.loads(result_json(_result()))["extras"]["roofline"]["kernels"]}
    assert [round(figures[f"aten::mm #{i}"]["pct"]) for i in range(4)] == [round(p) for p in _pcts()]
    assert [figures[f"aten::mm #{i}"].get("above_ceiling", False) for i in range(4)] == [True, False, False, False]


def test_a_group_that_takes_in_such_a_kernel_is_marked_and_the_note_says_why():
    """The module ``fast`` (150 % and 40 %, 1 ms each) reads ``!95.0%``; ``even`` (98 % and
    40 %) ``69.0%`` unmarked; the total, taking in the first, ``!82.0%``; the op view ``!82%``."""
    from inductor_bench.render.view_marks import LOW_GROUP

    pcts = _pcts()
    fast, even = (pcts[0] + pcts[1]) / 2, (pcts[2] + pcts[3]) / 2
    total = sum(pcts) / 4
    assert (round(fast, 1), round(even, 1), round(total, 1)) == (95.0, 69.0, 82.0)
    text = render_breakdown(_result(), by="module", width=250)
    table = text.split("Time by module", 1)[1].split("\n\n")[1]
    rows = {re.split(r"\s{2,}", ln.strip())[-1]: re.split(r"\s{2,}", ln.strip())[4]
            for ln in table.splitlines() if re.match(r"\s*(\d+|total)\s", ln)}
    assert rows["fast"] == f"!{fast:.1f}%" and rows["even"] == f"{even:.1f}%"
    assert rows[f"!{total:.1f}%"] == f"!{total:.1f}%"  # the total row: its % is its last cell
    assert " ".join(LOW_GROUP.split()) in " ".join(text.split())
    assert _cells(render_breakdown(_result(), by="op", width=250), "aten::mm")[:2] == [f"!{total:.0f}%"] * 2


def test_a_kernel_a_percent_over_the_ceiling_is_marked_but_measures_nothing_again():
    """Synthetic: a GEMM at 102 % of the fp32 ceiling (1.02 GFLOP in 1 ms against 1 TFLOP/s) is
    marked and warned of like one at 150 %: no figure above 100 % reads as a kernel near its
    limit. Within 5 % it is the measurement's own noise, not worth measuring the ceiling again."""
    from inductor_bench.core.roofline import chart_points, to_measure_again

    flops = 1.02e9
    pct = 100 * flops / 1e-3 / 1e12 / TFLOPS
    mm = KernelStat("aten::mm", "extern_gemm", 1.0, 1.0, bytes=1e6, flops=flops, compute="fp32")
    g = GraphResult("0-inference", "inference", iterations=1, wall_ms=1.0, kernel_ms=1.0, busy_ms=1.0,
                    categories={"extern_gemm": 1.0}, kernels=[mm])
    r = BreakdownResult("m", graphs=[g], roofline=Roofline(Ceilings("test device", gbps=GBPS,
                                                                    tflops={"fp32": TFLOPS})))
    text = render_breakdown(r, width=250)
    assert f"!{pct:.0f}%" == "!102%" and _cells(text, "aten::mm").count("!102%") == 2
    assert ("WARNING: 1 compute-bound kernel(s) ran above the measured compute ceiling (up to 102%: "
            "0-inference aten::mm)") in " ".join(text.split())
    assert json.loads(result_json(r))["extras"]["roofline"]["kernels"][0]["above_ceiling"] is True
    assert to_measure_again(chart_points(r), r.roofline.measured) == {}
    mm.flops = 1.06e9  # 106 %: past the noise, measured again
    assert to_measure_again(chart_points(r), r.roofline.measured) == {"fp32": pytest.approx(1.06)}
