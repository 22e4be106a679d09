"""The report names the part (kernel, call of an op, idle time) that left each iteration out."""

from __future__ import annotations

from collections import Counter

import pytest

from inductor_bench.core.leftout import left_out_why
from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
from inductor_bench.core.sources import CallSite
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.render.breakdown_graphs import steady_note
from inductor_bench.render.doc import new_doc
from tests.steady_rule import kept_profiled, limit

N = 20
# the iterations each part stalls in, by +0.08 ms: under the wall limit (the first call of
# aten::addmm jitters by 0.03 ms either way, so the walls' 3.5 robust sigmas, over 0.3 ms, are the
# margin), over each part's own limit (its median, 5% margin: steady but for the stalls) and
# over 5% of the ~1 ms wall
STALLS = {"cpp_fused_gelu_1": [2, 9, 15], "aten::addmm #1": [4, 11], "cpp_fused_sum_2": [6], "idle": [17]}
OVER_WALL = 19  # 2 ms


def _graph() -> GraphResult:
    def series(base: float, name: str) -> list[float]:
        return [base + (0.08 if i in STALLS.get(name, []) else 0.0) for i in range(N)]

    gelu, total = series(0.2, "cpp_fused_gelu_1"), series(0.05, "cpp_fused_sum_2")
    calls = [[x + (0.03 if i % 2 else -0.03) for i, x in enumerate(series(0.15, "aten::addmm #0"))],
             series(0.15, "aten::addmm #1")]
    addmm = [a + b for a, b in zip(*calls, strict=True)]
    busy = [a + b + c for a, b, c in zip(gelu, total, addmm, strict=True)]
    idle = series(0.45, "idle")
    walls = [b + i for b, i in zip(busy, idle, strict=True)]
    walls[OVER_WALL] = 2.0
    kernels = [KernelStat("aten::addmm", "gemm", 2.0, 0.3, addmm), KernelStat("cpp_fused_gelu_1", "pointwise", 1.0, 0.2, gelu),
               KernelStat("cpp_fused_sum_2", "reduction", 1.0, 0.05, total)]
    sites = [CallSite("aten::addmm", j, "extern_kernels.addmm", 1.0, 0.15, calls[j]) for j in range(2)]
    # the rule written out again (tests/steady_rule.py) over every part the policy judges by
    kept = kept_profiled(walls, [k.samples_ms for k in kernels] + calls + [[w - b for w, b in zip(walls, busy, strict=True)]])
    left_out = [i for i in range(N) if i not in kept]
    return GraphResult(id="0-forward", role="forward", frame_id=0, frame_compile_id=0, iterations=N, wall_ms=1.0,
                       wall_samples_ms=walls, busy_samples_ms=busy, left_out=left_out, limit_ms=limit(walls),
                       kernels=kernels, sites=sites)


def test_each_iteration_left_out_by_a_part_is_put_down_to_that_part_a_call_rather_than_its_op():
    g = _graph()
    expected = Counter({name: len(its) for name, its in STALLS.items()})
    assert sorted(g.left_out) == sorted([OVER_WALL, *[i for its in STALLS.values() for i in its]])
    why = left_out_why(g)
    assert why.wall == {OVER_WALL} and not why.clock
    assert why.by_part == sorted(expected.items(), key=lambda kv: (-kv[1], kv[0]))
    assert why.by_part == [("cpp_fused_gelu_1", 3), ("aten::addmm #1", 2), ("cpp_fused_sum_2", 1), ("idle", 1)]
    assert sum(n for _, n in why.by_part) == len(why.parts) == 7


def test_the_steady_note_names_at_most_three_parts_then_how_many_more_in_every_format():
    g = _graph()
    wall_limit = limit(g.wall_samples_ms)  # the rule written out again: the median and 3.5 robust sigmas
    assert 1.3 < wall_limit < 1.4
    line = (f"0-forward 8 of 20 (1 over the wall limit {wall_limit:.3f} ms, up to 2.000 ms; 7 more by one kernel or "
            "idle gap ({} 3, {} 2, {} 1, +1 more))")
    names = ("cpp_fused_gelu_1", "aten::addmm #1", "cpp_fused_sum_2")
    r = BreakdownResult(model="m", graphs=[g])
    assert steady_note(r, new_doc()).endswith(line.format(*names) + ".")
    # each name a code span where the format has them: in markdown a bare "#1" links an issue
    code = {"text": "{}", "markdown": "`{}`", "html": "<code>{}</code>"}
    for form, span in code.items():
        page = " ".join(render_breakdown(r, form).split())
        assert line.format(*(span.format(n) for n in names)) in page, form


@pytest.mark.parametrize("stalls", [[], [3]])
def test_no_part_named_where_none_left_an_iteration_out(stalls):
    g = _graph()
    g.left_out = [OVER_WALL, *stalls]
    g.sites, g.busy_samples_ms = [], []
    for k in g.kernels:
        k.samples_ms = [k.samples_ms[0]] * N
    assert left_out_why(g).by_part == []
    assert "idle gap (" not in steady_note(BreakdownResult(model="m", graphs=[g]), new_doc())
