"""All the graphs of a step (of a factory model) or of a script together, each graph weighed
by how often it ran (the graph table's all-graphs row).

Every figure of a graph is per call of its compiled module. A factory model's step may call a
graph more than once (a block compiled once and called per layer, a graph break inside a loop),
and a script calls its graphs as often as it does: a decode graph forty times beside a prefill
graph once. The all-graphs row, the time by category, the top kernels, the views by op, module and
line, ``diff`` and ``compare`` therefore weigh each graph by its calls: per timed step for a
factory model, in the whole run for a script (``GraphResult.calls``, counted by the compile
worker). Where one measured graph's calls were not counted (CUDA-graph replays bypass the
counted call; a result saved before counting), every graph weighs 1, as before: a mix would
add figures of different meaning. Pure; no torch.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Protocol

from .run_extras import Totals
from .summaries import Summary, add, sum_samples


class MeasuredGraph(Protocol):
    """What these sums read of a graph (``graph_result.GraphResult``; ``results.py`` imports this module)."""

    id: str
    calls: float | None
    wall_ms: float
    busy_ms: float
    kernel_ms: float
    categories: dict[str, float]
    kernels: list[Any]
    sites: list[Any]
    wall_samples_ms: list[float]
    left_out: list[int]

    def summary(self, samples: list[float], fallback: float | None = None) -> Summary: ...


def graph_weights(graphs: list[MeasuredGraph]) -> dict[str, float]:
    """Graph id -> its calls (per step, or in the script), for each of ``graphs``; 1 for each
    where any of them was not counted."""
    if counted(graphs):
        return {g.id: float(g.calls or 0.0) for g in graphs}
    return {g.id: 1.0 for g in graphs}


# The row of the graph table (and the heading of each section) that adds up every graph: the
# graphs' own calls, never the step, which also holds the time outside them.
ALL_GRAPHS = "all graphs"
ALL_GRAPHS_ROW = "the all-graphs row"


def counted(graphs: list[MeasuredGraph]) -> bool:
    """Whether ``graph_weights`` weighs ``graphs`` by counted calls (not each once)."""
    return bool(graphs) and all(g.calls is not None for g in graphs)


def same_calls(a: float, b: float) -> bool:
    """Whether two counts of calls (per step: a mean over the timed steps) are the same."""
    return round(a, 2) == round(b, 2)


def other_than_once(calls: float | None) -> bool:
    """Whether a graph counted ``calls`` times (per step, or in the script) ran other than once."""
    return calls is not None and not same_calls(calls, 1.0)


def reweighed(weights: dict[str, float]) -> bool:
    """Whether weighing by calls changes anything: a graph called other than once (the reports
    then show the calls, and say that the whole adds them)."""
    return any(other_than_once(w) for w in weights.values())


def listed_categories(g: MeasuredGraph) -> list[str]:
    """The category of each row the graph's kernel tables list (``views.units``): a generated
    kernel once, an extern op once per call site where its calls were split by site, once
    where they were not (a device timeline). The reports' ``kernels`` counts are these rows."""
    per_op = Counter(s.kernel for s in g.sites if s.extern)
    return [k.category for k in g.kernels for _ in range(per_op.get(k.name) or 1)]


def totals(graphs: list[MeasuredGraph]) -> Totals:
    """The graphs together, each weighed by its calls: each figure the exact weighted sum of
    the graphs' own."""
    w = graph_weights(graphs)
    cats: dict[str, list[float]] = {}
    for g in graphs:
        for k, v in g.categories.items():
            cats.setdefault(k, []).append(w[g.id] * v)
    return Totals(
        wall_ms=math.fsum(w[g.id] * g.wall_ms for g in graphs),
        busy_ms=math.fsum(w[g.id] * g.busy_ms for g in graphs),
        kernel_ms=math.fsum(w[g.id] * g.kernel_ms for g in graphs),
        categories={k: math.fsum(v) for k, v in cats.items()},
        kernel_count=sum(len(listed_categories(g)) for g in graphs),
        graphs=len(graphs),
        iterations=sum(len(g.wall_samples_ms) for g in graphs),
        left_out=sum(len(g.left_out) for g in graphs),
        weights=w if counted(graphs) else {},
    )


def step_summary(graphs: list[MeasuredGraph]) -> Summary:
    """The step (or the script's graph calls) through the graphs' harnesses: each graph's
    wall times its calls, added (``summaries.add``)."""
    w = graph_weights(graphs)
    return add([g.summary(g.wall_samples_ms, g.wall_ms).scaled(w[g.id]) for g in graphs])


def kernel_summary(graphs: list[MeasuredGraph], category: str | None = None) -> Summary:
    """The kernel time of the step (of one category): per graph the per-iteration sum of its
    kernels' times over its steady iterations, times its calls, the graphs added. A graph with
    no kernel of the category adds nothing, neither samples nor iterations left out: the
    figure is the mean over the steady iterations of the graphs that have one. Where no graph
    has one, it is 0 ms in every steady iteration of every graph."""
    w = graph_weights(graphs)
    having = [g for g in graphs if category is None or any(k.category == category for k in g.kernels)]
    parts = []
    for g in having or graphs:
        ks = [k for k in g.kernels if category is None or k.category == category]
        zero = [0.0] * len(g.wall_samples_ms)
        per_iter = sum_samples([k.samples_ms for k in ks]) if ks else zero
        parts.append(g.summary(per_iter, math.fsum(k.ms for k in ks)).scaled(w[g.id]))
    return add(parts)
