"""Several ranks' traces -> per rank and step: busy, idle, compute, communication and how
much of the communication compute overlaps; the straggler of each step. Pure, no torch.

Each rank's trace is read and reduced in its own process (``analyze_ranks.py``); only its
small ``RankResult`` comes back, so memory does not grow with the number of ranks.

- A rank's **device** is the one with the most device time in its trace (a rank drives
  one GPU); on a CPU-only trace, its busiest CPU thread.
- **Communication**: the events ``classify`` puts in the ``communication`` category
  (``ncclKernel_*``, ``ncclDevKernel_*``, kernels launched by ``c10d::*`` / ``nccl:*`` /
  ``record_param_comms``). **Compute**: every other event of the device.
- **comm** / **compute** ms: the length of the union of their intervals in the step's
  window; **overlap**: the length of (union of comm) ∩ (union of compute) on the device;
  **exposed comm** = comm − overlap; **other steps' work**: the device running work other
  steps launched (``steps.py``). compute + exposed comm + other steps' work + idle = wall.
- The **straggler** of a step is the rank with the longest wall; it is compared with the
  **median rank**, the rank at the middle of the ranks sorted by wall (the lower middle for
  an even count), so that its excess splits exactly into compute, exposed comm, other
  steps' work and idle.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .analyze import require_times, step_result
from .columns import load_columns
from .graph_replays import GraphReplays, graph_replays
from .memory import DeviceMemory, step_memory
from .merged_trace import require_one_process
from .ns_figures import ns_json
from .regions import Region, regions
from .steady import steady_held
from .steps import StepEvents, recorded_step_end, split_steps
from .timeline import intersection_length, merged, subtracted
from .trace_files import trace_head

SCHEMA = "inductor-bench/analyze-ranks"
SCHEMA_VERSION = 1
COMM = "communication"
US_PER_MS = 1000.0
# the value's whole JSON token: a rank or world size is one only where it is a whole number
# (``2.5``, ``-1``, ``"2"``, ``2e0`` name none; matching its leading digits read 2.5 as rank 2)
_RANK_IN_HEADER = re.compile(r'"distributedInfo"\s*:\s*\{[^{}]*?"rank"\s*:\s*([^,{}\[\]\s]+)')
_WORLD_IN_HEADER = re.compile(r'"distributedInfo"\s*:\s*\{[^{}]*?"world_size"\s*:\s*([^,{}\[\]\s]+)')
_WHOLE = re.compile(r"\d+", re.ASCII)
_RANK_IN_NAME = re.compile(r"rank[-_]?(\d+)", re.IGNORECASE)


@dataclass
class RankStep:
    """One step of one rank, on its device. Times in ms."""

    step: str
    wall_ms: float
    busy_ms: float
    idle_ms: float  # wall - busy - other_work
    compute_ms: float  # union of the non-communication events
    comm_ms: float  # union of the communication events
    overlap_ms: float  # |union(comm) ∩ union(compute)|
    categories: dict[str, float] = field(default_factory=dict)  # summed durations
    # the device running other steps' work where this step's own was not (a pipelined loop)
    other_work_ms: float = 0.0
    past_recording_ms: float = 0.0  # how far the step ran past its profiler's recording (not in wall)

    @property
    def exposed_comm_ms(self) -> float:
        return self.comm_ms - self.overlap_ms


@dataclass
class RankResult:
    rank: int
    trace: str
    device: str  # the device (or CPU thread) its figures are of
    steps: list[RankStep]
    regions: list[Region] = field(default_factory=list)  # its record_function ranges, per step
    memory: list[DeviceMemory] = field(default_factory=list)  # profile_memory's, per step
    # as one trace's (core/analyze.py AnalyzeResult): the ranges written at their end, their start
    # restored (core/range_starts.py); the events left out, by name, for a negative duration
    # (unfinished when the profiler stopped), for carrying no time (ts 0, dur 0) and, of device
    # events, for writing no dur
    restarted_ranges: list[str] = field(default_factory=list)
    unfinished: dict[str, int] = field(default_factory=dict)
    untimed: dict[str, int] = field(default_factory=dict)
    no_dur: dict[str, int] = field(default_factory=dict)
    outside_steps: int = 0  # device events launched outside every step, or before the profiler
    # the start of its first step and the end of its last, in µs since the epoch where the
    # trace's header gives its time base (baseTimeNanoseconds), else on the trace's own clock
    span_us: list[float] = field(default_factory=list)
    world_size: int | None = None  # distributedInfo's, where the trace's header has it
    # CUDA-graph replays per device, per step, as one trace's (core/graph_replays.py)
    graph_replays: list[GraphReplays] = field(default_factory=list)

    def step(self, name: str) -> RankStep | None:
        return next((s for s in self.steps if s.step == name), None)

    def steady_indices(self) -> list[int]:
        """The steps its typical step is the mean of: of those that hold anything (a step the
        profiler stopped in as it opened holds nothing, and is no step of the loop's), the
        steady ones (``steady.steady_held``), as for one trace (``analyze.steady_indices``)."""
        held = [s.busy_ms > 0 or bool(s.categories) for s in self.steps]
        return steady_held([s.wall_ms for s in self.steps], held)


@dataclass
class Straggler:
    """The slowest rank of one step against the median rank; the three parts add up to
    ``excess_ms``."""

    step: str
    rank: int
    wall_ms: float
    median_rank: int
    median_wall_ms: float
    excess_ms: float
    compute_ms: float  # its compute minus the median rank's
    exposed_comm_ms: float
    idle_ms: float
    other_work_ms: float = 0.0

    @property
    def tied(self) -> bool:
        """The slowest rank took no longer than the median rank: the top half of the ranks (or
        all of them) tie, and none straggles."""
        return self.excess_ms <= 0


@dataclass
class RanksResult:
    ranks: list[RankResult]
    stragglers: list[Straggler]
    skipped: list[str] = field(default_factory=list)  # traces with nothing profiled
    not_traces: list[str] = field(default_factory=list)  # a directory's JSON files that are no trace
    cut_short: dict[str, str] = field(default_factory=dict)  # traces cut short among several: why
    # where some traces name their rank and some do not: every trace numbered in the order given
    renumbered: str = ""
    # where some rank's steps overlap no other's in time: traces of different runs
    apart: str = ""
    # traces whose device events all lost their times (``analyze.require_times``): left out, the
    # other ranks analysed; why, where it is not the profiler's loss (no dur written); the rank each names
    times_lost: list[str] = field(default_factory=list)
    times_lost_why: dict[str, str] = field(default_factory=dict)
    times_lost_rank: dict[str, int] = field(default_factory=dict)
    schema: str = SCHEMA
    schema_version: int = SCHEMA_VERSION

    def to_json(self) -> str:
        return ns_json(asdict(self))


# ---- inputs -----------------------------------------------------------------------------


def rank_of(path: Path) -> int | None:
    """The rank a trace names: ``distributedInfo.rank`` in its header, else ``rank<N>`` in
    its file name; None when neither says."""
    m = _RANK_IN_HEADER.search(trace_head(path))
    if m and _WHOLE.fullmatch(m.group(1)):
        return int(m.group(1))
    m = _RANK_IN_NAME.search(path.name)
    return int(m.group(1)) if m else None


# ---- one rank ---------------------------------------------------------------------------


def rank_summary(path: Path, rank: int) -> RankResult:
    """Read one rank's trace (into columns) and keep only its per-step figures."""
    columns = load_columns(path)
    require_times(columns)
    require_one_process(columns)
    split = split_steps(columns)
    device = _main_device(split)
    ranges = _comm_ranges(columns) if split.shares is not None else []
    steps = [_rank_step(split, k, device, ranges) for k in range(len(split.windows))]
    return RankResult(rank=rank, trace=str(path), device=device, steps=steps, regions=regions(columns, split),
                      memory=step_memory(columns.memory, split.windows),
                      restarted_ranges=list(columns.restarted_ranges), world_size=world_size_of(path),
                      unfinished=dict(columns.unfinished), untimed=dict(columns.untimed),
                      no_dur=dict(columns.no_dur), graph_replays=graph_replays(columns, split),
                      outside_steps=split.outside, span_us=_span_us(split, columns.base_time_ns))


def _span_us(split: StepEvents, base_ns: int | None) -> list[float]:
    """[start of the first step, end of the last] (``RankResult.span_us``); [] without steps. The
    last step's end stops where its wall does when it ran past the profiler's recording
    (``recorded_step_end``): a step marker closed long after the recording would stretch the span
    over another run's steps and hide that the traces are of different runs."""
    windows = split.windows
    if not windows:
        return []
    base = (base_ns or 0) / 1e3
    end = min(windows[-1][2], recorded_step_end(split, len(windows) - 1)[0])
    return [windows[0][1] + base, end + base]


def world_size_of(path: Path) -> int | None:
    """The world size a trace's ``distributedInfo`` names (None where it names none)."""
    m = _WORLD_IN_HEADER.search(trace_head(path))
    return int(m.group(1)) if m and _WHOLE.fullmatch(m.group(1)) else None


# a collective's own range on the thread that runs it (gloo's worker threads), as
# record_function writes it: ``gloo:all_reduce``, ``nccl:all_reduce``
COMM_RANGE = re.compile(r"^(?:gloo|nccl):")


def _comm_ranges(columns) -> list[tuple[float, float]]:
    """A CPU-only trace's collectives as they ran, on whichever thread: the main thread's
    ``c10d::allreduce_`` only hands the work to gloo's thread, whose range lasts until it is done."""
    names = columns.names.values
    return [(a, b) for n, a, b, _ in columns.regions if COMM_RANGE.match(names[n])]


def _main_device(split: StepEvents) -> str:
    total: dict[str, float] = {}
    dur = split.events.dur
    for js in split.per_step:
        for j in js:
            d = split.device(j)
            total[d] = total.get(d, 0.0) + dur[j]
    return max(sorted(total), key=lambda d: total[d]) if total else ""


def _rank_step(split: StepEvents, k: int, device: str, comm_ranges: list[tuple[float, float]]) -> RankStep:
    res = step_result(split, k)
    start = split.windows[k][1]
    end = start + res.wall_ms * US_PER_MS
    comm: list[tuple[float, float]] = []
    compute: list[tuple[float, float]] = []
    ts, dur = split.events.ts, split.events.dur

    def clipped(j: int) -> tuple[float, float]:
        return max(ts[j], start), min(ts[j] + dur[j], end)

    for j in split.per_step[k]:
        if split.device(j) == device:
            (comm if split.category(j) == COMM and split.shares is None else compute).append(clipped(j))
    dev = res.device(device)
    busy = dev.busy_ms if dev else 0.0
    other = dev.other_work_ms if dev and split.shares is None else 0.0
    if split.shares is not None:
        # a CPU thread: its collectives are ops inside others (DDP's all-reduce inside autograd's
        # node), on the same thread, so what they cover is communication and the rest compute;
        # the collective itself runs on gloo's thread, its range communication too
        comm = [clipped(j) for j, _ in split.shares[k]
                if split.device(j) == device and split.category(j) == COMM]
        compute = subtracted(merged(compute), merged(comm))
        comm += [(max(a, start), min(b, end)) for a, b in comm_ranges if a < end and b > start]
        busy = _length(merged(compute + comm)) / US_PER_MS
    return RankStep(
        step=res.name,
        wall_ms=res.wall_ms,
        busy_ms=busy,
        idle_ms=res.wall_ms - busy - other,
        other_work_ms=other,
        compute_ms=_length(merged(compute)) / US_PER_MS,
        comm_ms=_length(merged(comm)) / US_PER_MS,
        overlap_ms=intersection_length(merged(comm), merged(compute)) / US_PER_MS,
        categories=dict(dev.categories) if dev else {},
        past_recording_ms=res.past_recording_ms,
    )


def _length(ivs: list[tuple[float, float]]) -> float:
    return sum(b - a for a, b in ivs)
