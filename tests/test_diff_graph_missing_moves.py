"""A diff section with a graph measured on one side only (failed, timed out, missing from an
interrupted run) sums its figures over other graphs on each side: no row of it reads a change,
neither a % (as before) nor a move in ms or percentage points, which read as if the head had
lost 35.5 pp of busy time (67.5% over two graphs -> 32.0% over one, the other timed out). A
section whose step only read slower on a busy machine sums over the same graphs and keeps its
moves. Synthetic: results built by hand."""

from __future__ import annotations

import dataclasses
import re

import pytest

from inductor_bench.core.diff import CategoryDiff, Diff, SectionDiff
from inductor_bench.core.stats import judge
from inductor_bench.core.summaries import summarize
from inductor_bench.core.unmeasured import Unmeasured
from inductor_bench.core.vocab import Outcome, StepSource
from inductor_bench.render.diff import render_diff

FORMATS = ["text", "markdown", "html"]


def not_comparable(base: float, head: float):
    return dataclasses.replace(judge(summarize([base] * 8), summarize([head] * 8), 0.10),
                               verdict=Outcome.NOT_COMPARABLE)


def section(missing: Unmeasured) -> SectionDiff:
    return SectionDiff(
        mode="default", step=not_comparable(0.0668, 0.0109), step_source=StepSource.HARNESS,
        kernel_time=not_comparable(0.0451, 0.0035), busy_pct=(67.5, 32.0),
        categories=[CategoryDiff("cpp_reduction", not_comparable(0.0208, 0.0035))],
        recomputed_ms=(0.0208, 0.0035), unmeasured=[missing],
    )


def render(s: SectionDiff, fmt: str) -> str:
    diff = Diff(kind="breakdown", base_model="m", head_model="m", device="cpu", min_rel=0.10, sections=[s])
    return render_diff(diff, fmt)


def cells(out: str, marker: str) -> list[str]:
    """The cells of the first table row naming ``marker``, in any format."""
    lines = out.replace("</tr>", "</tr>\n").splitlines()
    line = next(ln for ln in lines if marker in ln and ("<td" in ln or "<" not in ln))
    text = re.sub(r"<[^>]+>", "|", line) if "<td" in line else line
    return [c.strip() for c in re.split(r"\||\s{2,}", text) if c.strip()]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_graph_measured_on_one_side_leaves_no_move_in_any_row(fmt: str) -> None:
    out = render(section(Unmeasured("default", "head", "timeout", graph="1-inference")), fmt)
    assert cells(out, "busy %") == ["busy %", "67.5%", "32.0%", "-"]
    assert cells(out, "recomputed in the backward") == ["recomputed in the backward, ms", "0.0208", "0.0035", "-"]
    assert cells(out, "C++ reduction") == ["C++ reduction", "0.0208", "0.0035", "-", "-", "not comparable"]
    assert "-35.5 pp" not in out and "-0.0173" not in out


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_step_read_slower_on_a_busy_machine_keeps_its_moves(fmt: str) -> None:
    busy = Unmeasured("default", "head", "steps timed while other processes kept 1.7 of 2 cores busy",
                      disturbed=True)
    out = render(section(busy), fmt)
    assert cells(out, "busy %")[3] == "-35.5 pp"
    assert cells(out, "recomputed in the backward")[3] == "-0.0173"
    assert cells(out, "C++ reduction")[3] == "-0.0173"
