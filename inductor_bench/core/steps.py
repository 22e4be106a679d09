"""A trace's columns split by profiler step, and one step's figures per device (or host
thread); pure, no torch. The rules are written out in ``analyze.py``.

Events are indices into the columns (``TraceColumns.device``, or ``.op`` on a CPU-only
trace); nothing here builds an object per event but the per-step index lists.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from math import inf

from . import categories
from .classify import classify
from .columns import ITERATION_MARKER, STEP_NAME, Events, Table, TraceColumns
from .compiled_calls import call_contexts
from .errors import NothingProfiled
from .first_few import first_few
from .host_wrappers import unnamed_wrappers
from .launches import link_launches
from .recording import PAST_RECORDING_MARGIN_US
from .timeline import Covered
from .trace import COMPILED_CALL, MODULE_CALL

WHOLE_TRACE = "whole trace"
ITERATION_STEP = "iteration"  # a step of a trace inductor-bench profiled: one iteration it marked
HOST_THREAD = "CPU thread "  # a CPU-only trace's rows: one per thread, "CPU thread 1234"
US_PER_MS = 1000.0
NO_OP_IN = "no op, in "  # a launcher where no op encloses the launch: the range it was made in


@dataclass
class StepEvents:
    """A trace's events split by step: ``per_step[k]`` holds the indices (in ``events``) of
    the device events (or, on a CPU-only trace, the top-level host ops) of ``windows[k]``."""

    windows: list[tuple[str, float, float]]  # (name, start, end on the CPU)
    per_step: list[Sequence[int]]
    outside: int  # device events launched outside every step
    events: Events  # ts, dur, name of each event
    names: list[str]  # name index -> name
    issued: Sequence[float]  # event -> when its launch was issued (its start on the host)
    row: Sequence[int]  # event -> index in ``rows``
    rows: list[str]  # device ("0") or host thread ("CPU thread 1234")
    kind: Sequence[int]  # event -> index in ``kinds``
    kinds: list[tuple[str, str | None]]  # (category, launched_by)
    # CPU-only traces: per step, (op, µs) of the time each op is given (an op that wraps
    # others keeps only what they leave uncovered); None on device traces (an event's own
    # duration)
    shares: list[list[tuple[int, float]]] | None = None
    # CPU-only traces: name id of a compiled graph's call record -> what it ran as ("backward")
    contexts: dict[int, str] = field(default_factory=dict)
    # device traces with GEMM shapes: event -> its launch's index in TraceColumns.launch (-1 none)
    launch: Sequence[int] | None = None
    recorded_end: float = inf  # where the profiler's own span ends (recording.py); inf: not written
    _covered: dict[int, Covered] = field(default_factory=dict, repr=False)
    _step_rows: list[int] | None = field(default=None, repr=False)

    def step_rows(self) -> list[int]:
        """The rows (devices, host threads) with an event in any step: every step has a
        figure for each, zero where it had nothing of its own."""
        if self._step_rows is None:
            row = self.row
            self._step_rows = sorted({row[j] for js in self.per_step for j in js})
        return self._step_rows

    def covered(self, r: int) -> Covered:
        """Row ``r``'s busy time over the whole trace, whichever step launched its work (on a
        device trace work launched outside every step too)."""
        if not self._covered:
            ts, dur, row = self.events.ts, self.events.dur, self.row
            js = range(len(ts)) if self.shares is None else (j for js in self.per_step for j in js)
            spans: dict[int, list[tuple[float, float]]] = {}
            for j in js:
                spans.setdefault(row[j], []).append((ts[j], ts[j] + dur[j]))
            self._covered.update((k, Covered(v)) for k, v in spans.items())
        return self._covered.get(r) or Covered(())

    def timed(self, k: int) -> Iterable[tuple[int, float]]:
        """(event, µs it is given) of step ``k``: a CPU-only trace's shares, else each event's
        own duration (generated, not kept: a device trace has millions)."""
        if self.shares is not None:
            return self.shares[k]
        dur = self.events.dur
        return ((j, dur[j]) for j in self.per_step[k])

    def category(self, i: int) -> str:
        return self.kinds[self.kind[i]][0]

    def device(self, i: int) -> str:
        return self.rows[self.row[i]]


def split_steps(c: TraceColumns) -> StepEvents:
    """Every device event by the step that launched it; on a CPU-only trace, the top-level
    ``cpu_op`` events of every thread by the step they start in."""
    if not len(c.device):
        return _host_steps(c)
    windows = _step_windows(c)
    links = link_launches(c)
    dev = c.device
    around = map(links.around.get, range(len(dev)), repeat(-1))
    kinds, kind = _kinds(c, zip(dev.name, links.stack, around, strict=True), links.stacks.values)
    per_step, outside = by_step(windows, range(len(dev)), links.issued)
    return StepEvents(windows, per_step, outside, dev, c.names.values, links.issued, dev.where,
                      c.devices.values, kind, kinds, launch=links.launch, recorded_end=c.recorded_end)


def _host_steps(c: TraceColumns) -> StepEvents:
    names = c.names.values
    op = c.op
    kinds, kind = _kinds(c, ((n, 0, -1) for n in op.name), [()])
    name_of_kind = dict(zip(kind, op.name, strict=True))  # each kind's op name id
    kinds = unnamed_wrappers(kinds, [names[name_of_kind[k]] for k in range(len(kinds))], names, op)
    # a compiled graph's call record stands aside where its C++ kernels are ops of their own
    # (kernel profiling on, as breakdown traces): its time outside them is the Python wrapper,
    # idle as breakdown counts the host. Where they are not (a user's trace), it wraps its
    # ops: its time outside them is those kernels and the wrapper.
    kernels_seen = any(category in categories.CPP_CATEGORIES for category, _ in kinds)
    skip = {i for i, n in enumerate(names) if STEP_NAME.match(n) or (
        MODULE_CALL.match(n) and (kernels_seen or not COMPILED_CALL.match(n)))}
    ops = [j for j, n in enumerate(op.name) if n not in skip]
    if not ops:
        raise NothingProfiled(
            f"{c.path or 'trace'}: no GPU activity (kernel / gpu_memcpy / gpu_memset events) "
            "and no CPU ops (cpu_op events): nothing to analyse " + _why_nothing(c) + _unfinished_words(c)
        )
    windows = _step_windows(c)
    wraps = {i for i, (category, _) in enumerate(kinds) if category in categories.WRAPPER_CATEGORIES}
    per_step, _ = by_step(windows, ops, op.ts)
    wrapping = [k in wraps for k in kind] if wraps else None
    split = [host_shares(js, op, wrapping) for js in per_step]
    rows = Table()
    thread_row = [rows[f"{HOST_THREAD}{tid}"] for _, tid in c.threads.values]
    row = [thread_row[t] for t in op.where]
    return StepEvents(windows, [top for top, _ in split], 0, op, names, op.ts, row, rows.values, kind,
                      kinds, [shares for _, shares in split], call_contexts(op, names, ops),
                      recorded_end=c.recorded_end)


def _why_nothing(c: TraceColumns) -> str:
    """Why a trace holds nothing to analyse: a profiler cycle that stopped early, or another
    tool's trace, whose events are all of categories torch.profiler does not write."""
    if c.kept or not c.unread_categories:
        return "(a profiler cycle that stopped before its active steps holds none)"
    shown = first_few(sorted(c.unread_categories), 5)
    return (f"(its events are of categories torch.profiler does not write: {shown}; "
            "not a torch.profiler trace?)")


def _unfinished_words(c: TraceColumns) -> str:
    n = sum(c.unfinished.values())
    return f"; {n} event(s) with a negative duration (unfinished) were left out" if n else ""


def host_shares(js: Sequence[int], op: Events,
                wraps: Sequence[bool] | None) -> tuple[list[int], list[tuple[int, float]]]:
    """Per thread, the top-level ops (by start, longest first: those that do not start inside
    an earlier one), and the time each op is given: an op its whole duration, the ops inside
    it included (``aten::resolve_conj`` inside ``aten::mm`` is ``aten::mm``'s), except an op
    that wraps others (``wraps[j]``: ``CompiledFunction``, ``Torch-Compiled Region``), which
    hands its time to the ops inside it and keeps what they leave uncovered. The shares of a
    top-level op add up to its duration."""
    threads: dict[int, list[int]] = {}
    for j in js:
        threads.setdefault(op.where[j], []).append(j)
    top: list[int] = []
    shares: list[tuple[int, float]] = []
    for ops in threads.values():
        _thread_shares(sorted(ops, key=lambda j: (op.ts[j], -op.dur[j])), op, wraps, top, shares)
    return top, shares


def _thread_shares(ops: list[int], op: Events, wraps: Sequence[bool] | None,
                   top: list[int], shares: list[tuple[int, float]]) -> None:
    """``host_shares`` for one thread's ops, by start (longest first)."""
    ts, dur = op.ts, op.dur
    open_wraps: list[list[float]] = []  # [end, j, its length, time the ops directly inside cover]
    owner_end = float("-inf")  # the end of the op (not a wrapper) that owns what starts in it
    for j in ops:
        t, end, length = ts[j], ts[j] + dur[j], dur[j]
        if t < owner_end:
            continue  # inside an op that is not a wrapper: its time is that op's
        while open_wraps and t >= open_wraps[-1][0]:
            _close(open_wraps.pop(), shares)
        if not open_wraps:
            top.append(j)
        else:
            if end > open_wraps[-1][0]:  # clipped to the wrapper, in a trace whose ops overlap
                end, length = open_wraps[-1][0], open_wraps[-1][0] - t
            open_wraps[-1][3] += length
        if wraps is not None and wraps[j]:
            open_wraps.append([end, j, length, 0.0])
        else:
            shares.append((j, length))
            owner_end = end
    while open_wraps:
        _close(open_wraps.pop(), shares)


def _close(wrap: list[float], shares: list[tuple[int, float]]) -> None:
    _, j, length, covered = wrap
    shares.append((int(j), max(length - covered, 0.0)))


def _kinds(c: TraceColumns, name_stack, stacks: list[tuple[str, ...]]):
    """(kinds, kind per event): an event's kind is its (name, launch stack, range around a
    launch no op encloses: -1 none), classified once."""
    table = Table()
    kind = array("i", map(table.__getitem__, name_stack))
    names = c.names.values
    kinds = []
    for n, s, r in table.values:
        name, stack = names[n], stacks[s]
        kinds.append((classify(name, None, ops=stack), _launcher(name, stack, names[r] if r >= 0 else None)))
    return kinds, kind


def _launcher(name: str, stack: tuple[str, ...], around: str | None = None) -> str | None:
    """The innermost op around the launch (a Triton kernel's own record function aside); where
    no op encloses it, the range it was launched in (``no op, in Optimizer.step#FusedAdam.step``)."""
    op = next((op for op in stack if op != name), None)
    return f"{NO_OP_IN}{around}" if op is None and around is not None else op


def by_step(windows, events, when: Sequence[float]) -> tuple[list[Sequence[int]], int]:
    """``events`` by the last window starting at or before ``when[event]``, and how many
    fell outside every window."""
    per_step: list[Sequence[int]] = [array("i") for _ in windows]  # 4 bytes an event
    outside = 0
    starts = [w[1] for w in windows]
    ends = [w[2] for w in windows]
    for j in events:
        t = when[j]
        k = bisect_right(starts, t) - 1
        if k >= 0 and t <= ends[k]:
            per_step[k].append(j)
        else:
            outside += 1
    return per_step, outside


def _step_windows(c: TraceColumns) -> list[tuple[str, float, float]]:
    """(name, start, end) of each ProfilerStep on the CPU, by start; without them, of each
    iteration inductor-bench's own profile marked (``ITERATION_MARKER``: a run directory's
    graph trace); the whole trace when there are neither."""
    if c.markers:
        return sorted((m[:3] for m in c.markers), key=lambda m: m[1])
    marker = c.names.get(ITERATION_MARKER)
    runs = sorted((ts, end) for name, ts, end, _ in c.regions if name == marker) if marker is not None else []
    if runs:
        return [(f"{ITERATION_STEP} {i}", ts, end) for i, (ts, end) in enumerate(runs, 1)]
    return [(WHOLE_TRACE, *c.span())]


# ---- one step ---------------------------------------------------------------------------


@dataclass
class DeviceFigures:
    """One device (or host thread) during one step. Times in µs; categories in ms."""

    device: str
    busy: float
    kernel_ms: float  # the categories' sum (in the order they were met)
    other_work: float  # idle of its own work, busy with work other steps (or none) launched
    waiting_on_cpu: float
    queued: float
    nothing_launched: float
    events: int
    categories: dict[str, float]  # category -> ms (summed durations), in category order


def step_end(split: StepEvents, k: int) -> float:
    """Where step ``k``'s window ends: the step on the CPU or its last device event."""
    ts, dur = split.events.ts, split.events.dur
    return max([split.windows[k][2], *(ts[j] + dur[j] for j in split.per_step[k])])


def recorded_step_end(split: StepEvents, k: int) -> tuple[float, float]:
    """(end, µs cut): ``step_end``, but where that lies more than the margin past the end of
    the profiler's recording (``recording.py``), the recording's end or the step's last event
    if later: nothing was recorded past it."""
    end = step_end(split, k)
    if end <= split.recorded_end + PAST_RECORDING_MARGIN_US:
        return end, 0.0
    ts, dur = split.events.ts, split.events.dur
    cut = max([split.windows[k][1], split.recorded_end, *(ts[j] + dur[j] for j in split.per_step[k])])
    return cut, end - cut


def step_devices(split: StepEvents, k: int, end: float) -> list[DeviceFigures]:
    """Step ``k``'s figures per device, devices in order."""
    start = split.windows[k][1]
    js, row = split.per_step[k], split.row
    rows = set(map(row.__getitem__, js))
    by_row: dict[int, Sequence[int]] = {rows.pop(): js} if len(rows) == 1 else {}
    if rows:  # several devices
        for j in js:
            by_row.setdefault(row[j], array("i")).append(j)
    for r in split.step_rows():  # a device with nothing of its own in this step: idle, not absent
        by_row.setdefault(r, ())
    labels = {split.rows[r]: r for r in by_row}
    shares: dict[int, list[tuple[int, float]]] | None = None  # a CPU-only trace's, by thread
    if split.shares is not None:
        shares = {}
        for j, us in split.shares[k]:
            shares.setdefault(row[j], []).append((j, us))
    return [_device(split, d, start, end, by_row[labels[d]], split.covered(labels[d]),
                    shares.get(labels[d], []) if shares is not None else None)
            for d in sorted(labels, key=device_order)]


def device_order(d: str) -> tuple[int, str]:
    return (int(d), d) if d.isdigit() else (1 << 30, d)


def _device(split: StepEvents, device: str, start: float, end: float, js: Sequence[int],
            covered: Covered, shares: list[tuple[int, float]] | None) -> DeviceFigures:
    """One device's (or thread's) figures: ``js`` its events (a thread's top-level ops);
    ``shares`` the time each op of a thread is given (``StepEvents.shares``; None: an event
    its own duration)."""
    ts, dur, kind, kinds = split.events.ts, split.events.dur, split.kind, split.kinds
    cats: dict[str, float] = {}
    # each event its own duration unless shares say otherwise (zip and map: no Python frame
    # per event, a device trace has millions)
    for j, us in zip(js, map(dur.__getitem__, js), strict=True) if shares is None else shares:
        c = kinds[kind[j]][0]
        cats[c] = cats.get(c, 0.0) + us / US_PER_MS
    busy, idle = _busy_and_idle(sorted(js, key=ts.__getitem__), start, end, split, covered)
    return DeviceFigures(
        device=device, busy=busy, kernel_ms=sum(cats.values()), other_work=idle.other,
        waiting_on_cpu=idle.cpu, queued=idle.queued, nothing_launched=idle.none,
        events=len(js), categories={c: cats[c] for c in sorted(cats, key=categories.order)},
    )


class _Idle:
    """A step's idle time on one device, split by cause (µs): each gap in its own work is
    first the device running work of other steps (``covered``), the rest by what the step's
    next event waited for."""

    def __init__(self, covered: Covered):
        self.covered = covered
        self.other = self.cpu = self.queued = self.none = 0.0

    def gap(self, a: float, b: float) -> float:
        """The part of ``[a, b)`` the device ran nothing in (the rest is other work)."""
        other = self.covered.within(a, b)
        self.other += other
        return (b - a) - other


def _busy_and_idle(js: list[int], start: float, end: float, split: StepEvents,
                   covered: Covered) -> tuple[float, _Idle]:
    """(busy, idle) in µs, in one pass over the events by start. Busy is the union of the
    events clipped to the window (``union_length``'s blocks, added in the same order). Idle:
    where the device ran other steps' work, other work; elsewhere each gap before an event is
    waiting on the CPU until that event's launch was issued, queued after; the gap after the
    last event is nothing launched."""
    ts, dur, issued = split.events.ts, split.events.dur, split.issued
    idle = _Idle(covered)
    busy = 0.0
    covered_to = start
    block_start = block_end = None  # the block of the union being built
    for j in js:
        t = ts[j]
        e = t + dur[j]
        if t > covered_to:
            cut = min(max(issued[j], covered_to), t)
            idle.cpu += idle.gap(covered_to, cut)
            idle.queued += idle.gap(cut, t)
        if e > covered_to:
            covered_to = e
        s, f = (t if t > start else start), (e if e < end else end)
        if f > s:
            if block_end is None or s > block_end:
                if block_end is not None:
                    busy += block_end - block_start
                block_start, block_end = s, f
            elif f > block_end:
                block_end = f
    if block_end is not None:
        busy += block_end - block_start
    if end > covered_to:
        idle.none += idle.gap(covered_to, end)
    return busy, idle
