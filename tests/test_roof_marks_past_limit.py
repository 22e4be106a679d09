"""A kernel past its limit is never read as too short to reach it: a launch of a few microseconds
above the DRAM ceiling is in cache (^), one above the compute ceiling is over a low ceiling (!),
in every table and view, so no ~ figure reads over 100%; a latency verdict taken on a kernel's
fastest iteration says so where its mean, the row's time, is not short; diff's % of peak row says
when a side's ceilings were measured under load. Synthetic results on hand-built ceilings
(100 GB/s, 1 TFLOP/s fp32), their kernels shaped like a 2-layer GPT-2's on the CPU."""

from __future__ import annotations

import re
from dataclasses import replace

from inductor_bench.core.ceilings import COMPUTE, LATENCY, MEMORY, Ceilings, kernel_roof
from inductor_bench.core.diff import diff_results
from inductor_bench.core.results import KernelStat
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.render.diff import render_diff
from inductor_bench.render.roofline import group_pct_cell, pct_cell
from inductor_bench.render.roofline_marks import bound_words

from .test_step_roof_marks import _result

CEIL = Ceilings("test device", gbps=100.0, tflops={"fp32": 1.0})
# 563,600 bytes in 4 us: 140.9 GB/s, 140.9% of the ceiling; 5.636 us at best, under a host
# launch's 10 us, and it took under 2 x (10 + 5.636): the latency rule alone would call it short
CAT = KernelStat("cpp_fused_cat_split_transpose_view_1", "cpp_pointwise", 1.0, 0.004, bytes=563_600.0,
                 samples_ms=[0.004])
# an embedding and LayerNorm: 209,000 bytes in 2 us, 104.5%
EMBED = KernelStat("cpp_fused_add_embedding_native_layer_norm_0", "cpp_reduction", 1.0, 0.002,
                   bytes=209_000.0, samples_ms=[0.002])
# 4 kB in 10 us: 0.4 GB/s, 0.4%; 0.04 us at best: latency-bound
SHORT = KernelStat("cpp_fused_add_3", "cpp_pointwise", 1.0, 0.010, bytes=4e3, samples_ms=[0.010])
# 2 MFLOP over 10 kB (200 FLOP/byte: compute-bound) in 1.5 us: 1.333 TFLOP/s, 133.3% of 1
SMALL_MM = KernelStat("cpp_fused_mm_4", "cpp_pointwise", 1.0, 0.0015, bytes=1e4, flops=2e6, compute="fp32",
                      samples_ms=[0.0015])


def test_a_short_launch_above_the_dram_ceiling_reads_in_cache_not_too_short():
    assert 100 * 563_600 / 4e-6 / 100e9 == 140.9
    roof = kernel_roof(CAT, CEIL, "cpu")
    assert (roof.bound, round(roof.pct, 1)) == (MEMORY, 140.9)
    assert bound_words(roof, CAT, "cpu") == "memory (in cache: above the DRAM ceiling)"
    r = _result(CAT, EMBED, SHORT)
    g = r.graphs[0]
    assert [pct_cell(r, g, k) for k in (CAT, EMBED, SHORT)] == ["^141%", "^104%", "~0%"]
    # a group of the two: the in-cache figure, time-weighted (140.9 x 4 + 104.5 x 2) / 6
    assert group_pct_cell(r, [(g, CAT, CAT.ms), (g, EMBED, EMBED.ms)]) == "^128.8%"
    # with the short kernel (10 us, the most time): both figures, each marked, the longer first
    assert group_pct_cell(r, [(g, k, k.ms) for k in (CAT, EMBED, SHORT)]) == "~0.4%, ^128.8%"


def test_a_short_launch_above_the_compute_ceiling_reads_over_a_low_ceiling():
    roof = kernel_roof(SMALL_MM, CEIL, "cpu")
    assert (roof.bound, round(roof.pct, 1)) == (COMPUTE, 133.3)
    r = _result(SMALL_MM)
    assert pct_cell(r, r.graphs[0], SMALL_MM) == "!133%"
    assert bound_words(roof, SMALL_MM, "cpu") == "compute (ceiling low: the roofline warning says why)"


def test_no_figure_marked_too_short_reads_over_100_percent_anywhere_in_the_breakdown():
    text = render_breakdown(_result(CAT, EMBED, SHORT, SMALL_MM), width=250)
    short = [float(x) for x in re.findall(r"~(\d+(?:\.\d+)?)%", text)]
    assert short and max(short) <= 100
    assert "^141%" in text and "!133%" in text and "latency (too short)" in text


def test_a_latency_verdict_on_the_fastest_iteration_says_its_mean_is_not_short():
    """Two iterations, one stalled by other work: a 27.002 ms mean, its fastest 4 us. The verdict
    is taken on the fastest (too short to reach a limit); the row shows the mean."""
    stalled = replace(SHORT, ms=27.002, samples_ms=[0.004, 54.0])
    roof = kernel_roof(stalled, CEIL, "cpu")
    assert roof.bound == LATENCY
    assert bound_words(roof, stalled, "cpu") == ("latency (short when undisturbed: fastest 4 µs a launch; "
                                                 "its mean is not)")
    assert bound_words(kernel_roof(SHORT, CEIL, "cpu"), SHORT, "cpu") == "latency (too short)"
    row = next(ln for ln in render_breakdown(_result(stalled), width=250).splitlines()
               if "cpp_fused_add_3" in ln and "latency" in ln)
    assert "latency (short when undisturbed: fastest 4 µs a launch; its mean is not)" in row


def test_diff_says_its_percent_is_held_against_ceilings_measured_under_load():
    """Either side's ceilings measured under load: the row's name says so, as compare's does."""
    copy = KernelStat("cpp_fused_copy_1", "cpp_pointwise", 1.0, 2.0, bytes=80e6)  # 40 GB/s: 40%
    loaded = _result(copy, ceilings=replace(CEIL, load="other processes kept 1.0 of 2 cores busy"))
    quiet = _result(copy)
    row = "% of peak (time-weighted; ceilings measured under load: may read high)"
    for base, head in ((loaded, quiet), (quiet, loaded)):
        assert row in render_diff(diff_results(base, head))
    assert "% of peak (time-weighted)  " in render_diff(diff_results(quiet, quiet))



def test_diff_against_shared_ceilings_says_load_only_where_a_loaded_figure_is_held_against(capsys):
    """Recorded runs (torch 2.13 CPU, 2026-12-07, a 2-layer MLP's training step): the base's
    ceilings measured beside 1.6 busy cores (4.9 GB/s, 0.025 TFLOP/s fp32), the quiet run's
    higher (36.2 GB/s, 0.103): both held against the quiet figures, no load wording; the loaded
    run against itself reads it."""
    from inductor_bench import cli
    from tests.conftest import FIXTURES

    def pct_row(base: str, head: str) -> str:
        try:
            cli.main(["diff", base, head])
        except SystemExit as e:
            assert not e.code
        return next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("% of peak"))

    loaded = str(FIXTURES / "results" / "cpu_mlp_train_roofline" / "breakdown.json")
    quiet = str(FIXTURES / "results" / "cpu_mlp_train_quiet" / "breakdown.json")
    assert pct_row(loaded, quiet).startswith("% of peak (time-weighted, shared ceilings)  ")
    assert pct_row(loaded, loaded).startswith(
        "% of peak (time-weighted; ceilings measured under load: may read high)  ")


def test_the_note_under_the_roofline_says_what_short_when_undisturbed_means_where_a_row_reads_it():
    """The stalled kernel of the test above (a 27.002 ms mean, its fastest 4 us) beside a plain
    short one: the note explains both verdicts; with the plain one alone, only its own."""
    stalled = replace(SHORT, name="cpp_fused_add_5", ms=27.002, samples_ms=[0.004, 54.0])
    explained = ("latency (too short): even at the ceilings one launch would take only a few microseconds, "
                 "so its % says how short it is, not how slow; the kernel tables mark it ~. "
                 "latency (short when undisturbed: fastest N µs a launch; its mean is not): the verdict holds "
                 "on its fastest iteration, a launch of N µs, but its mean launch, the row's ms, is too long "
                 "to be short: other work stalled some of its iterations, so the row's time is not the "
                 "kernel's own. In cache: ")
    text = render_breakdown(_result(stalled, SHORT))  # a file or a pipe: each paragraph on one line
    assert "latency (short when undisturbed: fastest 4 µs a launch; its mean is not)" in text
    assert explained in text
    plain = render_breakdown(_result(SHORT))
    assert "latency (too short)" in plain and "short when undisturbed" not in plain
    assert "the kernel tables mark it ~. In cache: " in plain
