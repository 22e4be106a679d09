"""The parts of a profiled iteration: the series the policy's rule for profiled iterations
(``core/steady.py``, ``steady_iterations``) judges each iteration by, made from what a graph's
result holds. One definition for the analysis (``breakdown.settle``), the re-check of a saved
result (``step.parts_rule_abandoned``) and the naming of what left iterations out
(``leftout.left_out_why``), so that the three never count different parts:

- each kernel's time in the iteration (``KernelStat.samples_ms``), named as the kernel tables
  name it;
- each call of a kernel or extern op called at several places in the compiled module's
  ``call()`` (its call sites, ``GraphResult.sites``: attribution put the k-th event of each
  iteration onto the k-th call): that call's time in the iteration (``aten::addmm #1``, a
  generated kernel's ``cpp_fused_add_0 @1``). An op called at one place is its kernel's one
  series, not a second part. A kernel launched several times where its launches were not
  split by call site (no record of the lowering, a kernel launched twice from one call, an
  extern kernel on a device timeline) is its sum alone: no saved series holds its launches;
- the idle time between kernels (wall less busy: ``IDLE``).

Pure Python; no torch.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .results import GraphResult
from .steady import Steady, limit_of, steady_iterations

IDLE = "idle"


@dataclass(frozen=True)
class Parts:
    """An iteration's parts: their names and series (each aligned with the graph's walls), and
    each call's index -> its kernel's (where the kernel is among them)."""

    names: list[str]
    series: list[list[float]]
    parent: dict[int, int]


def iteration_parts(g: GraphResult) -> Parts:
    """The parts of ``g``'s iterations (see the module doc), from its saved samples: series with
    as many samples as iterations only."""
    n = len(g.wall_samples_ms)
    names: list[str] = []
    series: list[list[float]] = []
    at: dict[str, int] = {}
    for k in g.kernels:
        if len(k.samples_ms) == n:
            at[k.name] = len(names)
            names.append(k.name)
            series.append(list(k.samples_ms))
    whole = [s for s in g.sites if len(s.samples_ms) == n]
    per_kernel = Counter(s.kernel for s in whole)
    parent: dict[int, int] = {}
    for s in whole:
        if per_kernel[s.kernel] > 1:
            if s.kernel in at:
                parent[len(names)] = at[s.kernel]
            names.append(f"{s.kernel} #{s.index}" if s.extern else f"{s.kernel} @{s.occurrence}")
            series.append(list(s.samples_ms))
    if len(g.busy_samples_ms) == n:
        names.append(IDLE)
        series.append([w - b for w, b in zip(g.wall_samples_ms, g.busy_samples_ms, strict=True)])
    return Parts(names, series, parent)


def judge(g: GraphResult) -> Steady:
    """``g``'s profiled iterations judged by the rule (``steady_iterations``): its walls, its
    parts (``iteration_parts``) and the worker's clock readings, every limit ``limit_of`` (each
    iteration runs the same compiled graph on the same inputs)."""
    return steady_iterations(g.wall_samples_ms, iteration_parts(g).series, g.clock_samples_ms, limit=limit_of)
