"""A dynamic-shape graph and the static graph Dynamo compiled for the same code at the same
shapes (pure; no torch).

A training loop whose last batch is smaller than the others compiles its step twice: once
static, for the full batch, then again with the batch size as a symbol when the small batch
comes, and that dynamic graph then runs every later full batch too. Inductor's code for a
symbolic size can be slower than its code for a fixed one (on CPU, 1.4-1.9x for the batch
norm reductions of a small CNN: docs/breakdown.md). Both graphs are profiled; where the
dynamic one was profiled at exactly the input shapes the static one was compiled for, the two
times measure the cost of the dynamic code, and the report puts them side by side.
"""

from __future__ import annotations

from dataclasses import dataclass

from .buffers import input_tensors
from .resize import code_lines, input_asserts
from .results import BreakdownResult, GraphResult
from .stats import SIGNIFICANT, Change, judge
from .step import disturbed_graphs
from .symbols import eval_shape, sizes


def input_shapes(text: str, fixed: dict[str, int] | None = None) -> list[list[int]]:
    """The shape of each tensor input of a compiled module, in its harness's order, at the
    sizes profiled (``fixed``: those that differ from the harness's): what ``call()`` asserts
    of it, its size symbols read there, else the harness's own shape; [] where one of them is
    not known."""
    harness = input_tensors(text)
    env = sizes(text, fixed)
    stated = input_asserts(code_lines(text), list(harness))
    shapes = [eval_shape(stated[n][0], env) if n in stated else t.shape for n, t in harness.items()]
    if not shapes or any(s is None for s in shapes):
        return []
    return [list(s) for s in shapes]


SLOWER = 1.10  # a dynamic graph this much slower than its static twin, significantly, is said to be


@dataclass
class Twin:
    """A dynamic graph and the static one of its frame and role at the same input shapes."""

    dynamic: GraphResult
    static: GraphResult
    change: Change  # static -> dynamic wall time, by the statistics module's rule (as diff)
    disturbed: bool  # either was measured on a busy or slowed machine (the report warns)

    @property
    def ratio(self) -> float:
        return self.dynamic.wall_ms / self.static.wall_ms if self.static.wall_ms else 0.0

    @property
    def slower(self) -> bool:
        """The dynamic code is slower, beyond noise, on an undisturbed machine."""
        return self.change.verdict == SIGNIFICANT and self.ratio >= SLOWER and not self.disturbed


def twins(r: BreakdownResult) -> list[Twin]:
    """Each dynamic graph with the static graph of its Dynamo frame and role whose inputs had
    the same shapes where each was profiled; both measured."""
    measured = [g for g in r.measured() if g.input_shapes and g.frame_id is not None]
    static = [g for g in measured if not g.sizes]
    disturbed = {gid for gid, _ in disturbed_graphs(r)}
    out = []
    for d in (g for g in measured if g.sizes):
        same = next((s for s in static if (s.frame_id, s.role, s.input_shapes)
                     == (d.frame_id, d.role, d.input_shapes)), None)
        if same is not None:
            change = judge(same.summary(same.wall_samples_ms, same.wall_ms),
                           d.summary(d.wall_samples_ms, d.wall_ms))
            out.append(Twin(d, same, change, bool({d.id, same.id} & disturbed)))
    return out
