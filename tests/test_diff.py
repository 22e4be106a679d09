"""diff.py, render/diff.py and the `diff` command on hand-built results."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from inductor_bench import cli
from inductor_bench.core.compare import CompareResult, ModeResult
from inductor_bench.core.diff import ADDED, FASTER, REMOVED, SLOWER, diff_results
from inductor_bench.core.errors import ResultError, UsageError
from inductor_bench.core.match import match_kernels, name_stem
from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
from inductor_bench.core.rundir import load_any
from inductor_bench.core.stats import TOO_FEW, WITHIN_NOISE
from inductor_bench.core.vocab import Outcome, StepSource, Verdict
from inductor_bench.render.diff import ORIGIN_CHARS, render_diff, verdict_line
from inductor_bench.render.doc import TextDoc, for_terminal

from .conftest import FIXTURES, torch_2_5

# Relative jitter of 7 per-iteration samples: mean and median 1.0, MAD 0.01 -> robust sigma 1.5%.
JITTER = [1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.0]


def samples(ms: float, n: int = len(JITTER)) -> list[float]:
    return [ms * j for j in JITTER[:n]]


def kernel(name: str, cat: str, ms: float, aten=(), n: int = len(JITTER)) -> KernelStat:
    s = samples(ms, n)
    return KernelStat(
        name=name, category=cat, calls=1, ms=statistics.fmean(s), samples_ms=s, aten_ops=list(aten)
    )


def graph(gid: str, kernels: list[KernelStat], overhead_ms: float = 0.2) -> GraphResult:
    n = min(len(k.samples_ms) for k in kernels)
    wall = [sum(k.samples_ms[i] for k in kernels) + overhead_ms for i in range(n)]
    cats: dict[str, float] = {}
    for k in kernels:
        cats[k.category] = cats.get(k.category, 0.0) + k.ms
    kms = sum(k.ms for k in kernels)
    return GraphResult(
        id=gid,
        role=gid.split("-", 1)[1],
        iterations=n,
        wall_ms=statistics.fmean(wall),
        wall_samples_ms=wall,
        busy_ms=kms,
        kernel_ms=kms,
        categories=cats,
        kernels=sorted(kernels, key=lambda k: -k.ms),
    )


def result(graphs: list[GraphResult], **kw) -> BreakdownResult:
    kw.setdefault("model", "mlp")
    kw.setdefault("device_name", "Test CPU (2 cores)")
    kw.setdefault("versions", {"torch": "2.13.0"})
    return BreakdownResult(graphs=graphs, iterations=graphs[0].iterations, **kw)


def fwd_kernels(gelu_ms: float = 1.0, **over) -> list[KernelStat]:
    ks = {
        "aten::addmm": kernel("aten::addmm", "extern_gemm", 2.0, ["aten.addmm"]),
        "cpp_fused_gelu_0": kernel("cpp_fused_gelu_0", "cpp_pointwise", gelu_ms, ["aten.gelu"]),
        "cpp_fused_native_layer_norm_1": kernel(
            "cpp_fused_native_layer_norm_1", "cpp_reduction", 0.5, ["aten.native_layer_norm"]
        ),
    }
    ks.update(over)
    return [k for k in ks.values() if k is not None]


def base_result() -> BreakdownResult:
    return result([graph("0-forward", fwd_kernels()), graph("0-backward", bwd_kernels())])


def bwd_kernels() -> list[KernelStat]:
    return [
        kernel("aten::mm", "extern_gemm", 3.0, ["aten.mm"]),
        kernel("cpp_fused_gelu_backward_0", "cpp_pointwise", 1.5, ["aten.gelu_backward"]),
    ]


# ---- diff_results ---------------------------------------------------------------------------


def test_identical_results_are_within_noise():
    d = diff_results(base_result(), base_result())
    assert d.status() == Outcome.NO_CHANGE
    assert d.regressions() == []
    (s,) = d.sections
    assert s.step_source == StepSource.HARNESS
    assert s.step.verdict == WITHIN_NOISE and s.step.delta_ms == 0.0
    assert {k.status for k in s.kernels} == {WITHIN_NOISE}
    assert len(s.kernels) == 5
    assert all(k.matched_by == "name" for k in s.kernels)
    assert s.busy_pct == pytest.approx((s.busy_pct[0], s.busy_pct[0]))


def test_a_slower_kernel_is_a_regression_and_is_named():
    head = result(
        [graph("0-forward", fwd_kernels(gelu_ms=3.0)), graph("0-backward", bwd_kernels())]
    )
    d = diff_results(base_result(), head)
    assert d.status() == Outcome.REGRESSION
    (s,) = d.sections
    # step: 3.5 + 0.2 + 4.5 + 0.2 = 8.4 ms -> 10.4 ms
    assert s.step.base.ms == pytest.approx(8.4)
    assert s.step.head.ms == pytest.approx(10.4)
    assert s.step.rel_pct == pytest.approx(100 * 2.0 / 8.4)
    assert s.step.slower
    (slow,) = s.kernels_with(SLOWER)
    assert (slow.name, slow.graph, slow.delta_ms) == (
        "cpp_fused_gelu_0",
        "0-forward",
        pytest.approx(2.0),
    )
    assert [k.name for k in s.responsible()] == ["cpp_fused_gelu_0"]
    pw = next(c for c in s.categories if c.category == "cpp_pointwise")
    assert pw.change.slower and pw.change.delta_ms == pytest.approx(2.0)
    gemm = next(c for c in s.categories if c.category == "extern_gemm")
    assert gemm.change.verdict == WITHIN_NOISE
    assert d.regressions(20.0) == [s]  # +23.8% > 20%
    assert d.regressions(25.0) == []


def test_a_verdict_on_a_side_measured_on_a_slow_machine_says_so():
    """Synthetic: one side's forward kept a window taken while the machine ran at 55% of its
    speed. Where that side is the base, head's regression stands (a slowed base can only have
    hidden it), with the caveat in its line and the side in the JSON. Where it is the head, which
    reads slower, the regression stands too, with the same caveat: a kernel's time changed and
    nothing shows its code the same, so the change may be the code's (a diff whose code is one on
    both sides gets no verdict instead: test_stalled_start)."""
    base = base_result()
    base.graphs[0].window, base.graphs[0].window_speed = 0, [0.55]
    d = diff_results(base, result([graph("0-forward", fwd_kernels(gelu_ms=3.0)), graph("0-backward", bwd_kernels())]))
    assert d.status() == Outcome.REGRESSION and d.disturbed == ["base"]
    line = verdict_line(d, TextDoc())
    assert line.startswith("REGRESSION: ")
    assert line.endswith(" - but base was measured on a busy or slow machine (warnings below): "
                         "measure again, or time both sides in one process (compare)")
    assert d.to_dict()["disturbed"] == ["base"]
    head = result([graph("0-forward", fwd_kernels(gelu_ms=3.0)), graph("0-backward", bwd_kernels())])
    head.graphs[0].window, head.graphs[0].window_speed = 0, [0.55]
    d = diff_results(base_result(), head)
    assert d.status() == Outcome.REGRESSION and d.disturbed == ["head"]
    assert verdict_line(d, TextDoc()).endswith(" - but head was measured on a busy or slow machine (warnings "
                                               "below): measure again, or time both sides in one process (compare)")
    assert d.to_dict()["disturbed"] == ["head"]
    quiet = diff_results(base_result(), base_result())
    assert quiet.disturbed == [] and "busy or slow" not in verdict_line(quiet, TextDoc())


def test_faster_head_is_not_a_regression():
    head = result(
        [graph("0-forward", fwd_kernels(gelu_ms=0.1)), graph("0-backward", bwd_kernels())]
    )
    d = diff_results(base_result(), head, min_rel=0.05)  # 8.4 -> 7.5 ms, -10.7%
    assert d.status() == Outcome.FASTER
    assert d.regressions() == []
    assert [k.name for k in d.sections[0].kernels_with(FASTER)] == ["cpp_fused_gelu_0"]


def test_the_minimum_change_depends_on_the_device():
    # +7.1% (8.4 -> 9.0 ms): above the CUDA floor (5%), below the CPU floor (10%)
    def with_gelu(ms: float, device: str) -> BreakdownResult:
        r = result(
            [graph("0-forward", fwd_kernels(gelu_ms=ms)), graph("0-backward", bwd_kernels())]
        )
        r.device = device
        return r

    cpu = diff_results(with_gelu(1.0, "cpu"), with_gelu(1.6, "cpu"))
    assert (cpu.min_rel, cpu.status()) == (0.10, Outcome.NO_CHANGE)
    cuda = diff_results(with_gelu(1.0, "cuda"), with_gelu(1.6, "cuda"))
    assert (cuda.min_rel, cuda.status()) == (0.05, Outcome.REGRESSION)
    forced = diff_results(with_gelu(1.0, "cpu"), with_gelu(1.6, "cpu"), min_rel=0.05)
    assert forced.status() == Outcome.REGRESSION


def test_renumbered_and_renamed_kernels_are_matched_by_origin_then_stem():
    head_fwd = fwd_kernels(
        cpp_fused_gelu_0=None,
        cpp_fused_native_layer_norm_1=None,
        # the counter moved and the fused name changed; same ATen origin
        cpp_fused_gelu_view_2=kernel("cpp_fused_gelu_view_2", "cpp_pointwise", 1.0, ["aten.gelu"]),
        # no origin recorded: matched by the name without its counter
        cpp_fused_native_layer_norm_5=kernel(
            "cpp_fused_native_layer_norm_5", "cpp_reduction", 0.5, []
        ),
    )
    head = result([graph("0-forward", head_fwd), graph("0-backward", bwd_kernels())])
    s = diff_results(base_result(), head).sections[0]
    by_name = {k.name: k for k in s.kernels}
    gelu = by_name["cpp_fused_gelu_view_2"]
    assert (gelu.base_name, gelu.matched_by, gelu.status) == (
        "cpp_fused_gelu_0",
        "origin",
        WITHIN_NOISE,
    )
    ln = by_name["cpp_fused_native_layer_norm_5"]
    assert (ln.base_name, ln.matched_by) == ("cpp_fused_native_layer_norm_1", "name stem")
    assert s.kernels_with(ADDED, REMOVED) == []


def test_added_and_removed_kernels():
    head_fwd = fwd_kernels(
        cpp_fused_native_layer_norm_1=None,
        cpp_fused_mul_sin_3=kernel(
            "cpp_fused_mul_sin_3", "cpp_pointwise", 0.7, ["aten.sin", "aten.mul"]
        ),
    )
    head = result([graph("0-forward", head_fwd), graph("0-backward", bwd_kernels())])
    s = diff_results(base_result(), head).sections[0]
    (added,) = s.kernels_with(ADDED)
    (removed,) = s.kernels_with(REMOVED)
    assert (added.name, added.base_ms, added.head_ms) == (
        "cpp_fused_mul_sin_3",
        0.0,
        pytest.approx(0.7),
    )
    assert (removed.name, removed.base_ms, removed.head_ms) == (
        "cpp_fused_native_layer_norm_1",
        pytest.approx(0.5),
        0.0,
    )
    assert [k.name for k in s.responsible()] == ["cpp_fused_mul_sin_3"]
    # the chart's tooltips say the side a kernel is missing from as the table does: "-"
    page = render_diff(diff_results(base_result(), head), "html")
    assert "C++ pointwise · - -&gt; 0.7000 ms" in page and "0.000 -&gt; 0.7000" not in page
    assert "-&gt; - ms" in page  # the removed one


def test_equal_keys_pair_in_program_order():
    base = [
        graph(
            "0-forward",
            [
                kernel("cpp_fused_add_3", "cpp_pointwise", 1.0, ["aten.add"]),
                kernel("cpp_fused_add_1", "cpp_pointwise", 2.0, ["aten.add"]),
            ],
        )
    ]
    head = [
        graph(
            "0-forward",
            [
                kernel("cpp_fused_add_7", "cpp_pointwise", 2.0, ["aten.add"]),
                kernel("cpp_fused_add_4", "cpp_pointwise", 1.0, ["aten.add"]),
            ],
        )
    ]
    pairs, removed, added = match_kernels(base, head)
    assert [(b.kernel.name, h.kernel.name, how) for b, h, how in pairs] == [
        ("cpp_fused_add_1", "cpp_fused_add_4", "origin"),
        ("cpp_fused_add_3", "cpp_fused_add_7", "origin"),
    ]
    assert removed == [] and added == []
    assert name_stem("triton_poi_fused_add_12") == "triton_poi_fused_add"
    assert name_stem("aten::addmm") == "aten::addmm"


def test_too_few_samples_is_inconclusive():
    few = result([graph("0-forward", [kernel("k_0", "cpp_pointwise", 1.0, n=3)])])
    more = result([graph("0-forward", [kernel("k_0", "cpp_pointwise", 9.0, n=3)])])
    d = diff_results(few, more)
    assert d.sections[0].step.verdict == TOO_FEW
    assert d.status() == Outcome.INCONCLUSIVE
    assert d.regressions() == []
    assert "INCONCLUSIVE" in verdict_line(d, TextDoc())


def test_different_devices_are_refused_unless_allowed():
    cuda = base_result()
    cuda.device = "cuda"
    with pytest.raises(UsageError, match="base ran on cpu, head on cuda"):
        diff_results(base_result(), cuda)
    d = diff_results(base_result(), cuda, allow_mismatch=True)
    assert "base ran on cpu, head on cuda" in d.warnings


def test_train_vs_inference_is_refused():
    inf = base_result()
    inf.train = True
    with pytest.raises(UsageError, match="inference, head is training"):
        diff_results(base_result(), inf)


def script_run(backward_calls: float | None) -> BreakdownResult:
    """A script's run (saved with ``train`` false: a script takes no --train), its backward
    graph called ``backward_calls`` times."""
    fwd, bwd = graph("0-forward", fwd_kernels()), graph("0-backward", bwd_kernels())
    fwd.calls, bwd.calls = (8, backward_calls) if backward_calls is not None else (None, None)
    return result([fwd, bwd], script=True)


@pytest.mark.parametrize("calls", [8, None])  # None: not counted, so maybe called
def test_a_script_that_ran_a_backward_graph_is_training(calls):
    inference = result([graph("0-inference", fwd_kernels())])
    with pytest.raises(UsageError, match="base is inference, head is training"):
        diff_results(inference, script_run(calls))
    trained = base_result()
    trained.train = True
    assert diff_results(trained, script_run(calls)).sections  # training against training


def test_a_script_whose_backward_graph_was_never_called_is_inference():
    """Dynamo compiles a dynamic-shape graph's backward with its forward, called or not."""
    inference = result([graph("0-inference", fwd_kernels())])
    assert diff_results(inference, script_run(0), allow_mismatch=False).sections
    trained = base_result()
    trained.train = True
    with pytest.raises(UsageError, match="base is training .* head is inference"):
        diff_results(trained, script_run(0))


def test_different_model_names_are_a_warning_only():
    other = base_result()
    other.model = "mlp_slow"
    d = diff_results(base_result(), other)
    assert d.warnings == ["different models: base 'mlp', head 'mlp_slow'"]


def test_kernels_of_one_name_in_other_categories_are_a_note():
    """A run saved before custom ops had a category of their own, against one saved after: the
    same op is other ATen on one side and a custom op on the other, which the category rows
    cannot show."""
    op = "ibtest::scaled_tanh"
    base = result([graph("0-inference", [kernel(op, "extern_other", 1.0), kernel("aten::mm", "extern_gemm", 2.0)])])
    head = result([graph("0-inference", [kernel(op, "extern_custom", 1.0), kernel("aten::mm", "extern_gemm", 2.0)])])
    d = diff_results(base, head)
    assert d.warnings == [
        "1 kernel(s) of the same name are in other categories on the two sides (e.g. "
        "ibtest::scaled_tanh: other ATen (extern) in base, custom op (extern) in head), so their "
        "category rows hold other kernels; `report RUN --reanalyze` classifies a run saved by an "
        "earlier analysis again"]
    assert diff_results(head, head).warnings == []


def test_breakdown_against_compare_is_refused():
    with pytest.raises(UsageError, match="cannot diff a breakdown result against a compare result"):
        diff_results(base_result(), CompareResult(model="mlp"))


# ---- compare results ------------------------------------------------------------------------


def compare_result(default_ms: float, autotune: ModeResult | None = None) -> CompareResult:
    modes = [
        ModeResult(mode="eager", compile_s=0.0, step_samples_ms=samples(20.0)),
        ModeResult(
            mode="default",
            compile_s=12.0,
            step_samples_ms=samples(default_ms),
            peak_memory_bytes=2**30,
            breakdown=base_result(),
        ),
        ModeResult(mode="reduce-overhead", status="skipped", reason="CUDA graphs need CUDA"),
    ]
    if autotune is not None:
        modes.append(autotune)
    return CompareResult(model="mlp", device_name="Test CPU (2 cores)", modes=modes)


def test_compare_results_diff_mode_by_mode_on_the_model_call():
    head = compare_result(15.0, ModeResult(mode="max-autotune", step_samples_ms=samples(9.0)))
    d = diff_results(compare_result(10.0), head)
    assert d.kind == "compare"
    assert [s.mode for s in d.sections] == ["eager", "default"]
    eager, default = d.sections
    assert eager.step.verdict == WITHIN_NOISE and eager.kernels == []
    assert default.step_source == StepSource.MODEL
    assert default.step.base.ms == pytest.approx(10.0) and default.step.head.ms == pytest.approx(15.0)
    assert default.compile_s == (12.0, 12.0)
    assert default.kernels and all(k.status == WITHIN_NOISE for k in default.kernels)
    assert d.skipped == [
        "reduce-overhead: both skipped (CUDA graphs need CUDA)",
        "max-autotune: only in head",
    ]
    assert d.regressions(40.0) == [default]
    assert d.regressions(60.0) == []
    # a compare's figure is the step itself: the headline and the row call it so
    text = render_diff(d)
    assert "default: step time 10.000 -> 15.000 ms (+50.0%" in text.splitlines()[0]
    assert "all graphs" not in text
    assert any(r.startswith("step time, ms (model call)") for r in text.splitlines())


def test_a_disturbed_column_of_a_compare_is_named_in_the_diffs_warning():
    """Synthetic: head's default column kept a window taken at 55% of the machine's speed; its
    warning names the side, the column and the graph, as compare's own report does."""
    slow = base_result()
    slow.graphs[0].window, slow.graphs[0].window_speed = 0, [0.55]
    head = compare_result(10.0)
    head.modes[1].breakdown = slow
    d = diff_results(compare_result(10.0), head)
    (alone,) = diff_results(base_result(), slow).warnings  # the same breakdown diffed alone
    assert alone.startswith("head: 0-forward was measured while ")
    assert d.warnings == ["head: default: " + alone.removeprefix("head: ")]
    assert d.disturbed == ["head"]


def test_compares_with_no_column_in_common_are_not_comparable(tmp_path, capsys):
    """A compare of one model's modes against a compare of two model files: their columns are
    named apart (``default`` against ``mlp:default``), so nothing can be judged, and the gate
    fails rather than passing on no verdict."""
    base = compare_result(10.0)
    head = CompareResult(model="mlp vs mlp_slow25", device_name="Test CPU (2 cores)", modes=[
        ModeResult(mode="default", model="mlp", step_samples_ms=samples(10.0)),
        ModeResult(mode="default", model="mlp_slow25", step_samples_ms=samples(12.5))])
    d = diff_results(base, head)
    assert d.sections == [] and d.unmeasured == []
    assert d.status() == Outcome.NOT_COMPARABLE and d.regressions(0.0) == []
    why = ("no column ran in both runs (base has eager, default, reduce-overhead (skipped); head "
           "has mlp:default, mlp_slow25:default)")
    assert d.nothing_compared() == why
    assert d.to_dict()["nothing_compared"] == why
    assert d.to_dict()["columns"] == {"base": ["eager", "default", "reduce-overhead (skipped)"],
                                      "head": ["mlp:default", "mlp_slow25:default"]}
    assert verdict_line(d, TextDoc(), 10.0) == (
        f"NOT COMPARABLE, so the 10% gate fails: nothing could be compared: {why} - no verdict")
    b, h = write(tmp_path / "base.json", base), write(tmp_path / "head.json", head)
    assert run_cli([str(b), str(h)]) == 0  # no gate: the report is the answer
    assert capsys.readouterr().out.startswith(f"NOT COMPARABLE: nothing could be compared: {why}")
    assert run_cli([str(b), str(h), "--fail-on-regression", "10"]) == 5
    assert capsys.readouterr().err == f"inductor-bench: error: not comparable, no verdict: {why}\n"
    assert diff_results(base, base).nothing_compared() is None


# ---- rendering ------------------------------------------------------------------------------


def slow_diff():
    head = result(
        [graph("0-forward", fwd_kernels(gelu_ms=3.0)), graph("0-backward", bwd_kernels())]
    )
    return diff_results(base_result(), head, base_label="main.json", head_label="branch.json")


def step_interval(r: BreakdownResult) -> tuple[float, float]:
    """The step through the graphs: the graphs' means added, their t intervals' half-widths
    (97.5%: t quantile 0.9875 over n - 1 degrees) added in quadrature, written out here."""
    import math

    from inductor_bench.core.summaries import t_quantile

    ms, h2 = 0.0, 0.0
    for g in r.graphs:
        xs = g.wall_samples_ms
        ms += statistics.fmean(xs)
        h2 += (t_quantile(0.9875, len(xs) - 1) * statistics.stdev(xs) / math.sqrt(len(xs))) ** 2
    return ms - math.sqrt(h2), ms + math.sqrt(h2)


GATED_ROW = "on the graphs' own calls, not the whole step"  # what a breakdowns' gate judges


def test_verdict_line_names_the_regression_and_the_kernel():
    d = slow_diff()
    line = verdict_line(d, TextDoc(), threshold_pct=10)
    assert line.startswith(f"REGRESSION above the 10% gate {GATED_ROW}: ")
    head = result([graph("0-forward", fwd_kernels(gelu_ms=3.0)), graph("0-backward", bwd_kernels())])
    (b_lo, b_hi), (h_lo, h_hi) = step_interval(base_result()), step_interval(head)
    interval = f"[{100 * (h_lo / b_hi - 1):+.1f}%..{100 * (h_hi / b_lo - 1):+.1f}%]"
    assert f"default: all graphs 8.400 -> 10.400 ms (+23.8% {interval}, significant)" in line
    assert "kernels responsible: cpp_fused_gelu_0 +2.000 ms (slower)" in line
    assert f"(below the 30% gate {GATED_ROW})" in verdict_line(slow_diff(), TextDoc(), threshold_pct=30)


def test_text_report_lists_tables_and_counts():
    text = render_diff(slow_diff())
    assert text.splitlines()[0].startswith("REGRESSION: default: all graphs 8.400 -> 10.400 ms")
    assert "Slower kernels, significant (1)" in text
    assert "4 matched kernel(s) and extern op(s) within noise" in text
    assert "C++ pointwise" in text


def test_markdown_starts_with_a_bold_verdict_and_has_github_tables():
    md = render_diff(slow_diff(), "markdown", threshold_pct=10)
    first = md.splitlines()[0]
    assert first.startswith(f"**REGRESSION above the 10% gate {GATED_ROW}**: ")
    assert "`cpp_fused_gelu_0`" in first
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in md.splitlines() if line.startswith("| 0-forward")]
    assert ["0-forward", "`cpp_fused_gelu_0`", "C++ pointwise", "1.000", "3.000", "+2.000"] in [r[:6] for r in rows]
    assert "|     1.000 |     3.000 |" in md  # numbers right-aligned
    assert "<details><summary>Per category</summary>" in md


def test_diff_to_dict_is_json():
    d = json.loads(json.dumps(slow_diff().to_dict()))
    assert d["status"] == Outcome.REGRESSION
    assert d["sections"][0]["step"]["verdict"] == "significant"
    assert d["sections"][0]["kernels"][0]["name"] == "cpp_fused_gelu_0"


# ---- loading and the CLI --------------------------------------------------------------------


def write(path: Path, r) -> Path:
    path.write_text(r.to_json())
    return path


def run_cli(args: list[str]) -> int:
    try:
        cli.main(["diff", *args])
    except SystemExit as e:
        return int(e.code or 0)
    return 0


@pytest.fixture
def files(tmp_path):
    slow = result(
        [graph("0-forward", fwd_kernels(gelu_ms=3.0)), graph("0-backward", bwd_kernels())]
    )
    run_dir = tmp_path / "run-base"
    run_dir.mkdir()
    write(run_dir / "breakdown.json", base_result())
    return {
        "base": str(write(tmp_path / "base.json", base_result())),
        "base_dir": str(run_dir),
        "same": str(write(tmp_path / "same.json", base_result())),
        "slow": str(write(tmp_path / "slow.json", slow)),
        "compare": str(write(tmp_path / "cmp.json", compare_result(10.0))),
    }


def test_load_any_reads_files_and_run_directories(files, tmp_path):
    assert isinstance(load_any(files["base_dir"]), BreakdownResult)
    assert isinstance(load_any(files["compare"]), CompareResult)
    (tmp_path / "junk.json").write_text('{"schema": "something-else"}')
    with pytest.raises(ResultError, match="not an inductor-bench breakdown or compare result"):
        load_any(tmp_path / "junk.json")
    with pytest.raises(ResultError, match="no compare.json or breakdown.json"):
        load_any(tmp_path)


def test_cli_same_results_exit_0(files, capsys):
    assert run_cli([files["base_dir"], files["same"], "--fail-on-regression", "5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("NO SIGNIFICANT CHANGE: default: all graphs 8.400 -> 8.400 ms")


def test_cli_regression_exits_1_above_the_gate_only(files, capsys):
    assert run_cli([files["base"], files["slow"], "--fail-on-regression", "10"]) == 1
    captured = capsys.readouterr()
    assert "cpp_fused_gelu_0" in captured.out
    assert captured.err == "inductor-bench: error: significant regression above 10%: default: all graphs 8.400 -> 10.400 ms: +23.8% of the graphs' own calls, not of the whole step (its time outside the graphs is not in it)\n"
    assert run_cli([files["base"], files["slow"], "--fail-on-regression", "30"]) == 0
    assert run_cli([files["base"], files["slow"]]) == 0  # no gate asked for


def test_cli_markdown_and_json(files, capsys, tmp_path):
    assert run_cli([files["base"], files["slow"], "--format", "markdown"]) == 0
    assert capsys.readouterr().out.startswith("**REGRESSION**: ")
    assert run_cli([files["base"], files["slow"], "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == Outcome.REGRESSION
    dest = tmp_path / "d.json"
    assert run_cli([files["base"], files["slow"], "--json", str(dest)]) == 0
    assert json.loads(dest.read_text())["kind"] == "breakdown"


def test_cli_bad_input_exits_2(files, capsys, tmp_path):
    assert run_cli([files["base"], str(tmp_path / "missing.json")]) == 2
    assert "HEAD" in capsys.readouterr().err
    assert run_cli([files["base"], files["compare"]]) == 2
    err = capsys.readouterr().err
    assert err.startswith("inductor-bench: error: cannot diff a breakdown result")
    assert len(err.strip().splitlines()) == 1


def test_the_analysis_side_imports_without_torch():
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch' or name.startswith('torch.'):\n"
        "            raise ImportError('torch is hidden')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import inductor_bench.core.stats, inductor_bench.core.diff, inductor_bench.core.compare\n"
        "import inductor_bench.render.diff, inductor_bench.render.compare\n"
        "assert 'torch' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ---- graphs measured on one side only -------------------------------------------------------

RESULTS = Path(__file__).resolve().parent / "fixtures" / "results"
RECORDED = RESULTS / "cpu_mlp_train_autotune" / "breakdown.json"
KILLED = "profiling worker was killed by SIGKILL (out of memory? the OOM killer sends SIGKILL)"


def recorded() -> dict:
    return json.loads(RECORDED.read_text())


def interrupted_run() -> dict:
    """The recorded run as Ctrl-C during the backward graph's profile leaves it
    (runner/pipeline.py): the graph never appended, status interrupted, "interrupted" noted."""
    d = recorded()
    d["graphs"] = [g for g in d["graphs"] if g["id"] != "0-backward"]
    d["status"], d["errors"] = "interrupted", ["interrupted"]
    return d


def partial_run(status: str = "failed", error: str = KILLED) -> dict:
    """The recorded run with its backward graph lost as a dead profiling worker loses it: kept,
    with the status and the reason, the run partial."""
    d = recorded()
    bwd = next(g for g in d["graphs"] if g["id"] == "0-backward")
    bwd.update(status=status, error=error, kernels=[], wall_samples_ms=[], wall_ms=0.0, categories={})
    d["status"], d["errors"] = "partial", [f"graph 0-backward: {error}"]
    return d


def save(path: Path, d: dict) -> str:
    path.write_text(json.dumps(d))
    return str(path)


def forward_kernels() -> list[str]:
    return sorted(k["name"] for g in recorded()["graphs"] if g["id"] == "0-forward" for k in g["kernels"])


@pytest.mark.parametrize("head_lacks", [True, False], ids=["head-interrupted", "base-interrupted"])
def test_an_interrupted_run_gets_no_verdict_against_a_complete_one(head_lacks):
    full, cut = BreakdownResult.from_dict(recorded()), BreakdownResult.from_dict(interrupted_run())
    d = diff_results(*((full, cut) if head_lacks else (cut, full)))
    side = "head" if head_lacks else "base"
    assert d.status() == Outcome.NOT_COMPARABLE
    assert d.regressions(0.0) == []
    (s,) = d.sections
    assert [u.describe() for u in d.unmeasured] == [
        f"default: graph 0-backward not measured in {side} (missing from the interrupted run)"
    ]
    assert not (s.step.slower or s.step.faster) and s.step.verdict == Outcome.NOT_COMPARABLE
    assert s.kernel_time.verdict == Outcome.NOT_COMPARABLE
    assert {c.change.verdict for c in s.categories} == {Outcome.NOT_COMPARABLE}
    # the graph measured on both sides is still diffed kernel by kernel; nothing was "removed"
    assert sorted(k.name for k in s.kernels) == forward_kernels()
    assert {(k.graph, k.status) for k in s.kernels} == {("0-forward", WITHIN_NOISE)}
    assert s.graphs_added == s.graphs_removed == []
    assert json.loads(json.dumps(d.to_dict()))["not_comparable"] == [
        {"section": "default", "graph": "0-backward", "side": side, "why": "missing from the interrupted run"}
    ]


def test_a_run_that_finished_without_a_graph_lost_none():
    """A finished run whose code compiled fewer graphs: the graph was removed, not unmeasured."""
    fewer = interrupted_run()
    fewer["status"], fewer["errors"] = "ok", []
    d = diff_results(BreakdownResult.from_dict(recorded()), BreakdownResult.from_dict(fewer))
    assert d.unmeasured == [] and d.sections[0].graphs_removed == ["0-backward"]
    assert d.status() in (Outcome.FASTER, Outcome.NO_CHANGE)  # a step of one graph against two


@pytest.mark.parametrize(
    "head, why",
    [
        (interrupted_run, "missing from the interrupted run"),
        (partial_run, f"failed: {KILLED}"),
        (lambda: partial_run("timeout", "graph timed out after 600 s"), "timeout: graph timed out after 600 s"),
    ],
    ids=["interrupted", "failed", "timeout"],
)
def test_cli_lists_the_graph_and_fails_the_gate_with_exit_5(head, why, tmp_path, capsys):
    base, cut = str(RECORDED), save(tmp_path / "cut.json", head())
    line = f"default: graph 0-backward not measured in head ({why})"
    assert run_cli([base, cut]) == 0  # no gate asked for: a report, no verdict
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"NOT COMPARABLE: {line} - no verdict without them"
    assert "FASTER" not in out and "SLOWER" not in out and f"not comparable: {line}" in out
    step_row = next(r for r in out.splitlines() if r.startswith("all graphs, ms (their harness calls)"))
    assert step_row.split()[-3:] == ["-", "not", "comparable"]
    for argv, gate_side in (([base, cut], "head"), ([cut, base], "base")):
        assert run_cli([*argv, "--fail-on-regression", "10"]) == 5
        err = capsys.readouterr().err
        assert err == (
            "inductor-bench: error: not comparable, no verdict: "
            f"default: graph 0-backward not measured in {gate_side} ({why})\n"
        )


def test_two_failed_runs_fail_the_gate_not_pass_it(tmp_path, capsys):
    """Two runs whose model failed before any graph (the head broke it, and the base as well)
    passed the gate, exit 0: no graph on either side was no graph unmeasured."""
    failed = recorded()
    failed["graphs"], failed["status"] = [], "failed"
    failed["errors"] = ["make_workload() raised ValueError: no weights here\nTraceback ..."]
    base, head = save(tmp_path / "base.json", failed), save(tmp_path / "head.json", failed)
    assert run_cli([base, head, "--fail-on-regression", "10"]) == 5
    why = "make_workload() raised ValueError: no weights here"
    assert capsys.readouterr().err == (
        f"inductor-bench: error: not comparable, no verdict: default: the model's graphs not measured in base "
        f"({why}); default: the model's graphs not measured in head ({why})\n")


def test_markdown_verdict_says_the_gate_fails(tmp_path, capsys):
    cut = save(tmp_path / "cut.json", interrupted_run())
    assert run_cli([str(RECORDED), cut, "--format", "markdown", "--fail-on-regression", "10"]) == 5
    assert capsys.readouterr().out.splitlines()[0] == (
        "**NOT COMPARABLE, so the 10% gate fails**: default: graph 0-backward not measured in head "
        "(missing from the interrupted run) - no verdict without them"
    )


def test_a_compare_whose_column_failed_mid_profile_is_not_comparable(tmp_path, capsys):
    """Two compare results; in head, default's profiling lost the backward graph, so the mode
    failed (runner/compare.py) with its partial breakdown; eager was timed on both sides."""
    cmp = json.loads((RESULTS / "cpu_mlp_compare" / "compare.json").read_text())
    base = save(tmp_path / "base.json", cmp)
    default = next(m for m in cmp["modes"] if m["mode"] == "default")
    default.update(status="failed", reason=f"graph 0-backward: {KILLED}", breakdown=partial_run())
    head = save(tmp_path / "head.json", cmp)
    d = diff_results(load_any(base), load_any(head))
    assert d.status() == Outcome.NOT_COMPARABLE and d.regressions(0.0) == []
    assert [s.mode for s in d.sections] == ["eager", "max-autotune"]
    line = f"default: graph 0-backward not measured in head (failed: {KILLED})"
    assert [u.describe() for u in d.unmeasured] == [line]
    assert run_cli([base, head]) == 0
    assert f"not comparable: {line}" in capsys.readouterr().out
    assert run_cli([base, head, "--fail-on-regression", "10"]) == 5
    assert capsys.readouterr().err == f"inductor-bench: error: not comparable, no verdict: {line}\n"


def test_a_compare_interrupted_before_a_column_is_not_comparable(tmp_path):
    cmp = json.loads((RESULTS / "cpu_mlp_compare" / "compare.json").read_text())
    base = load_any(save(tmp_path / "base.json", cmp))
    cmp["modes"] = [m for m in cmp["modes"] if m["mode"] != "max-autotune"]
    cmp["errors"] = ["interrupted"]
    d = diff_results(base, load_any(save(tmp_path / "head.json", cmp)))
    assert [u.describe() for u in d.unmeasured] == ["max-autotune: the step not measured in head (not run)"]
    assert d.status() == Outcome.NOT_COMPARABLE
    cmp["errors"] = []  # finished without it: it was not asked for
    assert diff_results(base, load_any(save(tmp_path / "other.json", cmp))).unmeasured == []


# ---- end to end: the merge gate on two git revisions (real compiles on CPU) -----------------

ROOT = Path(__file__).resolve().parent.parent
GATE = ROOT / "scripts" / "merge_gate.sh"
# The gate's verdicts come from compare's interleaved step times; its breakdowns' windows are
# not what these tests judge: one profiling process each.
ONE_PROCESS_TRAIN = "--train --processes 1"


def _git(repo: Path, *args: str) -> str:
    cmd = ["git", "-C", str(repo), "-c", "user.email=ci@example.com", "-c", "user.name=ci"]
    return subprocess.run([*cmd, *args], check=True, capture_output=True, text=True).stdout.strip()


def _gate(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "INDUCTOR_BENCH_PYTHON": sys.executable}
    return subprocess.run(
        ["bash", str(GATE), *args],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=900,
    )


@pytest.fixture(scope="session")
def gate_repo(tmp_path_factory):
    """A repository whose models/mlp.py becomes models/mlp_slow.py in the second commit."""
    if shutil.which("git") is None:
        pytest.skip("the merge gate needs git")
    repo = tmp_path_factory.mktemp("gate") / "repo"
    (repo / "models").mkdir(parents=True)
    _git(repo, "init", "-q")
    shutil.copy(ROOT / "models" / "mlp.py", repo / "models" / "mlp.py")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "mlp")
    base = _git(repo, "rev-parse", "HEAD")
    shutil.copy(ROOT / "models" / "mlp_slow.py", repo / "models" / "mlp.py")
    _git(repo, "commit", "-qam", "a slower mlp")
    return repo, base, _git(repo, "rev-parse", "HEAD")


@pytest.fixture(scope="session")
def gate_slow(gate_repo):
    repo, base, head = gate_repo
    out = repo.parent / "out"
    return _gate("-p", "10", "-a", ONE_PROCESS_TRAIN, "-o", str(out), "models/mlp.py", base, head, cwd=repo), out


@pytest.mark.slow
@pytest.mark.e2e
def test_a_head_that_torch_cannot_compile_gets_no_verdict(gate_slow):
    """Torch 2.5.1's Inductor fails on mlp_slow.py's training step on the CPU (softmax then
    cumsum: ``AssertionError: buf6`` in its code generation, as a plain torch.compile does)."""
    if not torch_2_5():
        pytest.skip("this torch compiles the slower revision")
    proc, _ = gate_slow
    assert proc.returncode == 5, proc.stderr[-3000:]
    assert ("inductor-bench: error: not comparable, no verdict: head:default: graph 0-backward not measured "
            "in head (missing from the partial run)") in proc.stderr.splitlines()


@pytest.mark.slow
@pytest.mark.e2e
def test_merge_gate_fails_on_the_slower_revision_and_names_kernels(gate_slow):
    if torch_2_5():
        pytest.skip("torch 2.5.1 cannot compile the slower revision's training step")
    proc, out = gate_slow
    assert proc.returncode == 1, proc.stderr[-3000:]
    first = proc.stdout.splitlines()[0]
    assert first.startswith("**REGRESSION above the 10% gate**: head against base, default: "), first
    assert first.endswith("(significant, slower)")
    # the kernel-by-kernel diff of the two breakdowns follows
    assert "kernels responsible: `" in proc.stdout
    assert "**Added kernels" in proc.stdout and "cumsum" in proc.stdout  # the extra op chain
    assert "significant step-time regression above 10%: head:default: step time " in proc.stderr
    assert "of the step (the real model call, the median of the interleaved rounds' ratios)" in proc.stderr
    assert (out / "gate.md").read_text() == proc.stdout
    c = load_any(out / "compare")
    assert isinstance(c, CompareResult) and c.models == ["base", "head"]
    assert all(m.paired_ms for m in c.modes)  # timed interleaved
    assert isinstance(load_any(out / "compare" / "base-default"), BreakdownResult)
    assert isinstance(load_any(out / "compare" / "head-default"), BreakdownResult)


@pytest.mark.slow
@pytest.mark.e2e
def test_unchanged_code_passes_the_gate(gate_repo):
    """The gate on a change that changes nothing: the same revision on both sides. Timed in
    one process, interleaved, identical code passes the default 10% gate: two breakdowns in
    two processes have differed by up to +36% on the 2-vCPU CI machine (a process keeps a
    speed level of its own; docs/compare-and-diff.md)."""
    repo, base, _ = gate_repo
    out = repo.parent / "same"
    proc = _gate("-a", ONE_PROCESS_TRAIN, "-o", str(out), "models/mlp.py", base, base, cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == "**NO REGRESSION above the 10% gate**", lines[0]
    assert any(line.startswith("head against base, default: ") for line in lines)


def test_merge_gate_rejects_bad_arguments(gate_repo, tmp_path):
    repo, base, _ = gate_repo
    missing = _gate("models/none.py", base, cwd=repo)
    assert (missing.returncode, missing.stderr.strip()) == (
        2,
        "merge_gate: models/none.py: no such model file",
    )
    bad_rev = _gate("models/mlp.py", "no-such-rev", cwd=repo)
    assert bad_rev.returncode == 2
    assert bad_rev.stderr.strip() == f"merge_gate: no-such-rev: not a revision of {repo}"
    outside = tmp_path / "m.py"
    outside.write_text("")
    assert _gate(str(outside), cwd=tmp_path).returncode == 2


def test_merge_gate_help_is_usage_on_stdout_and_exit_0(tmp_path):
    for flag in ("--help", "-h"):
        r = _gate(flag, cwd=tmp_path)
        assert (r.returncode, r.stderr) == (0, ""), flag
        assert r.stdout.splitlines()[1] == (
            '  scripts/merge_gate.sh [-p PCT] [-o OUT_DIR] [-m MODE] [-a "COMPARE ARGS"] '
            "MODEL_FILE [BASE_REV [HEAD_REV]]"
        )
    bad = _gate("-x", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stdout == "" and "MODEL_FILE" in bad.stderr


def test_merge_gate_checks_pct_and_mode_before_exporting(gate_repo, tmp_path):
    repo, base, _ = gate_repo
    out = tmp_path / "out"
    cases = {
        ("-p", "abc"): "merge_gate: -p abc: not a percentage (e.g. 10 or 2.5)",
        ("-m", "Bad Mode"): "merge_gate: -m: 'Bad Mode' is not a torch.compile mode name (common modes: "
        "default, reduce-overhead, max-autotune, max-autotune-no-cudagraphs)",
    }
    for args, line in cases.items():
        r = _gate(*args, "-o", str(out), "models/mlp.py", base, cwd=repo)
        assert (r.returncode, r.stderr.strip()) == (2, line)
    r = _gate("-m", "bogus", "-o", str(out), "models/mlp.py", base, cwd=repo)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1
    assert r.stderr.startswith("merge_gate: torch.compile mode 'bogus': torch ")
    assert not out.exists()


# A model of two graphs (a graph break between them); with KILL_IN_PROFILER the first calls an
# op that SIGKILLs its process inside the profiling worker, as the OOM killer would end it (the
# op recognises the worker by the module it runs as; elsewhere it copies its input).
LOST_GRAPH_MODEL = textwrap.dedent("""
    import os
    import signal
    import sys

    import torch

    KILL_IN_PROFILER = {kill}


    def in_profiling_worker() -> bool:
        spec = getattr(sys.modules["__main__"], "__spec__", None)
        return spec is not None and spec.name == {worker!r}


    @torch.library.custom_op("ibgate::maybe_kill", mutates_args=())
    def maybe_kill(x: torch.Tensor) -> torch.Tensor:
        if KILL_IN_PROFILER and in_profiling_worker():
            os.kill(os.getpid(), signal.SIGKILL)
        return x.clone()


    maybe_kill.register_fake(lambda x: torch.empty_like(x))


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(32, 32)

        def forward(self, x):
            x = maybe_kill(torch.relu(x) + 1)
            torch._dynamo.graph_break()
            return torch.nn.functional.gelu(self.a(x)) * 2


    def make_workload(device, dtype, batch_size=8):
        torch.manual_seed(0)
        return Net().to(device=device, dtype=dtype), (torch.randn(batch_size, 32, device=device, dtype=dtype),)
""")


@pytest.fixture(scope="session")
def gate_lost_graph(tmp_path_factory):
    """The merge gate (inference) on a revision whose first graph kills its profiling worker."""
    if shutil.which("git") is None:
        pytest.skip("the merge gate needs git")
    from inductor_bench.runner.graphs import PROFILE_WORKER

    repo = tmp_path_factory.mktemp("gate-lost") / "repo"
    (repo / "models").mkdir(parents=True)
    _git(repo, "init", "-q")
    revs = []
    for kill in (False, True):
        (repo / "models" / "net.py").write_text(LOST_GRAPH_MODEL.format(kill=kill, worker=PROFILE_WORKER))
        _git(repo, "add", ".")
        _git(repo, "commit", "-qm", f"kill in the profiler: {kill}")
        revs.append(_git(repo, "rev-parse", "HEAD"))
    out = repo.parent / "out"
    return _gate("-p", "10", "-a", "--processes 1", "-o", str(out), "models/net.py", *revs, cwd=repo), out


@pytest.mark.slow
@pytest.mark.e2e
def test_merge_gate_gives_no_verdict_when_a_graph_was_lost(gate_lost_graph):
    proc, out = gate_lost_graph
    assert proc.returncode == 5, proc.stdout[-2000:] + proc.stderr[-3000:]
    lost = (
        "graph 0-inference not measured in head (failed: profile worker was killed by SIGKILL "
        "(out of memory? the OOM killer sends SIGKILL) while working on 0-inference"
    )
    first = proc.stdout.splitlines()[0]
    assert first.startswith(f"**NOT COMPARABLE, so the 10% gate fails**: head:default: {lost}"), first
    assert first.endswith(" - no verdict without them") and "1-inference" not in first
    assert f"inductor-bench: error: not comparable, no verdict: head:default: {lost}" in proc.stderr
    # the kernel-by-kernel diff of the two breakdowns says the same, and pairs the other graph
    assert f"**NOT COMPARABLE**: default: {lost}" in proc.stdout
    assert "**REGRESSION" not in proc.stdout and "**FASTER" not in proc.stdout
    assert "0-inference" not in proc.stdout.split("**NOT COMPARABLE**: default: ")[1].split(
        "the kernels listed are those of the graphs measured on both sides")[1]
    assert (out / "gate.md").read_text() == proc.stdout


def test_a_run_recorded_with_the_old_plural_compares_with_one_recorded_now():
    """Records made before the device line said "1 thread" said "1 threads" (the recorded
    fixture below); read now, they name the host as a run made now does, so a stored baseline
    still gates a new run."""
    from inductor_bench.core.ceilings import Ceilings
    from inductor_bench.core.comparable import comparability
    from inductor_bench.core.devices import canonical_name, host_name

    fixture = Path(__file__).parent / "fixtures" / "results" / "cpu_mlp_train_autotune" / "breakdown.json"
    raw = json.loads(fixture.read_text())
    assert raw["device_name"].endswith("(2 cores, 1 threads)")
    old = BreakdownResult.from_dict(raw)
    assert old.device_name == raw["device_name"][: -len("1 threads)")] + "1 thread)"
    now = BreakdownResult.from_dict(dict(raw, device_name=host_name("AMD EPYC", 2, 1)))
    assert now.device_name == old.device_name
    assert comparability(old, now)[0] == []
    assert comparability(old, BreakdownResult.from_dict(dict(raw, device_name="AMD EPYC (2 cores, 2 threads)")))[0]
    assert [canonical_name(n) for n in ("X (1 cores, 1 threads, limited to 1 cores)", "X (11 cores, 21 threads)",
                                        "X (2 cores, 2 threads, limited to 0.1 cores)")] == [
        "X (1 core, 1 thread, limited to 1 core)", "X (11 cores, 21 threads)",
        "X (2 cores, 2 threads, limited to 0.1 cores)"]
    assert Ceilings.from_dict({"device_name": "X (2 cores, 1 threads)", "gbps": None}).device_name == "X (2 cores, 1 thread)"


def test_peak_memory_counted_two_ways_is_said():
    """A run whose host peak included compilation against one reset after the first call: the
    diff says the row compares the counting; counted alike, nothing is said."""
    def counted(kind: str) -> CompareResult:
        r = compare_result(10.0)
        r.modes[1].peak_memory_kind = kind
        return r

    old, new = counted("process peak RSS"), counted("peak RSS after the first call")
    d = diff_results(old, new)
    assert d.warnings == ["peak memory was counted another way: base process peak RSS, head peak RSS "
                          "after the first call; its row compares the counting as much as the model"]
    assert diff_results(new, counted("peak RSS after the first call")).warnings == []


def interrupted_in_compile() -> dict:
    """The recorded run's header as Ctrl-C during the compile leaves a run (the shape of a
    real one, runner/pipeline.py): no graph, and the device still ``auto``, the compile
    worker having never said where it ran."""
    d = recorded()
    keep = ("model", "model_path", "mode", "train", "dtype", "autocast", "freezing", "batch_size", "script",
            "created", "run_dir", "schema", "schema_version")
    d = {k: d[k] for k in keep if k in d}
    d.update(device="auto", device_name="", versions={}, iterations=0, graphs=[], status="interrupted",
             errors=["interrupted"], extras={"elapsed_s": 3.43})
    return d


def test_a_run_interrupted_before_its_device_was_known_is_not_comparable(tmp_path, capsys):
    """Not refused as run on another device (exit 2): every graph it lacks is listed, judged
    with the floor of the device the other side ran on, and the gate fails with exit 5."""
    base, cut = str(RECORDED), save(tmp_path / "cut.json", interrupted_in_compile())
    d = diff_results(load_any(base), load_any(cut))
    assert d.device == "cpu" and d.min_rel == 0.10
    assert d.status() == Outcome.NOT_COMPARABLE and d.regressions(0.0) == []
    assert [u.describe() for u in d.unmeasured] == [
        f"default: graph {g} not measured in head (missing from the interrupted run)"
        for g in ("0-forward", "0-backward")
    ]
    assert "head stopped before its device was known" in d.warnings
    assert run_cli([base, cut, "--fail-on-regression", "10"]) == 5
    assert capsys.readouterr().err.startswith(
        "inductor-bench: error: not comparable, no verdict: default: graph 0-forward not measured in head"
    )


def test_a_cut_list_of_origin_ops_shows_whole_on_hover():
    """An origin cut to the column's width ends in "…" on a terminal and in HTML, whose page
    holds the whole list on hover, as it does a kernel's whole name; markdown and text for a
    file or a pipe show it whole."""
    ops = [f"aten.op_number_{i}" for i in range(8)]
    head_fwd = fwd_kernels(cpp_fused_mul_sin_3=kernel("cpp_fused_mul_sin_3", "cpp_pointwise", 0.7, ops))
    head = result([graph("0-forward", head_fwd), graph("0-backward", bwd_kernels())])
    d = diff_results(base_result(), head)
    full = ", ".join(ops)
    cut = full[: ORIGIN_CHARS - 1] + "…"
    with for_terminal(400):
        assert cut in render_diff(d) and full not in render_diff(d)
    assert full in render_diff(d) and full in render_diff(d, "markdown").replace("\\_", "_")
    page = render_diff(d, "html")
    start = page.index(f'<span title="{full}">') + len(f'<span title="{full}">')
    assert page[start : page.index("</span>", start)].replace("<wbr>", "") == cut


def test_an_interrupted_run_dir_against_its_complete_self_keeps_its_sums_not_comparable(tmp_path, capsys):
    """Two run directories of one model, the head interrupted before its backward: the
    forward's kernels compiled to one code on both sides ("same code"), but the kernel time and
    the categories sum over graphs the head lacks: not comparable, with no change (before, they
    read -61.6% "same code")."""
    base, head = tmp_path / "base", tmp_path / "head"
    for d in (base, head):
        shutil.copytree(FIXTURES / "runs" / "cpu_mlp_train_stalled", d)
    data = json.loads((head / "breakdown.json").read_text())
    data["graphs"] = [g for g in data["graphs"] if g["id"] != "0-backward"]
    data["status"], data["errors"] = "interrupted", ["interrupted"]
    (head / "breakdown.json").write_text(json.dumps(data))
    assert run_cli([str(base), str(head), "--format", "json"]) == 0
    (s,) = json.loads(capsys.readouterr().out)["sections"]
    assert s["kernel_time"]["verdict"] == Outcome.NOT_COMPARABLE
    assert {c["verdict"] for c in s["categories"]} == {Outcome.NOT_COMPARABLE}
    assert {k["status"] for k in s["kernels"]} == {Verdict.SAME_CODE}  # the forward's, one code each


def test_a_side_without_ceilings_has_no_percent_of_peak_and_says_so(tmp_path, capsys):
    """The head stopped before its ceilings were measured (no roofline): its time-weighted % of
    peak reads "not measured", not "no kernel has a %: each uncounted", and is
    not made against the base's ceilings."""
    src = FIXTURES / "results" / "cpu_mlp_train_roofline" / "breakdown.json"
    data = json.loads(src.read_text())
    del data["extras"]["roofline"]
    head = save(tmp_path / "head.json", data)
    assert run_cli([str(src), head]) == 0
    row = next(r for r in capsys.readouterr().out.splitlines() if r.startswith("% of peak (time-weighted"))
    assert "- (not measured)" in row and "uncounted" not in row
    assert run_cli([str(src), head, "--format", "json"]) == 0
    (s,) = json.loads(capsys.readouterr().out)["sections"]
    assert s["roofline_pct"][1] is None and s["roofline_pct"][0] > 0


def test_a_mode_skipped_alike_on_both_sides_is_said_once():
    r = load_any(FIXTURES / "results" / "cpu_mlp_compare")
    why = "CUDA graphs need a CUDA device (this run is on cpu); it would repeat default"
    assert diff_results(r, r).skipped == [f"reduce-overhead: both skipped ({why})"]
    other = load_any(FIXTURES / "results" / "cpu_mlp_compare")
    other.mode("reduce-overhead").reason = "another reason"
    assert diff_results(r, other).skipped == [
        f"reduce-overhead: base skipped ({why}); head skipped (another reason)"]


def test_a_compare_against_a_breakdown_is_refused_naming_where_its_breakdowns_are(capsys):
    compare, breakdown = FIXTURES / "results" / "cpu_mlp_compare", FIXTURES / "results" / "cpu_mlp_train_quiet"
    assert run_cli([str(compare), str(breakdown)]) == 2
    assert capsys.readouterr().err == (
        "inductor-bench: error: cannot diff a compare result against a breakdown result: give two "
        "breakdown results or two compare results (a compare's run directory holds each mode's "
        "breakdown run directory: RUN/default)\n")
