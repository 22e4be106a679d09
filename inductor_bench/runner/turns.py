"""The real step and each compiled graph's own call, timed in turns in one process.

The compile worker runs this after timing its steps (``capture.py``), where the device table
says ``split_in_turns``: it loads every graph's compiled module as the profiling worker does
(``harness_inputs.load_module``, the module's own harness inputs, a dynamic graph's at the
sizes most of its calls ran at), then times rounds of blocks, one block of calls per side (the
step first, then each graph), the order reversed every other round. ``core/step.py`` turns
the blocks into the time outside the graphs. Timing the step in one process and the graphs in
another would measure the two processes as much as the step: on a shared machine each
settles at a speed of its own (docs/compare-and-diff.md).

A side's first calls after another side's run cold (the other side's inputs and weights took
the caches): a 2-layer Hugging Face BERT's step took 0.82, 0.63 and 0.59 ms in its first three
calls after a block of its graph's harness, 0.57 ms from the fourth on, as in a loop of steps;
timed cold, the turns' step read 23% above the loop's. So each block starts with untimed calls
(``settled``: up to WARM_CALLS, about WARM_S of them), as a profiler window starts after
untimed calls. A side's block size and its untimed calls follow its pace (``rounds.Pace``: the
median of its first calls, then its fastest call so far), as in the timing worker of
``compare``: set once from first calls that stalled, the step ran 1-call blocks to the end
(a compare of ``models/mlp.py`` beside a busy loop: 0.92, 37.07, 1.17, 18.65 and 1.03 ms), each
started by 1 untimed call, so every other block timed its second call after a graph's, cold.

The rounds themselves are ``rounds.py``'s, as in the timing worker of ``compare``.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.call_sizes import chosen
from . import call_inputs, machine
from . import device as dev
from .harness_inputs import HarnessCall, harness, load_module
from .rounds import Pace, Plan, block_steps, interleave

ESTIMATE_CALLS = 3  # per side, before the rounds: warm-up, and the pace that sizes its blocks
TURN_BLOCK_S = 0.01  # a block of one side, about: short, so that a round is short too
MIN_ROUNDS, MAX_ROUNDS = 5, 30
WARM_CALLS, WARM_S = 3, 0.002  # untimed calls that start a block: at most, and about how long


def warm_calls(per_call_s: float) -> int:
    """Untimed calls before a block of calls of ``per_call_s`` each: 1 to WARM_CALLS."""
    return min(WARM_CALLS, max(1, math.ceil(WARM_S / per_call_s))) if per_call_s > 0 else WARM_CALLS


def plan_rounds(per_call_s: list[float], budget_s: float | None) -> tuple[list[int], int]:
    """(calls per block for each side, rounds): blocks of about TURN_BLOCK_S, and as many
    rounds as ``budget_s`` holds, MIN_ROUNDS to MAX_ROUNDS."""
    sizes = [block_steps(pc, TURN_BLOCK_S) for pc in per_call_s]
    round_s = sum((n + warm_calls(pc)) * pc for n, pc in zip(sizes, per_call_s, strict=True))
    if budget_s is None or round_s <= 0:
        return sizes, MAX_ROUNDS
    return sizes, max(MIN_ROUNDS, min(MAX_ROUNDS, int(budget_s / round_s)))


def time_in_turns(
    step: Callable[[], float], module_paths: list[str], device: str, budget_s: float | None
) -> dict[str, Any]:
    """The step (one timed call, in ms) and every module's harness call in turns. Returns
    ``{"paths": module_paths, "blocks": ..., "load": ...}`` (blocks[0] is the step's; the load
    from other processes while the rounds ran, where it was read), or ``{"error": ...}``
    when a module cannot be loaded or called: the split then falls back to the profiled
    graph times, and the reason is kept."""
    try:
        calls = [step]
        for path in module_paths:  # a dynamic graph at the sizes most of its calls ran at, as profiled
            counted = call_inputs.size_counts().get(Path(path).stem)
            sizes = chosen(Path(path).read_text(errors="replace"), {}, counted)
            calls.append(_timed(harness(load_module(path), sizes), device))
        # a module just loaded allocates on its first calls: the median of a few is its pace
        per_call = [statistics.median(call() for _ in range(ESTIMATE_CALLS)) / 1e3 for call in calls]
        sizes, rounds = plan_rounds(per_call, budget_s)
        every_round = Plan(budget_s=None, max_steps=sys.maxsize, min_steps=0)  # rounds decide
        paces = [Pace(TURN_BLOCK_S, every_round.max_steps, pc * 1e3) for pc in per_call]
        warm = settled(calls, lambda i: warm_calls(paces[i].per_call_s()))
        counters = machine.cpu_counters()
        blocks = interleave(warm, sizes, every_round, rounds, paces=paces)
        load = machine.load_since(counters)
        return {"paths": list(module_paths), "blocks": blocks, **({"load": load.to_dict()} if load else {})}
    except Exception as e:  # the step split is an addition: its failure loses nothing else
        return {"error": f"{type(e).__name__}: {e}"[:300]}


def settled(calls: list[Callable[[], float]], warm: Callable[[int], int]) -> list[Callable[[], float]]:
    """Each side's timed call, preceded by ``warm(i)`` untimed calls of its own where the call
    before it was another side's (read as its block starts): a block's times are those of a loop
    that runs the side alone."""
    last = [-1]

    def wrapped(i: int, one: Callable[[], float]) -> Callable[[], float]:
        def call() -> float:
            if last[0] != i:
                last[0] = i
                for _ in range(warm(i)):  # cold: the other side's data took the caches
                    one()
            return one()

        return call

    return [wrapped(i, one) for i, one in enumerate(calls)]


def _timed(run: HarnessCall, device: str) -> Callable[[], float]:
    def one() -> float:
        run.restore()  # the inputs the graph changes in place, put back before the clock starts
        t0 = time.perf_counter()
        run()
        dev.synchronize(device)
        return (time.perf_counter() - t0) * 1e3

    return one
