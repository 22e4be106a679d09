"""`diff` of runs whose graphs the model calls more than once: every row per step (or in the
script), each graph weighed by its calls, so that the kernels' changes add up to their
category's and the step's; and kernels of one code whose graph was called another number of
times say that their calls changed, not that the processes differ. Hand-built results."""

from __future__ import annotations

import pytest

from inductor_bench.core.diff import SLOWER, diff_results
from inductor_bench.core.vocab import Outcome, Verdict
from inductor_bench.render.diff import render_diff, verdict_line
from inductor_bench.render.doc import TextDoc
from inductor_bench.render.format import count as fmt_count

from .test_diff import graph, kernel, result
from .test_diff_same_code import _run


def _script(addmm_ms: float, mm_ms: float, calls: tuple[float, float] = (3.0, 1.0)):
    """A script calling graph 0 (an addmm and a GELU) ``calls[0]`` times and graph 1 (an mm)
    ``calls[1]`` times; each kernel ``*_ms`` per call."""
    g0 = graph("0-inference", [kernel("aten::addmm", "extern_gemm", addmm_ms, ["aten.addmm"]),
                               kernel("cpp_fused_gelu_0", "cpp_pointwise", 1.0, ["aten.gelu"])])
    g1 = graph("1-inference", [kernel("aten::mm", "extern_gemm", mm_ms, ["aten.mm"])])
    g0.calls, g1.calls = calls
    for k in g0.kernels + g1.kernels:  # counted work: one code where the modules define no source
        k.bytes, k.flops = 4096, 8192
    return result([g0, g1], script=True)


def test_kernel_rows_are_per_step_and_add_up_to_the_category():
    """The addmm, called 3 times, is 0.5 ms slower per call: 1.5 ms more in the script; the mm,
    called once, 1.0 ms slower: 1.0 ms more. Per call the mm would rank first."""
    d = diff_results(_script(2.0, 4.0), _script(2.5, 5.0))
    (s,) = d.sections
    rows = {k.name: k for k in s.kernels}
    addmm, mm, gelu = rows["aten::addmm"], rows["aten::mm"], rows["cpp_fused_gelu_0"]
    assert (addmm.base_ms, addmm.head_ms, addmm.delta_ms) == pytest.approx((3 * 2.0, 3 * 2.5, 3 * 0.5))
    assert (mm.base_ms, mm.head_ms, mm.delta_ms) == pytest.approx((4.0, 5.0, 1.0))
    assert (gelu.base_ms, gelu.head_ms) == pytest.approx((3 * 1.0, 3 * 1.0))
    assert addmm.status == mm.status == SLOWER
    assert [k.name for k in s.responsible()] == ["aten::addmm", "aten::mm"]
    (gemm,) = [c.change for c in s.categories if c.category == "extern_gemm"]
    assert gemm.delta_ms == pytest.approx(addmm.delta_ms + mm.delta_ms) == pytest.approx(2.5)
    assert s.kernel_time.delta_ms == pytest.approx(2.5)
    assert s.step.delta_ms == pytest.approx(2.5)  # the same overheads on both sides
    assert "kernels responsible: aten::addmm +1.500 ms (slower), aten::mm +1.000 ms (slower)" in (
        verdict_line(d, TextDoc()))


MODULE = "def call(args):\n    # kernel path: /tmp/{cache}/ab/cabc.py\n    pass\n"


def test_the_same_code_called_twice_as_often_says_the_calls_changed(tmp_path):
    """The same script run with a loop twice as long: every graph compiled to the same code and
    called twice as often. The rows move with the calls, and say so."""
    b, h = _script(2.0, 4.0, (4.0, 4.0)), _script(2.0, 4.0, (8.0, 8.0))
    d = diff_results(b, h, code_dirs=(_run(tmp_path, "base", b, MODULE), _run(tmp_path, "head", h, MODULE, "cache-b")))
    (s,) = d.sections
    assert not s.same_code and s.calls_changed == [("0-inference", 4.0, 8.0), ("1-inference", 4.0, 8.0)]
    assert {k.name: (k.status, k.delta_ms) for k in s.kernels} == pytest.approx({
        "aten::addmm": (Verdict.CALLS_CHANGED, 4 * 2.0), "aten::mm": (Verdict.CALLS_CHANGED, 4 * 4.0),
        "cpp_fused_gelu_0": (Verdict.CALLS_CHANGED, 4 * 1.0)})
    assert {c.category: c.change.verdict for c in s.categories} == {
        "cpp_pointwise": Verdict.CALLS_CHANGED, "extern_gemm": Verdict.CALLS_CHANGED}
    assert s.kernel_time.verdict == Verdict.CALLS_CHANGED
    assert d.status() == Outcome.REGRESSION  # the step is judged: the script does twice the work
    assert verdict_line(d, TextDoc()).endswith("; calls changed: 0-inference 4 -> 8, 1-inference 4 -> 8")
    text = render_diff(d)
    assert "the processes alone" not in text  # no row reads `same code`, no note claims process noise
    assert not [line for line in text.splitlines() if line.rstrip().endswith(Verdict.SAME_CODE)]
    assert ("3 the same code on both sides, their graphs called another number of times (their times "
            "per step move with the calls)") in " ".join(text.split())
    assert "The same code, its graph called another number of times (3)" in text


def test_a_million_calls_read_as_an_integer_with_thousands_separators(tmp_path):
    """A graph called a million times, then two million: its calls read ``1,000,000 ->
    2,000,000`` as the tool's other integers do (``:,``), never ``1e+06 -> 2e+06``; a count
    that is not whole keeps two decimals, separated likewise."""
    b, h = _script(2.0, 4.0, (1e6, 4.0)), _script(2.0, 4.0, (2e6, 4.0))
    d = diff_results(b, h, code_dirs=(_run(tmp_path, "base", b, MODULE), _run(tmp_path, "head", h, MODULE, "cache-b")))
    assert d.sections[0].calls_changed == [("0-inference", 1e6, 2e6)]
    assert verdict_line(d, TextDoc()).endswith(f"; calls changed: 0-inference {1_000_000:,} -> {2_000_000:,}")
    assert "calls changed: 0-inference 1,000,000 -> 2,000,000 (the step adds" in " ".join(render_diff(d).split())
    assert fmt_count(2500.5) == "2,500.50" and fmt_count(12.0) == "12"


def test_the_same_code_called_as_often_stays_same_code_beside_a_graph_called_more(tmp_path):
    """Only graph 1 is called more often: its mm moved with its calls; graph 0's kernels are
    the same code run as often, their times the processes'."""
    b, h = _script(2.0, 4.0, (4.0, 4.0)), _script(2.0, 4.0, (4.0, 6.0))
    d = diff_results(b, h, code_dirs=(_run(tmp_path, "base", b, MODULE), _run(tmp_path, "head", h, MODULE, "cache-b")))
    (s,) = d.sections
    assert {k.name: k.status for k in s.kernels} == {
        "aten::addmm": Verdict.SAME_CODE,
        "aten::mm": Verdict.CALLS_CHANGED, "cpp_fused_gelu_0": Verdict.SAME_CODE}
    assert {c.category: c.change.verdict for c in s.categories} == {
        "cpp_pointwise": Verdict.SAME_CODE, "extern_gemm": Verdict.CALLS_CHANGED}
    assert s.kernel_time.verdict == Verdict.CALLS_CHANGED
