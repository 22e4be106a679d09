"""The model's real step against its graphs: what is spent outside the compiled graphs.

The real step on the model (guards, the AOT autograd wrapper, the optimizer's Python,
everything between graphs included) less each graph's own time is the time outside the
graphs. Two ways to get it:

- **In turns** (where the device table says ``split_in_turns``: the host). The compile worker
  times the step and each graph's own harness in rounds of blocks in one process
  (``StepTurns``); each round gives its step (the step block's figure) and that less the sum
  of the graphs' blocks; the split is the mean of both over the steady rounds (the policy of
  ``core/steady.py``, applied to the rounds' steps and their graphs' blocks), so the time
  outside the graphs is always less than the step. Separate processes on a shared machine
  settle at speeds of their own, tens of percent apart, so a step timed in one process less
  graphs timed in another measures the processes as much as the step.
- **Across processes** (an accelerator, or a result without turns): the compile worker's
  step figure (``step_samples_ms``) less each graph's time from its profiling: the pipelined
  run's time per iteration (launched back to back, as in a real step) where one was
  measured, else the synchronous wall time.

Pure; no torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .devices import HOST, backend
from .free_cores import OverFreeCores, others_busy, threads_over_free
from .load import SPEED_SLOW, worst
from .parts import judge
from .results import BreakdownResult, GraphResult, StepTurns
from .steady import Steady, limit_of, steady_iterations, steady_mean
from .vocab import Status


@dataclass(frozen=True)
class StepSplit:
    step_ms: float  # the real step (the policy's figure)
    graphs_ms: float  # sum over graphs of their time per call times their calls per step
    pipelined: bool  # the graphs' times are pipelined-run times
    rounds: int = 0  # timed in turns in one process, in this many steady rounds (0: across processes)
    left_out: int = 0  # rounds left out as disturbed

    @property
    def outside_ms(self) -> float:
        return self.step_ms - self.graphs_ms

    @property
    def outside_pct(self) -> float:
        return 100.0 * self.outside_ms / self.step_ms if self.step_ms > 0 else 0.0


# the error line of a run stopped before every graph it compiled was profiled, naming those
# (``runner/graphs.not_profiled``); they are missing from its graphs
NOT_PROFILED = "not profiled: "


def not_all_profiled(r: BreakdownResult) -> bool:
    """A run interrupted before every graph it compiled was profiled."""
    return r.status == Status.INTERRUPTED and any(e.startswith(NOT_PROFILED) for e in r.errors)


def graph_step_ms(g: GraphResult) -> float:
    """A graph's time per call as a real step sees it (see the module docstring)."""
    return g.pipelined.wall_ms if g.pipelined is not None else g.wall_ms


def split_step(r: BreakdownResult) -> StepSplit | None:
    """None when there is no real step time or a graph was not measured (a script run, a
    failed graph, a run interrupted before every graph was profiled): the split would then
    count the graph's time as outside the graphs."""
    if not r.step_samples_ms or not r.graphs or not all(g.ok for g in r.graphs) or not_all_profiled(r):
        return None
    w = r.weights()
    turns = split_in_turns(r.step_turns, w)
    if turns is not None:
        return turns
    return StepSplit(
        step_ms=steady_mean(r.step_samples_ms),
        graphs_ms=sum(w[g.id] * graph_step_ms(g) for g in r.graphs),
        pipelined=any(g.pipelined is not None for g in r.graphs),
    )


def split_in_turns(t: StepTurns | None, weights: dict[str, float]) -> StepSplit | None:
    """The split from turns that cover exactly the graphs of ``weights`` (graph id -> its
    calls per step): per round, the step block's figure and that less the sum of the graphs'
    blocks' figures, each times its calls; both averaged over the steady rounds (judged by their
    step and by each graph's block, ``steady_iterations``) of those in which every side ran.
    None without such turns."""
    if t is None or t.error or sorted(t.graphs) != sorted(weights) or len(t.blocks) != len(t.graphs) + 1:
        return None
    w = [weights[gid] for gid in t.graphs]
    rounds = [
        [steady_mean(side[r]) for side in t.blocks]
        for r in range(min(len(side) for side in t.blocks))
        if all(side[r] for side in t.blocks)
    ]
    if not rounds:
        return None
    # a round is left out when its step is disturbed, or one graph's block is (the parts rule
    # of the profiled iterations): a stall in a graph's block alone would make its round's
    # outside time negative, and the mean of the rounds' less than the truth. The rounds repeat
    # one step, so a stalled majority of them is judged by the faster half's limit (limit_of)
    kept = steady_iterations([x[0] for x in rounds], [[c * x[i] for x in rounds] for i, c in enumerate(w, 1)],
                             limit=limit_of)
    if kept.abandoned and len(kept.abandoned) < len(rounds):
        # the iterations' fallback (fewer than MIN_STEADY left: the walls alone) would keep a
        # round whose graph stalled; with 5 rounds of turns any such round left fewer. A mean
        # of the quiet rounds, however few, is the figure; all of them stalled keeps the walls'
        kept = Steady(kept.n, tuple(i for i in range(kept.n) if i not in set(kept.abandoned)), kept.limit)
    step_ms = kept.mean([x[0] for x in rounds])
    outside_ms = kept.mean([x[0] - math.fsum(c * y for c, y in zip(w, x[1:], strict=True)) for x in rounds])
    return StepSplit(
        step_ms=step_ms, graphs_ms=step_ms - outside_ms, pipelined=False, rounds=len(kept.kept),
        left_out=len(kept.left_out),
    )


@dataclass(frozen=True)
class GainFrame:
    """The wall time a kernel's max gain (Amdahl) is a share of: the graphs' wall per step and,
    where it was measured, the time outside them (eager code between graphs, the wrappers):
    a kernel of a model that spends most of its step outside its graphs can give back only
    its share of the whole step."""

    graphs_ms: float
    outside_ms: float = 0.0

    @property
    def wall_ms(self) -> float:
        return self.graphs_ms + self.outside_ms


# The graphs' own calls in the step's turns against their profiled time: beyond this factor
# either way the turns ran at another speed than the profile (the machine busier, or quieter,
# while the step was timed), and their time outside the graphs is taken at the profile's speed.
TURNS_SPEED_LIMIT = 1.5


def turns_slowdown(r: BreakdownResult, s: StepSplit) -> float | None:
    """How many times their profiled wall the graphs' own calls took in the step's turns, where
    that is beyond ``TURNS_SPEED_LIMIT`` either way; None where the two agree (or no turns)."""
    profiled = r.totals().wall_ms
    if not s.rounds or profiled <= 0 or s.graphs_ms <= 0:
        return None
    return _beyond_limit(s.graphs_ms / profiled)


def turns_step_off(r: BreakdownResult, s: StepSplit) -> float | None:
    """How many times the step the same process timed just before them (``step_samples_ms``,
    the policy's figure) the step took in the turns, where that is over ``TURNS_SPEED_LIMIT``:
    the machine grew busier while the turns ran, and a block of the step may have met it where
    the graphs' blocks did not (their own check, ``turns_slowdown``, then passes while the time
    outside the graphs is off by as much). None where the two agree, where the turns ran faster
    (a quieter stretch: their figure is the better one), or without turns."""
    if not s.rounds or not r.step_samples_ms or s.step_ms <= 0:
        return None
    before = steady_mean(r.step_samples_ms)
    return s.step_ms / before if before > 0 and s.step_ms > TURNS_SPEED_LIMIT * before else None


# ... and the turns' time outside the graphs against the profiled steps', which holds the
# profiler's own cost on top of it: above TURNS_SPEED_LIMIT times it, and above it by more
# than this share of the step, the step's blocks met stalls the graphs' blocks missed
OUTSIDE_EXCESS_OF_STEP = 0.10


def turns_outside_off(r: BreakdownResult, s: StepSplit) -> float | None:
    """How many times the profiled steps' time outside the graphs the turns' is, where it is
    over ``TURNS_SPEED_LIMIT`` and over it by ``OUTSIDE_EXCESS_OF_STEP`` of the step: seen on a
    loaded machine, the step's blocks read 10.7-74 ms against a 2.3 ms step while the graphs'
    blocks kept their 0.5 ms, and 8.254 ms "outside the graphs" stood against the profiled
    steps' 1.303 ms (profiler included). None where they agree, or without either."""
    p = profiled_outside_ms(r)
    if not s.rounds or p is None or p <= 0:
        return None
    high = s.outside_ms > TURNS_SPEED_LIMIT * p and s.outside_ms - p > OUTSIDE_EXCESS_OF_STEP * s.step_ms
    return s.outside_ms / p if high else None


# Which check set the turns' own time outside the graphs aside (``set_aside``), in the order
# they are asked: the first two put the profiled steps' figure in its place, the last the
# turns' figure at the profile's speed
STEP_SLOWER = "step_slower_than_before"  # turns_step_off
OUTSIDE_ABOVE = "outside_above_profiled"  # turns_outside_off
GRAPHS_SPEED = "graphs_at_another_speed"  # turns_slowdown


def set_aside(r: BreakdownResult, s: StepSplit) -> tuple[str, float] | None:
    """(which check, its ratio) of the first check that sets the turns' time outside the graphs
    aside, or None where it stands: the one order ``gain_frame``, the report's outside line and
    the JSON's ``step`` block all read."""
    for why, check in ((STEP_SLOWER, turns_step_off), (OUTSIDE_ABOVE, turns_outside_off),
                       (GRAPHS_SPEED, turns_slowdown)):
        if (ratio := check(r, s)) is not None:
            return why, ratio
    return None


def _beyond_limit(ratio: float) -> float | None:
    return ratio if not 1 / TURNS_SPEED_LIMIT <= ratio <= TURNS_SPEED_LIMIT else None


def profiled_outside_ms(r: BreakdownResult) -> float | None:
    """The time outside the graphs in the steps profiled after the timed ones (``r.outside``: its
    ops and the time in no op, the profiler's own cost included); None where none were."""
    p = r.outside
    return p.outside_ms if p is not None and not p.error and p.steps else None


def profiled_outside_in_place(r: BreakdownResult) -> tuple[float, float | None]:
    """The time outside the graphs that stands where the turns' own figure is set aside
    (``STEP_SLOWER``, ``OUTSIDE_ABOVE``): the profiled steps' (0 where none were profiled); where
    those steps ran over ``TURNS_SPEED_LIMIT`` times the step timed before the turns (the machine
    busier while they were profiled), their share of that step, with how many times slower they
    ran (else None): a loaded run of a two-layer ViT profiled its steps at 17.127 ms against the
    2.393 ms step, and their 4.066 ms outside the graphs stood for more than the whole step."""
    p = profiled_outside_ms(r) or 0.0
    profiled_step = r.outside.step_ms if r.outside is not None else 0.0
    before = steady_mean(r.step_samples_ms) if r.step_samples_ms else 0.0
    if p <= 0 or before <= 0 or profiled_step <= TURNS_SPEED_LIMIT * before:
        return p, None
    return p * before / profiled_step, profiled_step / before


def gain_frame(r: BreakdownResult) -> GainFrame:
    """The graphs' wall per step (``totals``), plus the time outside them where the step was
    measured and that time is positive (``split_step``), at the profile's speed
    (``turns_slowdown``); where the turns' own step disagrees with the step timed before them
    (``turns_step_off``) or their time outside the graphs with the profiled steps'
    (``turns_outside_off``), the profiled steps' time outside the graphs
    (``profiled_outside_in_place``), or none where there is none; a script's graphs alone."""
    graphs = r.totals().wall_ms
    s = None if r.script else split_step(r)
    if s is None or s.outside_ms <= 0:
        return GainFrame(graphs)
    aside = set_aside(r, s)
    if aside is None:
        return GainFrame(graphs, s.outside_ms)
    why, ratio = aside
    return GainFrame(graphs, s.outside_ms / ratio if why == GRAPHS_SPEED else profiled_outside_in_place(r)[0])


def pipelined_busy_pct(r: BreakdownResult) -> float | None:
    """Busy % of all the graphs launched back to back: the graphs' pipelined busy time over
    their pipelined time; None when no graph has a pipelined run (the host, an old result)."""
    runs = [g.pipelined for g in r.measured() if g.pipelined is not None]
    wall = sum(p.wall_ms for p in runs)
    return 100.0 * sum(p.busy_ms for p in runs) / wall if wall > 0 else None


def replayed_count(r: BreakdownResult) -> tuple[int, int] | None:
    """(graphs replayed from a CUDA graph, graphs the mode put under CUDA graphs); None when
    the mode uses none here."""
    gs = [g for g in r.graphs if g.cuda_graphs is not None]
    return (sum(g.replayed for g in gs), len(gs)) if gs else None


def disturbed_graphs(r: BreakdownResult) -> list[tuple[str, list[str]]]:
    """(graph id, why) for each graph whose reported window ran while the machine was busy
    with other processes (``core/load.py``) or ran slow (fixed work took over ``SPEED_SLOW``
    longer than the fastest the run saw: another tenant of a shared VM, the host's clocks;
    ``runner/speed.py``)."""
    out = []
    for g in r.measured():
        why = []
        load = g.kept_load
        if load is not None and load.disturbed:
            why.append(load.describe())
        speed = g.kept_speed
        if speed is not None and 0 < speed < 1 - SPEED_SLOW:
            why.append(f"the machine ran at {100 * speed:.0f}% of its full speed (fixed work took "
                       f"{1 / speed:.2f}x the fastest time of the run)")
        if found := parts_rule_abandoned(g):
            why.append(f"{found} of its {g.iterations} iterations had a kernel or an idle gap far slower "
                       "than its median, too many to leave out (the walls alone chose the steady "
                       "iterations, and its kernels' means hold those stalls)")
        if why:
            out.append((g.id, why))
    return out


def parts_rule_abandoned(g: GraphResult) -> int:
    """How many iterations the rule for profiled iterations (``steady.steady_iterations``) found
    disturbed in ``g`` where they were so many that it fell back on the walls alone; 0 where it
    did not (the saved samples judged again as the analysis judged them, by the same parts:
    ``core/parts.py``), and 0 where the saved result's left-out iterations are not those the
    walls alone leave out: the walls did not choose its steady iterations (a result judged by
    an earlier rule, whose report names the parts that left them out)."""
    walls, busy = g.wall_samples_ms, g.busy_samples_ms
    if not walls or len(busy) != len(walls):
        return 0
    kept = judge(g)
    return len(kept.abandoned) if list(kept.left_out) == sorted(g.left_out) else 0


def disturbances(r: BreakdownResult) -> list[str]:
    """One warning line per graph of ``disturbed_graphs``: its figures may be inflated."""
    return [f"{gid} was measured while {' and '.join(why)}: its times may be inflated"
            for gid, why in disturbed_graphs(r)]


def _during(r: BreakdownResult, load: object) -> str:
    """Which graph's window the load was read in: `` (during 0-backward)``."""
    gid = next((g.id for g in r.measured() if g.kept_load is load), None)
    return f" (during {gid})" if gid is not None else ""


def oversubscribed(r: BreakdownResult) -> str | None:
    """A hint where the host's kernels ran more intra-op threads than the cores left to them
    while a reported window ran, by other processes or by a cgroup's CPU limit: every parallel
    region then waits for the thread that shares a core with them (or for the quota's next
    period), which slows every iteration alike, so that no iteration stands out to be left out
    (docs/statistics.md, "The limit of any per-iteration rule"). None elsewhere."""
    measured = r.roofline.measured if r.roofline is not None else None
    threads = measured.threads if measured is not None else None
    loads = [g.kept_load for g in r.measured() if g.kept_load is not None]
    if backend(r.device).timeline != HOST or not threads or threads < 2 or not loads:
        return None
    over = threads_over_free(threads, loads)
    if over is not None and over.limited:
        return (f"the kernels ran {threads} intra-op threads while {over.held()}: once they have spent "
                "the quota of a period, every thread waits "
                "for the next, and each parallel region for the last of them; with OMP_NUM_THREADS "
                "at or below the limit (the workers inherit it) the kernels run at the speed the "
                "limit allows (docs/statistics.md)")
    slow = max(((x.parallel_x, g.id) for g in r.measured()
                if (x := g.kept_load) is not None and x.parallel_slow), default=None)
    if over is None and slow is None:
        return None
    most = worst(loads)
    busy = others_busy(most)
    held = (f"other processes kept {most.others_cores:.1f} of the {most.cores} cores busy"
            + _during(r, most) if busy else "other work held their cores")
    probe = (f" (a parallel op took {slow[0]:.1f}x as long on them as on one thread, in {slow[1]})"
             if slow is not None else "")
    return (f"the kernels ran {threads} intra-op threads while {held}{probe}: each parallel region "
            "waits for the thread that shares a core with them, which slows every iteration alike, beyond "
            f"what leaving iterations out can remove; with {_fitting(over)} (the workers inherit it) the "
            "figures hold beside other work (docs/statistics.md)")


def _fitting(over: OverFreeCores | None) -> str:
    """The setting the hint names: the thread count the free cores fit where they were measured."""
    if over is None:  # a slow parallel probe alone: the cores others held are not known
        return "OMP_NUM_THREADS set below the free cores"
    return f"OMP_NUM_THREADS={over.fitting_threads()} (the free cores' worth)"
