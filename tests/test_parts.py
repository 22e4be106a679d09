"""An iteration's parts (core/parts.py): the analysis, the re-check of a saved result and the
naming of what left iterations out count the same parts and the same left-out iterations, on
hand-built graphs where their definitions once differed. Each verdict is checked against the
rule written out again in tests/steady_rule.py."""

from __future__ import annotations

import pytest

from inductor_bench.core.breakdown import MARKER, analyze_graph, settle
from inductor_bench.core.leftout import left_out_why
from inductor_bench.core.parts import iteration_parts, judge
from inductor_bench.core.results import GraphResult, KernelStat
from inductor_bench.core.sources import CallSite
from inductor_bench.core.step import parts_rule_abandoned
from inductor_bench.core.trace import Event, Trace

from .steady_rule import kept_profiled


def _agree(g: GraphResult, kept: list[int]) -> None:
    """The analysis' left-out iterations are the independent rule's, the re-check's and those
    the naming accounts for, each put down to a named part."""
    n = len(g.wall_samples_ms)
    assert g.left_out == [i for i in range(n) if i not in kept]
    assert judge(g).left_out == tuple(g.left_out) and parts_rule_abandoned(g) == 0
    lo = left_out_why(g)
    assert lo.wall | lo.clock | lo.parts == set(g.left_out)
    assert sum(c for _, c in lo.by_part) == len(lo.parts)


def test_a_kernel_launched_twice_from_one_call_is_its_sum_in_every_judge():
    """A trace (no module, so no call sites): ``cpp_fused_k`` launched twice an iteration, the
    first launch 100 us but 400 in iteration 3 (its sum hidden in the second launch's spread),
    ``aten::mm`` 200 us but 500 in iteration 7; 50 us idle. No saved series holds the first
    launch, so no judge counts it: iteration 7 alone is left out, put down to ``aten::mm``
    (the analysis once split the launches and left out 3 too, which the saved result could
    neither judge again nor name)."""
    first = [100] * 12
    first[3] = 400
    second = [200, 800, 300, 200, 700, 250, 600, 350, 500, 400, 750, 450]
    mm = [200] * 12
    mm[7] = 500
    events = []
    for i in range(12):
        t0, a, b = 10_000 * i, first[i], second[i]
        events += [Event(MARKER, "user_annotation", t0, a + b + mm[i] + 50, 1, 1, {}),
                   Event("cpp_fused_k", "cpu_op", t0 + 10, a, 1, 1, {}),
                   Event("cpp_fused_k", "cpu_op", t0 + 10 + a + 5, b, 1, 1, {}),
                   Event("aten::mm", "cpu_op", t0 + 10 + a + 5 + b + 5, mm[i], 1, 1, {})]
    g = analyze_graph(Trace(events=events), None, GraphResult(id="0-forward", role="forward", device="cpu"))
    assert iteration_parts(g).names == ["cpp_fused_k", "aten::mm", "idle"]
    walls = [(first[i] + second[i] + mm[i] + 50) / 1000 for i in range(12)]
    k = [(first[i] + second[i]) / 1000 for i in range(12)]
    kept = kept_profiled(walls, [k, [x / 1000 for x in mm], [0.05] * 12])
    assert kept == [i for i in range(12) if i != 7]
    _agree(g, kept)
    assert left_out_why(g).by_part == [("aten::mm", 1)]


def _graph() -> tuple[GraphResult, list[list[float]]]:
    """Ten iterations: ``aten::addmm`` called at two places (#0: 0.3 ms, 0.6 in iteration 2;
    #2: 0.2-0.9 ms, whose spread hides #0's stall in the op's sum), ``aten::mm`` called at one
    place (#1, 0.2 ms), ``cpp_fused_0`` 0.1 ms, 0.05 ms idle."""
    s0 = [0.3] * 10
    s0[2] = 0.6
    s2 = [0.2, 0.9, 0.3, 0.8, 0.4, 0.7, 0.5, 0.6, 0.35, 0.65]
    addmm = [a + b for a, b in zip(s0, s2, strict=True)]
    mm, cpp = [0.2] * 10, [0.1] * 10
    walls = [a + m + c + 0.05 for a, m, c in zip(addmm, mm, cpp, strict=True)]

    def k(name: str, cat: str, xs: list[float]) -> KernelStat:
        return KernelStat(name=name, category=cat, calls=1.0, ms=0.0, samples_ms=xs)

    def site(op: str, index: int, xs: list[float]) -> CallSite:
        return CallSite(kernel=op, index=index, callee=op.replace("aten::", "extern_kernels."), calls=1.0, ms=0.0,
                        samples_ms=xs)

    g = GraphResult(id="0-forward", role="forward", device="cpu", iterations=10, wall_samples_ms=walls,
                    busy_samples_ms=[w - 0.05 for w in walls],
                    kernels=[k("cpp_fused_0", "cpp_pointwise", cpp), k("aten::mm", "extern_gemm", mm),
                             k("aten::addmm", "extern_gemm", addmm)],
                    sites=[site("aten::addmm", 0, s0), site("aten::mm", 1, mm), site("aten::addmm", 2, s2)])
    return g, [addmm, mm, cpp, s0, s2, [0.05] * 10]


def test_the_call_sites_of_an_op_called_at_two_places_are_parts_an_op_called_once_is_not():
    """The saved call sites are the parts (an op called at one place is its kernel's series,
    not a second one, as the re-check once counted it): the analysis settling the graph, the
    re-check and the naming leave out iteration 2 alone, put down to ``aten::addmm #0``; every
    figure is the mean over the other nine."""
    g, series = _graph()
    settle(g)
    parts = iteration_parts(g)
    assert parts.names == ["aten::addmm", "aten::mm", "cpp_fused_0", "aten::addmm #0", "aten::addmm #2", "idle"]
    assert parts.parent == {3: 0, 4: 0}
    kept = kept_profiled(g.wall_samples_ms, series)
    assert kept == [0, 1, 3, 4, 5, 6, 7, 8, 9]
    _agree(g, kept)
    assert left_out_why(g).by_part == [("aten::addmm #0", 1)]
    addmm, s0, s2 = series[0], series[3], series[4]
    assert g.kernels[0].ms == pytest.approx(sum(addmm[i] for i in kept) / 9)  # 0.83333 ms
    assert [s.ms for s in g.sites] == pytest.approx([0.3, 0.2, sum(s2[i] for i in kept) / 9])
    assert sum(s0[i] for i in kept) / 9 == pytest.approx(0.3)
    assert g.wall_ms == pytest.approx(sum(g.wall_samples_ms[i] for i in kept) / 9)


def test_a_saved_result_whose_walls_did_not_choose_its_iterations_is_not_said_to_fall_back_on_them():
    """Synthetic, as a result judged by an earlier rule: 20 iterations, one kernel stalled (+3 ms)
    in 0-7, the other in 8-15, 0.2 ms idle. Judged again, 16 are disturbed, too many: the walls
    alone would decide, and they leave none out. A result that left none out was chosen by them,
    and the report says so; one that left out 3 and 9 (by its parts) was not, and the report's
    note names those parts instead."""
    from inductor_bench.core.results import BreakdownResult
    from inductor_bench.core.step import disturbances

    a = [1.0 + (3.0 if i < 8 else 0.0) for i in range(20)]
    b = [1.0 + (3.0 if 8 <= i < 16 else 0.0) for i in range(20)]
    walls = [x + y + 0.2 for x, y in zip(a, b, strict=True)]
    assert kept_profiled(walls, [a, b, [0.2] * 20]) == list(range(20))  # the walls' own verdict

    def graph(left_out: list[int]) -> GraphResult:
        return GraphResult(id="0-backward", role="backward", iterations=20, wall_samples_ms=walls,
                           busy_samples_ms=[w - 0.2 for w in walls], left_out=left_out,
                           kernels=[KernelStat(name=n, category="cpp_pointwise", calls=1.0, ms=0.0, samples_ms=xs)
                                    for n, xs in (("k_a", a), ("k_b", b))])

    assert parts_rule_abandoned(graph([])) == 16
    older = graph([3, 9])
    assert parts_rule_abandoned(older) == 0
    assert disturbances(BreakdownResult(model="m", device="cpu", graphs=[older])) == []
    assert left_out_why(older).by_part == [("k_a", 1), ("k_b", 1)]
