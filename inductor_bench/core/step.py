"""The model's real step against its graphs: what is spent outside the compiled graphs.

The compile worker times the real step on the model (``step_samples_ms``: guards, the AOT
autograd wrapper, the optimizer's Python, everything between graphs included). The
profiling workers time each graph's own harness. The difference is the time outside the
graphs. Each graph counts with its time as the step runs it: on an accelerator the
pipelined run's time per iteration (launched back to back, as in a real step) where one was
measured, else the synchronous wall time; on the host, the wall time (host work is
synchronous either way). Pure; no torch.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from .results import BreakdownResult, GraphResult


@dataclass(frozen=True)
class StepSplit:
    step_ms: float  # median real step
    graphs_ms: float  # sum over graphs of their time per call
    pipelined: bool  # the graphs' times are pipelined-run times

    @property
    def outside_ms(self) -> float:
        return self.step_ms - self.graphs_ms

    @property
    def outside_pct(self) -> float:
        return 100.0 * self.outside_ms / self.step_ms if self.step_ms > 0 else 0.0


def graph_step_ms(g: GraphResult) -> float:
    """A graph's time per call as a real step sees it (see the module docstring)."""
    return g.pipelined.wall_ms if g.pipelined is not None else g.wall_ms


def split_step(r: BreakdownResult) -> StepSplit | None:
    """None when there is no real step time or a graph was not measured (a script run, a
    failed graph): the split would then mean nothing."""
    if not r.step_samples_ms or not r.graphs or not all(g.ok for g in r.graphs):
        return None
    return StepSplit(
        step_ms=statistics.median(r.step_samples_ms),
        graphs_ms=sum(graph_step_ms(g) for g in r.graphs),
        pipelined=any(g.pipelined is not None for g in r.graphs),
    )


def pipelined_busy_pct(r: BreakdownResult) -> float | None:
    """Busy % of the whole step launched back to back: the graphs' pipelined busy time over
    their pipelined time; None when no graph has a pipelined run (the host, an old result)."""
    runs = [g.pipelined for g in r.measured() if g.pipelined is not None]
    wall = sum(p.wall_ms for p in runs)
    return 100.0 * sum(p.busy_ms for p in runs) / wall if wall > 0 else None


def replayed_count(r: BreakdownResult) -> tuple[int, int] | None:
    """(graphs replayed from a CUDA graph, graphs the mode put under CUDA graphs); None when
    the mode uses none here."""
    gs = [g for g in r.graphs if g.cuda_graphs is not None]
    return (sum(g.replayed for g in gs), len(gs)) if gs else None


def disturbances(r: BreakdownResult) -> list[str]:
    """One line per graph whose reported window ran while the machine was busy with other
    processes (``core/load.py``): its figures may be inflated."""
    out = []
    for g in r.measured():
        load = g.kept_load
        if load is not None and load.disturbed:
            out.append(f"{g.id} was measured while {load.describe()}: its times may be inflated")
    return out
