"""compare's and diff's time-weighted % of peak, marked as breakdown marks it: ``!`` where the step
takes in a compute-bound kernel above the measured compute ceiling, ``~`` and ``^`` where none of
its kernels' % is a distance to a limit; the same flags in their JSON as in breakdown's.
Synthetic results on hand-built ceilings (100 GB/s, 1 TFLOP/s fp32: the ridge at 10 FLOP/byte)."""

from __future__ import annotations

import json
import re

import pytest

from inductor_bench.core.ceilings import Ceilings, Roofline
from inductor_bench.core.compare import CompareResult, ModeResult
from inductor_bench.core.diff import diff_results
from inductor_bench.core.result_json import result_json
from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.render.compare import render_compare
from inductor_bench.render.diff import render_diff
from inductor_bench.render.roofline_step import roofline_rows, step_marks_note, step_roofs

CEIL = Ceilings("test device", gbps=100.0, tflops={"fp32": 1.0})
# a C++ GEMM template: 2.2 GFLOP over 1 MB (2200 FLOP/byte, compute-bound) in 2 ms, 1.1 TFLOP/s:
# 110% of the compute ceiling, above it
GEMM = KernelStat("cpp_fused_mm_0", "cpp_template", 1.0, 2.0, bytes=1e6, flops=2.2e9, compute="fp32")
COPY = KernelStat("cpp_fused_copy_1", "cpp_pointwise", 1.0, 2.0, bytes=80e6)  # 40 GB/s: 40%
# 1.2 MB in 4 us: 300 GB/s, 300% of the DRAM ceiling, 12 us at best (no launch too short): in cache
CACHED = KernelStat("cpp_fused_sum_2", "cpp_reduction", 1.0, 0.004, bytes=1.2e6)
# 4 kB in 1 us: 4 GB/s, 4%; 0.04 us at best, under a host launch's 10 us: latency-bound
SHORT = KernelStat("cpp_fused_add_3", "cpp_pointwise", 1.0, 0.001, bytes=4e3)

LOW = ("! = the figure takes in a compute-bound kernel above 100% of the measured compute ceiling, a "
       "ceiling measured low (the run's breakdown warns of it), so it is held against a ceiling that "
       "kernel beat")
LATENCY_WORDS = ("~ = no kernel's % is a distance to a limit: the time-weighted % of the latency-bound "
                 "kernels (too short to reach one)")
CACHE_WORDS = ("^ = no kernel's % is a distance to a limit: the time-weighted % of the DRAM ceiling of "
               "the in-cache kernels (above it, served from a cache it does not bound)")
HEAD = "% of peak marked as breakdown's tables mark it: "


def _result(*kernels: KernelStat, ceilings: Ceilings = CEIL) -> BreakdownResult:
    """One inference graph of ``kernels`` (synthetic), its roofline held against ``ceilings``."""
    ms = sum(k.ms for k in kernels)
    cats: dict[str, float] = {}
    for k in kernels:
        cats[k.category] = cats.get(k.category, 0.0) + k.ms
    g = GraphResult("0-inference", "inference", kernels=list(kernels), iterations=1, wall_ms=ms,
                    kernel_ms=ms, busy_ms=ms, categories=cats)
    return BreakdownResult("m", graphs=[g], roofline=Roofline(ceilings))


def _compare(r: BreakdownResult) -> CompareResult:
    return CompareResult("m", modes=[ModeResult("default", step_samples_ms=[5.0] * 10, breakdown=r)])


def _module_total(r: BreakdownResult) -> str:
    """The % peak cell of the module view's total row, as breakdown shows it."""
    text = render_breakdown(r, by="module", width=250).split("Time by module", 1)[1]
    row = next(ln for ln in text.splitlines() if ln.startswith("total "))
    return re.split(r"\s{2,}", row.strip())[4]


def _diff_row(r: BreakdownResult) -> list[str]:
    text = render_diff(diff_results(r, r))
    row = next(ln for ln in text.splitlines() if ln.startswith("% of peak (time-weighted)"))
    return re.split(r"\s{2,}", row.strip())


def test_a_step_above_the_compute_ceiling_reads_marked_in_compare_and_diff_as_in_breakdown():
    r = _result(GEMM, COPY)
    pct = (110.0 * 2.0 + 40.0 * 2.0) / 4.0  # time-weighted: 75.0
    assert _module_total(r) == f"!{pct:.1f}%" == "!75.0%"
    assert roofline_rows([r])[0] == ["% of peak (time-weighted)", "!75.0%"]
    assert _diff_row(r) == ["% of peak (time-weighted)", "!75.0%", "!75.0%", "0.0 pp"]
    note = HEAD + LOW
    assert step_marks_note(step_roofs([r])) == note
    assert note in render_compare(_compare(r)).replace("\n", " ")
    diff_text = render_diff(diff_results(r, r))
    assert note in " ".join(diff_text.split())
    # the Toward table marks the GEMM's own % on both sides, as breakdown's tables mark it
    gemm_row = next(ln for ln in diff_text.splitlines() if "cpp_fused_mm_0" in ln)
    assert re.split(r"\s{2,}", gemm_row.strip())[3:5] == ["!110.0%", "!110.0%"]
    # JSON: breakdown's step, compare's column's and diff's sides alike, as a kernel is flagged
    step = {"pct": pytest.approx(pct), "judged_share": pytest.approx(100.0), "above_ceiling": True}
    assert json.loads(result_json(r))["extras"]["roofline"]["step"] == step
    mode = json.loads(result_json(_compare(r)))["modes"][0]["breakdown"]
    assert mode["extras"]["roofline"]["step"] == step
    section = json.loads(json.dumps(diff_results(r, r).to_dict()))["sections"][0]
    assert section["roofline_step"] == [step, step]
    assert section["roofline_pct"] == pytest.approx([pct, pct])
    (k,) = [k for k in section["kernels"] if k["name"] == "cpp_fused_mm_0"]
    assert k["above_ceiling"] == ["base", "head"]
    assert "above_ceiling" not in next(k for k in section["kernels"] if k["name"] == "cpp_fused_copy_1")


def test_a_step_of_in_cache_and_latency_bound_kernels_reads_both_marked_figures():
    """No kernel's % is a distance to a limit: the in-cache kernel's 300% (4 us) first, then the
    latency-bound one's 4% (1 us), each marked, over all of the step's time; not a dash."""
    r = _result(CACHED, SHORT)
    cell = "^300.0%, ~4.0%"
    assert _module_total(r) == cell
    assert roofline_rows([r])[0] == ["% of peak (time-weighted)", cell]
    assert _diff_row(r) == ["% of peak (time-weighted)", cell, cell]  # no % to move
    note = (HEAD + "; ".join((LATENCY_WORDS, CACHE_WORDS))
            + "; two figures: the step has kernels of both kinds, the one with more of its time first")
    assert step_marks_note(step_roofs([r])) == note
    assert note in render_compare(_compare(r)).replace("\n", " ")
    step = json.loads(result_json(r))["extras"]["roofline"]["step"]
    assert step == {"pct": None, "judged_share": 0.0, "no_distance_share": pytest.approx(100.0),
                    "no_distance": [{"why": "in cache", "pct": pytest.approx(300.0), "ms": 0.004},
                                    {"why": "latency-bound", "pct": pytest.approx(4.0), "ms": 0.001}]}
    section = json.loads(json.dumps(diff_results(r, r).to_dict()))["sections"][0]
    assert section["roofline_step"] == [step, step]


def test_a_step_within_the_ceilings_reads_its_bare_percent_and_no_note():
    r = _result(COPY, CACHED)  # the in-cache kernel left out of the mean: the copy's 40% over 99.8%
    assert roofline_rows([r])[0] == ["% of peak (time-weighted)", "40.0%"] and _module_total(r) == "40.0%"
    assert step_marks_note(step_roofs([r])) == ""
    assert HEAD not in render_compare(_compare(r)) and HEAD not in render_diff(diff_results(r, r))
    step = json.loads(result_json(r))["extras"]["roofline"]["step"]
    assert step == {"pct": pytest.approx(40.0), "judged_share": pytest.approx(100 * 2.0 / 2.004)}


def test_compare_says_its_percent_is_held_against_ceilings_measured_under_load():
    """Synthetic: the same copy at 40 % of ceilings measured while other processes kept a core
    busy: compare's row says they may be low (its % may read high), as breakdown's warning does."""
    from dataclasses import replace

    r = _result(COPY)
    r.roofline = Roofline(replace(CEIL, load="other processes kept 1.0 of 2 cores busy"))
    row = "% of peak (time-weighted; ceilings measured under load: may read high)"
    assert roofline_rows([r])[0] == [row, "40.0%"]
    assert row in render_compare(_compare(r))
    assert roofline_rows([_result(COPY)])[0][0] == "% of peak (time-weighted)"


def test_breakdown_says_in_cache_kernels_may_be_above_a_bandwidth_ceiling_measured_under_load():
    """Synthetic: a 1.2 MB reduction at 300 GB/s, 300 % of a 100 GB/s ceiling, reads in cache
    (^). Measured under load, that ceiling may be low: a real transformer block's GELU kernel read
    ^105 % of 17.2 GB/s measured beside a busy core and 28 % of 55.2 measured later."""
    from dataclasses import replace

    warning = ("WARNING: 1 memory-bound kernel(s) above the bandwidth ceiling, marked in cache (^), were "
               "held against a ceiling measured under load: they may be above a low ceiling, not served "
               "from a cache (a quiet run's ceilings tell which)")
    r = _result(COPY, CACHED)
    assert "^300%" in render_breakdown(r, width=250) and warning not in render_breakdown(r, width=250)
    r.roofline = Roofline(replace(CEIL, load="other processes kept 1.0 of 2 cores busy"))
    assert warning in " ".join(render_breakdown(r, width=250).split())
    r.graphs[0].kernels = [COPY]  # nothing in cache: the load warning alone
    assert "in cache (^)" not in render_breakdown(r, width=250)
