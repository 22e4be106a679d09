"""A trace as the step analysis (``analyze.py``) reads it: compact columns, not one Python
object per event; pure, no torch.

A kernel-heavy trace of 1 GB holds millions of events; kept as ``Event`` objects with their
args dicts they take about 2.5x the file. Here each kind of event the analysis reads is a
set of ``array`` columns in file order (8 bytes per time, 4 per interned name or thread,
8 per correlation / External id), filled run by run from the typed decoder's structs with
C-level ``map`` / ``compress`` calls, so memory is about 40 bytes per event kept:

- ``device``: kernel, gpu_memcpy and gpu_memset events (name, ts, dur, device, correlation,
  External id);
- ``launch``: cuda_runtime and cuda_driver events (ts, dur, thread, correlation);
- ``op``: cpu_op events (name, ts, dur, thread, External id); of a GEMM, convolution or attention
  op (``recorded_shapes.SHAPED_OPS``) recorded with ``record_shapes``, its input shapes, types,
  scalar values and strides too (``shape_args``);
- ``markers``: the ``ProfilerStep#N`` ranges (user_annotation or cpu_op); ``span()`` is that
  of every event kept (the window of a trace without steps).

A correlation or External id that is absent is stored as ``MISSING``; one that is not a
64-bit integer (a float, a string, null ..., or ``MISSING``'s own value) as ``MISSING`` too,
with its value in the column's ``odd`` dict, so that lookups match exactly what a dict of
the values would.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import compress
from operator import add, attrgetter, not_
from pathlib import Path
from typing import Any

from .column_decoder import (
    analysis_decoder,
    frozen,
    struct_correlations,
    struct_external_ids,
    struct_shape_args,
)
from .column_types import MISSING, Devices, Events, Table, interned
from .left_out import finished, timed, undurated, untimed
from .memory import INSTANT_CATEGORY, MEMORY_EVENT, MemoryColumns
from .range_starts import RANGE_ENTER, Ranges, restore_range_starts
from .recorded_shapes import SHAPED_OPS
from .recording import recording_end
from .trace import (
    ANALYSIS_ARGS,
    CHUNK_BYTES,
    COLUMN_CATEGORIES,
    COMPILED_CALL,
    CPU_OP,
    DEVICE_CATEGORIES,
    EVENT_DUR,
    EVENT_TS,
    LAUNCH_CATEGORIES,
    PROFILER_SPAN,
    PYTHON_FUNCTION,
    USER_ANNOTATION,
    Event,
    EventMaker,
    base_time,
    category_map,
    device_properties,
    extend_ids,
    finite_times,
    stream_trace,
)

STEP_NAME = re.compile(r"^ProfilerStep#(\d+)$")
ITERATION_MARKER = "inductor_bench::iteration"  # each iteration of a breakdown's profile
BUILTIN = "<built-in>"
_HOST = frozenset({CPU_OP}) | LAUNCH_CATEGORIES
_MARKER_CATEGORIES = frozenset({CPU_OP, USER_ANNOTATION})
EVENT_CAT = attrgetter("cat")


class _Names(Table):
    """Event names; ``steps`` holds the indices of ``ProfilerStep#N`` names."""

    def __init__(self) -> None:
        super().__init__()
        self.steps: set[int] = set()
        self.step_names: set[str] = set()

    def __missing__(self, name: str) -> int:
        i = super().__missing__(name)
        if STEP_NAME.match(name):
            self.steps.add(i)
            self.step_names.add(name)
        return i


@dataclass
class TraceColumns:
    path: str = ""
    names: _Names = field(default_factory=_Names)  # name -> index
    devices: Table = field(default_factory=Table)  # str(pid) of a device event -> index
    threads: Table = field(default_factory=Table)  # (pid, tid) of a CPU event -> index
    device: Events = field(default_factory=Events)
    launch: Events = field(default_factory=Events)
    op: Events = field(default_factory=Events)
    python: Events = field(default_factory=Events)  # python_function calls (a built-in's name: BUILTIN)
    # (name, start, end, thread index), file order
    markers: list[tuple[str, float, float, int]] = field(default_factory=list)
    # the other user annotations (record_function ranges: a loop's "forward", torch's
    # "Optimizer.step#SGD.step"): (name index, start, end, thread index), file order
    regions: list[tuple[int, float, float, int]] = field(default_factory=list)
    memory: MemoryColumns = field(default_factory=MemoryColumns)  # profile_memory's events
    # op index -> (Input Dims, Input type, Concrete Inputs, Input Strides) of a shaped op recorded
    # with record_shapes, as tuples, each distinct one held once (a loop repeats them every step)
    shape_args: dict[int, tuple[Any, Any, Any, Any]] = field(default_factory=dict)
    first: float = math.inf  # the earliest start of the events not in the columns
    last: float = -math.inf  # their latest end
    kept: int = 0
    # the names of the ranges written at their end, their start restored (range_starts.py)
    restarted_ranges: list[str] = field(default_factory=list)
    device_properties: list[dict[str, Any]] = field(default_factory=list)
    base_time_ns: int | None = None
    # name -> how many of its events were left out for a negative duration: unfinished when
    # the profiler stopped (kineto writes -1 for such a CPU event); file order
    unfinished: dict[str, int] = field(default_factory=dict)
    untimed: dict[str, int] = field(default_factory=dict)  # name -> device events, launches at ts 0, dur 0
    untimed_device: int = 0  # how many of those were device events
    no_dur: dict[str, int] = field(default_factory=dict)  # name -> its device events with no dur
    recorded_end: float = math.inf  # where the profiler's own span ends (recording.py); inf: not written
    # the categories written on the events not read (another tool's trace holds only such)
    unread_categories: set[str] = field(default_factory=set)

    def span(self) -> tuple[float, float]:
        """The earliest start and the latest end of every event kept."""
        first, last = [self.first], [self.last]
        for evs in (self.device, self.launch, self.op):
            if len(evs):
                first.append(min(evs.ts))
                last.append(max(map(add, evs.ts, evs.dur)))
        return min(first), max(last)


Getter = Callable[[list[Any]], list[Any]]  # events -> each one's correlation (or External id)


class ColumnFiller:
    """Kept events (raw structs or ``Event``s) -> the columns of ``out``. Each field of a
    run is taken with one C-level ``map`` and appended with ``array.fromlist``."""

    def __init__(self, out: TraceColumns, corr: Getter, ext: Getter, shapes: Getter) -> None:
        self.out = out
        self.corr, self.ext, self.shapes = corr, ext, shapes
        self.pid_device = Devices(out.devices)
        self.shaped_names: set[int] = set()  # name ids of SHAPED_OPS
        self.named: set[int] = set()  # name ids already looked at
        self.triples: dict[tuple[Any, ...], tuple[Any, ...]] = {}  # shapes, types, values, strides: each once

    def add(self, xs: list[Any], cats: list[str]) -> None:
        """``xs``: events of the analysis' categories, ``cats`` their categories."""
        if not xs:
            return
        out = self.out
        if PROFILER_SPAN in cats:  # the profiler's own span: where its recording ends, and no more
            out.recorded_end, xs, cats = recording_end(xs, cats, out.recorded_end)
        # times first (a dur of "-inf" would read as unfinished); an instant's ts is memory.py's
        finite_times(out.path, xs if INSTANT_CATEGORY not in cats
                     else [x for x, c in zip(xs, cats, strict=True) if c != INSTANT_CATEGORY])
        if 0.0 in map(EVENT_DUR, xs):  # a zero dur, or none written (NO_DUR): one pass in C
            xs, cats = undurated(out.no_dur, xs, cats)
        if min(map(EVENT_DUR, xs), default=0) < 0:  # one pass in C per run; rare
            xs, cats = finished(out.unfinished, xs, cats)
        if 0.0 in map(EVENT_TS, xs):  # likewise: a device event or launch that lost its times
            xs, cats, device = timed(out.untimed, xs, cats)
            out.untimed_device += device
        out.kept += len(xs)
        has_annotations = USER_ANNOTATION in cats
        if has_annotations:  # the span of the other kinds is read from their columns
            anns = list(compress(xs, map(USER_ANNOTATION.__eq__, cats)))
            names = interned(out.names, [a.name for a in anns])  # a step's name is known as one
            calls = [COMPILED_CALL.match(a.name) is not None for a in anns]
            threads = interned(out.threads, [(a.pid, a.tid) for a in anns])
            out.regions += [(n, a.ts, a.ts + a.dur, t)
                            for n, a, call, t in zip(names, anns, calls, threads, strict=True)
                            if not call and n not in out.names.steps]
            out.first = min(out.first, min([a.ts for a in anns]))
            out.last = max(out.last, max([a.ts + a.dur for a in anns]))
            if any(calls):  # rare: the chunk is walked only then
                cats = _compiled_calls_as_ops(xs, cats)
        if PYTHON_FUNCTION in cats:  # only a trace recorded with with_stack has them
            self._python(list(compress(xs, map(PYTHON_FUNCTION.__eq__, cats))))
        if INSTANT_CATEGORY in cats:  # only a trace recorded with profile_memory has them
            out.memory.add_instants(list(compress(xs, map(INSTANT_CATEGORY.__eq__, cats))), MISSING)
        dev = list(compress(xs, map(DEVICE_CATEGORIES.__contains__, cats)))
        if dev:
            where = interned(self.pid_device, [x.pid for x in dev])
            self._extend(out.device, dev, where, corr=True, ext=True)
        host_mask = list(map(_HOST.__contains__, cats))
        op_names: list[int] = []
        if any(host_mask):
            op_names = self._host(list(compress(xs, host_mask)), list(compress(cats, host_mask)))
        if has_annotations or not out.names.steps.isdisjoint(op_names):
            out.markers += [(r.name, r.ts, r.ts + r.dur, out.threads[(r.pid, r.tid)]) for r in
                            compress(xs, map(_MARKER_CATEGORIES.__contains__, cats))
                            if r.name in out.names.step_names]

    def _host(self, host: list[Any], cats: list[str]) -> list[int]:
        """cpu_op and launch events (threads interned in file order); the ops' name ids."""
        out = self.out
        threads = interned(out.threads, [(x.pid, x.tid) for x in host])
        is_op = list(map(CPU_OP.__eq__, cats))
        ops = list(compress(host, is_op))
        names: list[int] = []
        if ops:
            first = len(out.op)
            names = self._extend(out.op, ops, list(compress(threads, is_op)), corr=False, ext=True)
            self._shape_args(ops, names, first)
        if len(ops) < len(host):
            is_launch = list(map(not_, is_op))
            launches = list(compress(host, is_launch))
            out.launch.ts.fromlist([x.ts for x in launches])
            out.launch.dur.fromlist([x.dur for x in launches])
            out.launch.where.fromlist(list(compress(threads, is_launch)))
            out.launch.name.fromlist(interned(out.names, [x.name for x in launches]))
            extend_ids(out.path, out.launch.corr, launches, self.corr(launches), "correlation")
        return names

    def _python(self, calls: list[Any]) -> None:
        """Python's calls; a built-in's name (which holds an object's address) as ``BUILTIN``:
        it only ever stands for its caller (``host_python.layer_of``); the one that opens a
        ``record_function`` range as ``RANGE_ENTER``."""
        names = [(RANGE_ENTER if "_record_function_enter" in x.name else BUILTIN)
                 if x.name.startswith("<built-in") else x.name for x in calls]
        py = self.out.python
        py.name.fromlist(interned(self.out.names, names))
        py.ts.fromlist([x.ts for x in calls])
        py.dur.fromlist([x.dur for x in calls])
        py.where.fromlist(interned(self.out.threads, [(x.pid, x.tid) for x in calls]))

    def _shape_args(self, ops: list[Any], names: list[int], first: int) -> None:
        """The recorded arguments of the shaped ops among ``ops`` (the op column's from ``first``)."""
        new = set(names) - self.named
        if new:
            self.named |= new
            values = self.out.names.values
            self.shaped_names |= {n for n in new if values[n] in SHAPED_OPS}
        if not self.shaped_names or self.shaped_names.isdisjoint(names):
            return
        at = list(compress(range(len(ops)), map(self.shaped_names.__contains__, names)))
        for i, args in zip(at, self.shapes([ops[i] for i in at]), strict=True):
            if isinstance(args[0], tuple) and isinstance(args[1], tuple):  # dims and types
                self.out.shape_args[first + i] = self.triples.setdefault(args, args)

    def _extend(self, evs: Events, xs: list[Any], where: list[int], *, corr: bool, ext: bool) -> list[int]:
        names = interned(self.out.names, [x.name for x in xs])
        evs.name.fromlist(names)
        evs.ts.fromlist([x.ts for x in xs])
        evs.dur.fromlist([x.dur for x in xs])
        evs.where.fromlist(where)
        if corr:
            extend_ids(self.out.path, evs.corr, xs, self.corr(xs), "correlation")
        if ext:
            extend_ids(self.out.path, evs.ext, xs, self.ext(xs), "External id")
        return names

    def add_events(self, events: list[Event]) -> None:
        """``Event``s (every category: the span covers them all, as a trace's window, but for
        those ``add`` leaves out for carrying no time and the profiler's own span)."""
        spanned = [ev for ev in events if ev.cat != PROFILER_SPAN and not untimed(ev, ev.cat)]
        if spanned:
            self.out.first = min(self.out.first, min(map(EVENT_TS, spanned)))
            self.out.last = max(self.out.last, max(map(add, map(EVENT_TS, spanned), map(EVENT_DUR, spanned))))
        kept = [ev for ev in events if ev.cat in COLUMN_CATEGORIES]
        self.add(kept, [ev.cat for ev in kept])


def event_filler(out: TraceColumns) -> ColumnFiller:
    """A filler of ``out`` from ``Event``s (their args a dict)."""
    return ColumnFiller(out, lambda evs: [ev.args.get("correlation", MISSING) for ev in evs],
                        lambda evs: [ev.args.get("External id", MISSING) for ev in evs],
                        lambda evs: [tuple(frozen(ev.args.get(k)) for k in ANALYSIS_ARGS[2:]) for ev in evs])


def columns_of_events(events: list[Event], path: str = "") -> TraceColumns:
    """The columns of a loaded trace's events."""
    out = TraceColumns(path=path)
    event_filler(out).add_events(events)
    return _restored(out)


def load_columns(path: str | Path, chunk_bytes: int = CHUNK_BYTES) -> TraceColumns:
    """Read a trace straight into columns (what ``load_for_analysis`` keeps, without an
    ``Event`` per event). The errors of ``load_trace``."""
    p = Path(path)
    out = TraceColumns(path=str(p))
    decoder, _ = analysis_decoder()
    canon = category_map(COLUMN_CATEGORIES) | {INSTANT_CATEGORY: INSTANT_CATEGORY}
    filler = ColumnFiller(out, struct_correlations, struct_external_ids, struct_shape_args)
    odd, odd_filler = EventMaker(p, COLUMN_CATEGORIES, ANALYSIS_ARGS, None), event_filler(out)

    def run(raws: list[Any]) -> None:
        cats = [canon.get(x.cat) for x in raws]  # None: not read
        if None in cats:  # one pass in C: the categories met, less those read (at the end)
            out.unread_categories.update(map(EVENT_CAT, raws))
        filler.add(list(compress(raws, cats)), list(filter(None, cats)))

    def one(raw: Any) -> None:
        if isinstance(raw, dict) and raw.get("ph") == "i" and raw.get("name") == MEMORY_EVENT:
            out.memory.add_raw(raw)
        odd.one(raw)
        kept = odd.events[:]
        odd.events.clear()
        odd_filler.add(kept, [ev.cat for ev in kept])

    top = stream_trace(p, decoder, run, one, chunk_bytes)
    out.device_properties = device_properties(top.get("deviceProperties"))
    out.base_time_ns = base_time(top.get("baseTimeNanoseconds"))
    out.unread_categories -= canon.keys() | {""}
    return _restored(out)


def _restored(out: TraceColumns) -> TraceColumns:
    """``out`` with the starts of its ranges written at their end restored (``range_starts.py``)."""
    ranges = Ranges(out.names, out.python, out.op, out.markers, out.regions)
    out.restarted_ranges = restore_range_starts(ranges)
    return out


def _compiled_calls_as_ops(xs: list[Any], cats: list[str]) -> list[str]:
    """``cats`` with each compiled graph's call record (``## Call CompiledFxGraph <key> ##``)
    an op, as most traces have it, where this one wrote it as a user annotation."""
    return [CPU_OP if c == USER_ANNOTATION and COMPILED_CALL.match(x.name) else c
            for x, c in zip(xs, cats, strict=True)]

