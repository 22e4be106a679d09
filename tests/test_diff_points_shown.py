"""diff's changes of a percentage (busy %, the time-weighted % of peak, each kernel's move toward
its limit) in percentage points are the difference of the two figures printed beside them, as a
reader checks them: 15.0% -> 15.2% reads +0.2 pp (the exact figures, 15.04 and 15.16, differ by
0.12, which read +0.1 pp); 89.6% -> 89.3% reads -0.3 pp (89.64 and 89.26: -0.38, read -0.4 pp).
The JSON keeps the exact figures. Synthetic: a diff built by hand."""

from __future__ import annotations

import json
import re

import pytest

from inductor_bench.core.ceilings import GroupRoof
from inductor_bench.core.diff import Diff, KernelDiff, SectionDiff
from inductor_bench.core.stats import judge
from inductor_bench.core.summaries import summarize
from inductor_bench.core.vocab import StepSource
from inductor_bench.render.diff import render_diff


def roof(pct: float) -> GroupRoof:
    return GroupRoof(pct=pct, share=100.0, parts=[], parts_share=None, above_ceiling=False)


def kernel(name: str, base_pct: float, head_pct: float, head_ms: float) -> KernelDiff:
    return KernelDiff(status="within noise", graph="0-forward", name=name, category="triton_pointwise",
                      aten_ops=["aten::add"], base_ms=head_ms, head_ms=head_ms, base_pct=base_pct, head_pct=head_pct)


def hand_built() -> Diff:
    step = judge(summarize([2.0] * 6), summarize([2.0] * 6), 0.10)
    section = SectionDiff(
        mode="default", step=step, step_source=StepSource.HARNESS, busy_pct=(89.64, 89.26),
        kernels=[kernel("triton_poi_fused_add_0", 15.04, 15.16, 0.5),
                 kernel("triton_poi_fused_add_1", 89.64, 89.26, 0.4)],
        roofline_sides=(roof(15.04), roof(15.16)),
    )
    return Diff(kind="breakdown", base_model="mlp", head_model="mlp", device="cpu", min_rel=0.10,
                sections=[section])


def cells(line: str) -> list[str]:
    """A table row's figures in any format: ``%`` figures and ``pp`` moves, in order."""
    return re.findall(r"!?-?\d+\.\d%|[+-]?\d+\.\d pp", re.sub(r"<[^>]+>", " ", line))


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_a_move_in_points_is_the_difference_of_the_figures_shown(fmt: str) -> None:
    out = render_diff(hand_built(), fmt)
    rows = [cells(ln) for ln in out.replace("</tr>", "</tr>\n").splitlines()]
    figures = [r for r in rows if len(r) == 3 and r[2].endswith(" pp")]
    assert sorted(figures) == sorted([
        ["89.6%", "89.3%", "-0.3 pp"],  # busy %
        ["15.0%", "15.2%", "+0.2 pp"],  # the step's % of peak
        ["15.0%", "15.2%", "+0.2 pp"],  # each kernel toward its limit
        ["89.6%", "89.3%", "-0.3 pp"],
    ])
    for base, head, moved in figures:  # as a reader checks it
        assert f"{float(head[:-1]) - float(base[:-1]):+.1f} pp" == moved


def test_the_json_keeps_the_exact_figures() -> None:
    (section,) = hand_built().sections
    d = json.loads(json.dumps(section.to_dict()))
    assert d["busy_pct"] == [89.64, 89.26] and d["roofline_pct"] == [15.04, 15.16]
    assert [(k["base_pct"], k["head_pct"]) for k in d["kernels"]] == [(15.04, 15.16), (89.64, 89.26)]
