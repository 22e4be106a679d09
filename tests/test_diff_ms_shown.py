"""A change in ms printed beside both its figures is the difference of the two figures as they
are printed, at the finer of their two precisions, as a reader checks it: diff's recomputed row,
its categories and kernels (and the verdict line naming them), the ranks' named ranges and stragglers, the autotune kernel table.
The figures here sit where the exact difference and the printed one part in the last digit:
0.9995 -> 1.0004 ms prints 0.9995 and 1.000, +0.0005 (exactly +0.0009); 0.12344 -> 0.12356
prints 0.1234 and 0.1236, +0.0002 (exactly +0.00012, which read +0.0001); 12.3454 -> 12.3466
prints 12.345 and 12.347, +0.002 (exactly +0.0012). The JSON keeps the exact times; a time on
one side alone (an added kernel) is its own change. Synthetic: results built by hand."""

from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest

from inductor_bench.core.autotune_records import KernelMatch
from inductor_bench.core.diff import SLOWER, CategoryDiff, Diff, KernelDiff, SectionDiff
from inductor_bench.core.ranks import RankResult, RanksResult, RankStep, Straggler
from inductor_bench.core.regions import Region
from inductor_bench.core.stats import judge
from inductor_bench.core.summaries import summarize
from inductor_bench.core.vocab import StepSource
from inductor_bench.render.diff import render_diff
from inductor_bench.render.doc import new_doc
from inductor_bench.render.format import ms_between
from inductor_bench.render.kernel import render_matches
from inductor_bench.render.ranks import render_ranks

FORMATS = ["text", "markdown", "html"]
# a time in ms as printed (not a % nor a speedup)
MS = re.compile(r"(?<![\w.±])[+-]?\d+\.\d+(?![\d%x])")


def kernel(name: str, base_ms: float, head_ms: float, status: str = SLOWER) -> KernelDiff:
    return KernelDiff(status=status, graph="0-forward", name=name, category="cpp_pointwise",
                      aten_ops=["aten::add"], base_ms=base_ms, head_ms=head_ms)


def hand_built_diff() -> Diff:
    step = judge(summarize([20.0] * 6), summarize([24.0] * 6), 0.10)
    category = CategoryDiff("cpp_pointwise", judge(summarize([0.12344] * 6), summarize([0.12356] * 6), 0.10))
    section = SectionDiff(
        mode="default", step=step, step_source=StepSource.HARNESS, categories=[category],
        kernels=[kernel("cpp_fused_add_0", 12.3454, 12.3466), kernel("cpp_fused_mul_1", 0.9995, 1.0004),
                 kernel("cpp_fused_new_2", 0.0, 0.12356, status="added")],
        recomputed_ms=(0.9995, 1.0004),
    )
    return Diff(kind="breakdown", base_model="mlp", head_model="mlp", device="cpu", min_rel=0.10,
                sections=[section])


def rows(out: str, marker: str) -> list[list[str]]:
    """The ms figures of each table row naming ``marker``, in any format (an HTML row is one
    ``<tr>``; a chart's labels and the verdict line are not table rows)."""
    lines = out.replace("</tr>", "</tr>\n").splitlines()
    found = [ln for ln in lines if marker in ln and ("<td" in ln or "<" not in ln) and "responsible" not in ln]
    return [MS.findall(re.sub(r"<[^>]+>", " ", ln)) for ln in found]


def as_read(base: str, head: str) -> str:
    """head - base as a reader works it out on the two printed figures."""
    d = Decimal(head) - Decimal(base)
    return "0.000" if d == 0 else f"{d:+f}"


@pytest.mark.parametrize("fmt", FORMATS)
def test_diff_changes_in_ms_are_the_differences_of_the_figures_shown(fmt: str) -> None:
    out = render_diff(hand_built_diff(), fmt)
    assert rows(out, "recomputed in the backward") == [["0.9995", "1.000", "+0.0005"]]
    assert rows(out, "C++ pointwise")[0] == ["0.1234", "0.1236", "+0.0002"]
    assert rows(out, "cpp_fused_add_0") == [["12.345", "12.347", "+0.002"]]
    assert rows(out, "cpp_fused_mul_1") == [["0.9995", "1.000", "+0.0005"]]
    # an added kernel shows one figure: its change is that time, exact
    assert rows(out, "cpp_fused_new_2") == [["0.1236", "+0.1236"]]
    # the verdict line names the kernels with their rows' changes
    verdict = re.sub(r"<[^>]+>|`", "", out.split("responsible: ", 1)[1].split("\n", 1)[0])
    assert verdict.startswith("cpp_fused_new_2 +0.1236 ms (added), cpp_fused_add_0 +0.002 ms (slower), "
                              "cpp_fused_mul_1 +0.0005 ms (slower)")
    for base, head, change in (rows(out, "recomputed in the backward") + rows(out, "cpp_fused_add_0")
                               + rows(out, "cpp_fused_mul_1")):
        assert as_read(base, head) == change


def test_the_diff_json_keeps_the_exact_times() -> None:
    (section,) = hand_built_diff().sections
    d = json.loads(json.dumps(section.to_dict()))
    assert [(k["base_ms"], k["head_ms"]) for k in d["kernels"][:2]] == [(12.3454, 12.3466), (0.9995, 1.0004)]
    assert d["categories"][0]["delta_ms"] == pytest.approx(0.00012)


def rank(n: int, step_wall: float, region_wall: float) -> RankResult:
    steps = [RankStep(f"ProfilerStep#{i}", step_wall, step_wall, 0.0, step_wall, 0.0, 0.0) for i in range(3)]
    return RankResult(rank=n, trace=f"rank{n}.json", device="cpu", steps=steps,
                      regions=[Region("forward", [1] * 3, [region_wall] * 3, [region_wall] * 3)])


def hand_built_ranks() -> RanksResult:
    # the range's walls 0.0095 and 0.0104 print 0.0095 and 0.010 (3 decimals from 0.01 ms):
    # their spread reads +0.0005, exactly +0.0009; the straggler's 10.1236 over 10.1224 prints
    # 10.124 over 10.122, +0.002, exactly +0.0012
    stragglers = [Straggler(step=f"ProfilerStep#{i}", rank=1, wall_ms=10.1236, median_rank=0,
                            median_wall_ms=10.1224, excess_ms=0.0012, compute_ms=0.0012,
                            exposed_comm_ms=0.0, idle_ms=0.0) for i in range(3)]
    return RanksResult(ranks=[rank(0, 10.1224, 0.0095), rank(1, 10.1236, 0.0104)], stragglers=stragglers)


@pytest.mark.parametrize("fmt", FORMATS)
def test_ranks_spreads_and_excesses_are_the_differences_of_the_figures_shown(fmt: str) -> None:
    out = render_ranks(hand_built_ranks(), fmt)
    assert rows(out, "forward") == [["0.0095", "0.0095", "0.010", "+0.0005"]]  # fastest, median, slowest
    straggler = rows(out, "ProfilerStep#1")[0]  # the straggler table's row, then the steps table's
    assert straggler[:4] == ["10.124", "10.122", "+0.002", "+0.0012"]  # its split: exact


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_autotune_table_reads_the_difference_of_its_figures(fmt: str) -> None:
    match = KernelMatch(graph="0-forward", base_name="cpp_fused_add_0", tuned_name="cpp_fused_add_0",
                        base_category="cpp_pointwise", tuned_category="cpp_pointwise", aten_ops=["aten.add"],
                        base_ms=0.9995, tuned_ms=1.0004, delta_ms=1.0004 - 0.9995, matched_by="name",
                        change="same kernel", verdict="within noise")
    doc = new_doc(fmt)
    render_matches(doc, [match])
    assert rows(doc.render(), "cpp_fused_add_0") == [["0.9995", "1.000", "+0.0005"]]


@pytest.mark.parametrize(("base", "head", "read"), [
    (0.9995, 1.0004, "+0.0005"),  # across 1 ms: 4 decimals and 3, the finer kept
    (1.0004, 0.9995, "-0.0005"),
    (0.12344, 0.12356, "+0.0002"),
    (0.12341, 0.12344, "0.000"),  # the same figure twice: no change to read
    (0.00003, 0.00004, "+0.000010"),  # 6 decimals under 0.00005 ms
    (12.3454, 12.3466, "+0.002"),
])
def test_ms_between(base: float, head: float, read: str) -> None:
    assert ms_between(base, head) == read


def bar_changes(page: str) -> dict[str, str]:
    """Each bar of the HTML page's change charts: its label and the change in ms its hover reads."""
    found = re.findall(r"<rect[^>]*><title>([^\n<]*)\n[^:<]*: ([+-]?[\d.]+) ms per step", page)
    return dict(found)


def test_the_diff_charts_read_each_change_as_its_table_row_does() -> None:
    """A bar's change in ms is its row's: the difference of the two figures printed, not the
    exact one the bar's length draws (+0.0009 for 0.9995 -> 1.000)."""
    page = render_diff(hand_built_diff(), "html")
    assert bar_changes(page) == {"C++ pointwise": "+0.0002", "cpp_fused_add_0": "+0.002",
                                 "cpp_fused_mul_1": "+0.0005", "cpp_fused_new_2": "+0.1236"}


def test_the_diff_json_holds_the_recomputed_times_the_tables_show() -> None:
    (section,) = hand_built_diff().sections
    d = json.loads(json.dumps(section.to_dict()))
    assert d["recomputed_in_backward_ms"] == [0.9995, 1.0004]
    section.recomputed_ms = None  # neither side recomputes: no row, no field
    assert "recomputed_in_backward_ms" not in section.to_dict()


def test_the_diff_charts_read_a_change_in_percent_as_the_tables_do() -> None:
    """+9.97% against a 10% floor: the step chart's title and the category bar's note read
    +9.97% as the rows do, not +10.0%, which would read as over the floor yet within noise."""
    near_floor = judge(summarize([20.0] * 6), summarize([21.994] * 6), 0.10)
    diff = hand_built_diff()
    (section,) = diff.sections
    section.step = near_floor
    section.categories = [CategoryDiff("cpp_pointwise", near_floor)]
    page = render_diff(diff, "html")
    assert re.findall(r"<figcaption>All graphs[^<]*</figcaption>", page) == [
        "<figcaption>All graphs, default: +9.97%, within noise</figcaption>"]
    assert "+9.97% · within noise" in page  # the category's bar
