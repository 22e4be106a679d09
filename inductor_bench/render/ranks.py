"""A ``RanksResult`` as a document: per rank and step (busy, idle, compute, communication and
its overlap with compute), the straggler of each step and where its extra time goes, and
time by category per rank in its typical step (``ranks_typical.py``)."""

from __future__ import annotations

from pathlib import Path

from ..core.analyze import WHOLE_TRACE, is_host
from ..core.rank_cycles import RankCyclesResult
from ..core.ranks import RankResult, RanksResult
from ..core.steady import mean
from . import charts_ranks as charts
from . import format as fmt
from .analyze import DEFAULT_TOP
from .analyze_facts import CLOSED, TIMES_LOST, replays_line, skipped_facts
from .analyze_memory import ranks_memory_section
from .analyze_top import listed, step_code
from .doc import TEXT, Doc, new_doc
from .past_recording import ranks_past_recording
from .ranks_typical import ranks_categories_section, ranks_regions_section, whole_trace

STEP_HEADERS = [
    "step",
    "rank",
    "wall ms",
    "busy ms",
    "other steps' work",
    "idle ms",
    "compute ms",
    "comm ms",
    "overlap ms",
    "comm overlapped",
    "exposed comm ms",
]
# what a terminal too narrow for the table leaves out, in this order (``table_fit``): the share
# overlapped and the overlap itself read from comm and exposed comm, busy from wall, idle and
# other steps' work
STEP_OPTIONAL = ("comm overlapped", "overlap ms", "busy ms")
# ... and of the straggler table: the straggler's excess is split into its other steps' work and
# idle alike, and the median rank's wall is the straggler's wall less its excess
STRAGGLER_OPTIONAL = ("other steps' work", "its wall ms")
STRAGGLER_HEADERS = [
    "step",
    "straggler",
    "wall ms",
    "median rank",
    "its wall ms",
    "excess ms",
    "compute",
    "exposed comm",
    "other steps' work",
    "idle",
]


def _steps(doc: Doc, r: RanksResult) -> None:
    rows = [
        [
            step_code(doc, s.step),
            str(rank.rank),
            fmt.ms(s.wall_ms),
            fmt.ms(s.busy_ms),
            fmt.ms(s.other_work_ms),
            fmt.ms(s.idle_ms),
            fmt.ms(s.compute_ms),
            fmt.ms(s.comm_ms),
            fmt.ms(s.overlap_ms),
            fmt.pct(fmt.share(s.overlap_ms, s.comm_ms)) if s.comm_ms else fmt.DASH,
            fmt.ms(s.exposed_comm_ms),
        ]
        for name in _step_names(r)
        for rank in r.ranks
        if (s := rank.step(name))
    ]
    doc.heading("Steps per rank")
    doc.table(rows, STEP_HEADERS, ("left", *("right",) * 10), optional=STEP_OPTIONAL)
    doc.fine_print(HOST_STEPS_NOTE if all(is_host(rank.device) for rank in r.ranks) else (
        "Figures are of each rank's busiest device. busy = union of its kernel, memcpy and memset "
        "intervals in the step; other steps' work = the device running work other steps launched (a "
        "pipelined loop); idle = wall - busy - other steps' work; comm = union of its communication "
        "kernels (NCCL, c10d); compute = union of everything else; overlap = the part of comm during "
        "which compute also ran; exposed comm = comm - overlap. compute + exposed comm + other steps' "
        "work + idle = wall."), *ranks_past_recording(doc, r))
    doc.chart(charts.ranks_steps(r, _step_names(r)))


HOST_STEPS_NOTE = (
    "CPU-only ranks: figures are of each rank's busiest thread. comm = union of its collectives: "
    "their ops on that thread (c10d::allreduce_, which hands the work over or waits for it) and "
    "their ranges on whichever thread ran them (gloo:all_reduce on gloo's worker threads); "
    "compute = the thread's other op time; busy = union of compute and comm; idle = wall - busy; "
    "overlap = the part of comm during which compute also ran; exposed comm = comm - overlap. "
    "compute + exposed comm + idle = wall."
)


def _stragglers(doc: Doc, r: RanksResult) -> None:
    if not r.stragglers:
        return
    rows = [
        [
            step_code(doc, g.step),
            f"rank {g.rank}" if not g.tied else "none (tied)",
            fmt.ms(g.wall_ms),
            f"rank {g.median_rank}",
            fmt.ms(g.median_wall_ms),
            fmt.ms_between(g.median_wall_ms, g.wall_ms, fmt.ms),  # its parts: exact
            fmt.signed_ms(g.compute_ms),
            fmt.signed_ms(g.exposed_comm_ms),
            fmt.signed_ms(g.other_work_ms),
            fmt.signed_ms(g.idle_ms),
        ]
        for g in r.stragglers
    ]
    n = len(r.ranks)
    of = f" (of {n} rank{'' if n == 1 else 's'}: {', '.join(_lost_names(doc, r))} left out)"
    doc.heading("Straggler per step" + (of if r.times_lost else ""))
    doc.table(rows, STRAGGLER_HEADERS, ("left", "left", "right", "left", *("right",) * 6),
              optional=STRAGGLER_OPTIONAL)
    doc.fine_print(
        "straggler = the rank with the longest step (none where it ties with the median rank); median "
        "rank = the middle rank by wall (the lower middle of an even count); excess = the straggler's "
        "wall - the median rank's, as the two walls read, split into its extra compute, exposed "
        "communication, other steps' work and idle time (they add up to the exact excess, so their "
        "printed figures can part from it in the last digit).",
        *_partial_steps(doc, r),
        *ranks_past_recording(doc, r, "wall, excess and its split", {
            (g.step, rank) for g in r.stragglers for rank in (g.rank, g.median_rank)}),
    )


def _partial_steps(doc: Doc, r: RanksResult) -> list[str]:
    """A line per set of ranks lacking some steps: those steps' straggler and median rank are of
    the ranks that hold them."""
    ranks = [rank for rank in r.ranks if rank.steps]
    lacking: dict[tuple[int, ...], list[str]] = {}
    for g in r.stragglers:
        if missing := tuple(rank.rank for rank in ranks if not rank.step(g.step)):
            lacking.setdefault(missing, []).append(step_code(doc, g.step))
    return [f"{listed(steps)}: held by {len(ranks) - len(missing)} of the {len(ranks)} ranks, not by "
            f"{'rank' if len(missing) == 1 else 'ranks'} {', '.join(map(str, missing))}: the straggler and "
            "median rank are of those that hold it"
            for missing, steps in lacking.items()]


def _step_names(r: RanksResult) -> list[str]:
    return list(dict.fromkeys(s.step for rank in r.ranks for s in rank.steps))


def render_ranks(r: RanksResult, fmt_name: str = TEXT, *, top: int = DEFAULT_TOP) -> str:
    doc = new_doc(fmt_name)
    n = len(r.ranks)
    lost = f", {', '.join(_lost_names(doc, r))} left out" if r.times_lost else ""
    _ranks(doc, r, f"inductor-bench analyze: {n} rank{'' if n == 1 else 's'}{lost}", top)
    return doc.render()


def render_rank_cycles(c: RankCyclesResult, fmt_name: str = TEXT, *, top: int = DEFAULT_TOP) -> str:
    """Several ranks' profiler cycles: each cycle's ranks in turn, the traces with nothing
    profiled named first."""
    doc = new_doc(fmt_name)
    n, ranks = len(c.cycles), len(c.cycles[0].ranks)
    doc.title(f"inductor-bench analyze: {ranks} ranks, {n} profiler cycles")
    facts = [f"cycle {i}: {_steps_span(doc, r)}" for i, r in enumerate(c.cycles, 1)]
    facts += skipped_facts(doc, c.skipped, c.not_traces, cut_short=c.cut_short)
    doc.paragraph(*(doc.item(f) for f in facts))
    for i, r in enumerate(c.cycles, 1):
        _ranks(doc, r, f"Profiler cycle {i} of {n}: {_steps_span(doc, r)}", top)
    return doc.render()


def _steps_span(doc: Doc, r: RanksResult) -> str:
    names = [step_code(doc, n) for n in _step_names(r)]
    return names[0] if len(names) == 1 else f"{len(names)} steps, {names[0]} to {names[-1]}"


def _rank_span(doc: Doc, rank: RankResult) -> str:
    first, last = step_code(doc, rank.steps[0].step), step_code(doc, rank.steps[-1].step)
    return first if first == last else f"{first} to {last}"


def _step_count(rank: RankResult) -> str:
    """``6 steps``; a trace without step markers is one window, no step: it says so."""
    if whole_trace(rank):
        return "no ProfilerStep# markers: its whole trace is one window"
    return f"{len(rank.steps)} step{'' if len(rank.steps) == 1 else 's'}"


def _trace_notes(rank: RankResult) -> str:
    """How many of the rank's ranges were written at their end (``core/range_starts.py``), of
    its events left out unfinished or untimed (named in its JSON), and of its device events
    launched outside every step."""
    notes = []
    if rank.restarted_ranges:
        notes.append(f"{len(rank.restarted_ranges)} ranges written {CLOSED}, "
                     "each started where the call that opened it began")
    if n := sum(rank.unfinished.values()):
        notes.append(f"{n} event(s) with a negative duration left out (unfinished when the profiler stopped)")
    if n := sum(rank.untimed.values()):
        notes.append(f"{n} device event(s) and launch(es) at ts 0 with dur 0 left out (their times lost)")
    if n := sum(rank.no_dur.values()):
        notes.append(f"{n:,} device event(s) with no dur left out of every time figure (time not known)")
    if n := rank.outside_steps:
        notes.append(f"{n:,} device event(s) launched outside every step (or before the profiler started): "
                     "no step's own work, other steps' work in a step they ran in")
    return "".join(f"; {n}" for n in notes)


def _replays(doc: Doc, rank: RankResult) -> list[str]:
    """A line per device on which the rank replayed CUDA graphs in its typical step, as one
    trace's header has: graph launches, the device events they replayed, their time and, on the
    rank's own device, their share of its kernel time."""
    kept = rank.steady_indices()
    if not kept:
        return []
    which = "steady mean step" if len(rank.steps) > 1 else step_code(doc, rank.steps[0].step)
    kernel_ms = mean([sum(rank.steps[i].categories.values()) for i in kept])
    out = []
    for g in rank.graph_replays:
        launches, events, ms = (mean([v[i] for i in kept]) for v in (g.launches, g.events, g.ms))
        if launches:
            out.append(f"rank {rank.rank}: " + replays_line(
                g.device, which, (launches, events, ms), kernel_ms if g.device == rank.device else None))
    return out


def _device(device: str | None) -> str:
    """A rank's device as its line names it: a GPU (``device 0``), or on a CPU-only trace its
    busiest thread (``CPU thread 846``, no device)."""
    return device if device and is_host(device) else f"device {device or 'none'}"


def _world(ranks: list[RankResult]) -> list[str]:
    """What the traces' world sizes say of the set: ranks of different runs, or some left out."""
    sizes = {rank.rank: rank.world_size for rank in ranks if rank.world_size is not None}
    if len(set(sizes.values())) > 1:
        named = ", ".join(f"rank {k}: {w}" for k, w in sizes.items())
        return [f"WARNING: the traces name different world sizes ({named}): they come from different "
                "runs, and their steps are compared as if they were one run's"]
    if sizes and (world := next(iter(sizes.values()))) > len(ranks):
        return [f"{len(ranks)} of the run's {world} ranks (its world size): the straggler is of these"]
    return []


def _lost_names(doc: Doc, r: RanksResult) -> list[str]:
    """Each trace whose device times were lost, by the rank it names (else its file's name)."""
    return [f"rank {r.times_lost_rank[p]}" if p in r.times_lost_rank else doc.code(Path(p).name)
            for p in r.times_lost]


def _lost_facts(doc: Doc, r: RanksResult) -> list[str]:
    """A warning per trace left out for its device times lost, and what the figures cover."""
    n = len(r.ranks)
    others = f"the other {n} ranks" if n > 1 else f"rank {r.ranks[0].rank}"
    return [f"WARNING: {name} left out ({doc.code(p)}): {r.times_lost_why.get(p, TIMES_LOST)}; every "
            f"figure below, the straggler and median rank of each step among them, is of {others} alone"
            for name, p in zip(_lost_names(doc, r), r.times_lost, strict=True)]


def _ranks(doc: Doc, r: RanksResult, title: str, top: int) -> None:
    doc.title(title)
    facts = _lost_facts(doc, r) + [f"rank {rank.rank}: {doc.code(rank.trace)} ({_device(rank.device)}, "
             f"{_step_count(rank)}{_trace_notes(rank)})" for rank in r.ranks]
    facts += [line for rank in r.ranks for line in _replays(doc, rank)]
    facts += skipped_facts(doc, r.skipped, r.not_traces, cut_short=r.cut_short)
    facts += [f"WARNING: {r.renumbered}"] if r.renumbered else []
    facts += [f"WARNING: {r.apart}"] if r.apart else []
    facts += _world(r.ranks)
    doc.paragraph(*(doc.item(f) for f in facts))
    apart = [rank for rank in r.ranks if rank.steps]
    if not r.stragglers and len(apart) > 1:
        spans = "; ".join(f"rank {rank.rank}: {_rank_span(doc, rank)}" for rank in apart)
        whole = [str(rank.rank) for rank in apart if rank.steps[0].step == WHOLE_TRACE]
        why = "the traces come from different profiler cycles or runs"
        if whole:  # such a trace is one window, which no other rank's step matches
            why = (f"{'rank' if len(whole) == 1 else 'ranks'} {', '.join(whole)}: no ProfilerStep# "
                   "markers (prof.step() not called, or called with no profiler schedule: the whole "
                   f"trace is one window), or {why}")
        doc.paragraph(f"WARNING: no step is held by two ranks ({spans}): {why}, so no step has a straggler")
    _stragglers(doc, r)
    _steps(doc, r)
    ranks_categories_section(doc, r)
    ranks_regions_section(doc, r, top)
    ranks_memory_section(doc, r.ranks)
