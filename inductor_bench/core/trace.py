"""Kineto chrome traces (``.json`` / ``.json.gz``) as plain events; no torch import.

Traces of real models reach hundreds of MB to GBs, so ``load_trace`` never holds the
whole document: it reads the file in chunks, and msgspec decodes the ``traceEvents`` list
run by run into typed structs that name only the fields an ``Event`` keeps (see
``jsonstream``). Only complete (``"ph": "X"``) events that pass the optional filters are
kept, so memory grows with the events kept, not with the file.

Device activity is linked to the CPU op that launched it through ``args.correlation``
(the kernel and its ``cuda_runtime``/``cuda_driver`` launch share it); flow events
(``"ph": "s"/"f"``) are not needed and often missing.
"""

from __future__ import annotations

import functools
import gc
import gzip
import json
import math
import re
import zlib
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Any, BinaryIO, Union

import msgspec

from .column_types import Column, NotAnId
from .errors import TraceError
from .jsonstream import OneSink, RunSink, Source, walk_document
from .recording import PROFILER_SPAN, recording_end

try:  # ISA-L's inflate, about 3x zlib's (a dependency; stdlib gzip if it is missing)
    from isal import igzip as _gzip
    from isal.isal_zlib import error as _InflateError
except ImportError:  # pragma: no cover
    _gzip = gzip  # type: ignore[no-redef]
    _InflateError = zlib.error  # type: ignore[misc]

# The record function torch (>= 2.9) wraps each compiled module's call in
# ("## Call CompiledFxGraph <key> ##"): it only wraps, the ops and kernels inside it are the call's.
MODULE_CALL = re.compile(r"^## .* ##$")
# That record of a compiled graph's call: a cpu_op in most traces, a user_annotation in some
# (an inference loop profiled without a schedule, torch 2.13).
COMPILED_CALL = re.compile(r"^## Call CompiledFxGraph \S+ ##$")
EVENT_TS, EVENT_DUR = attrgetter("ts"), attrgetter("dur")  # an event's start and duration
# The dur of a complete event that writes none: zero, but negative zero, so that a device event
# whose time is not known can be told from one that lasted nothing (core/left_out.py)
NO_DUR = -0.0

# Category names as kineto writes them since torch 2.0, and older spellings mapped to them.
CPU_OP = "cpu_op"
ID_ARGS = ("correlation", "External id")  # args that match launches, kernels and ops: numbers or strings
USER_ANNOTATION = "user_annotation"
GPU_USER_ANNOTATION = "gpu_user_annotation"
KERNEL = "kernel"
GPU_MEMCPY = "gpu_memcpy"
GPU_MEMSET = "gpu_memset"
CUDA_RUNTIME = "cuda_runtime"
CUDA_DRIVER = "cuda_driver"
_CATEGORY_ALIASES = {
    "Kernel": KERNEL,
    "Memcpy": GPU_MEMCPY,
    "Memset": GPU_MEMSET,
    "Runtime": CUDA_RUNTIME,
    "Driver": CUDA_DRIVER,
    "Operator": CPU_OP,
}
DEVICE_CATEGORIES = frozenset({KERNEL, GPU_MEMCPY, GPU_MEMSET})
LAUNCH_CATEGORIES = frozenset({CUDA_RUNTIME, CUDA_DRIVER})
# What the breakdown reads; everything else (python_function, Trace, ...) can be dropped.
ANALYSIS_CATEGORIES = frozenset({CPU_OP, USER_ANNOTATION}) | DEVICE_CATEGORIES | LAUNCH_CATEGORIES
PYTHON_FUNCTION = "python_function"  # a Python call, recorded with with_stack=True
# What analyze's columns read: the breakdown's, Python's calls (core/host_python.py), the span
COLUMN_CATEGORIES = ANALYSIS_CATEGORIES | {PYTHON_FUNCTION, PROFILER_SPAN}
# the args the launch links read, and a shaped op's recorded arguments (record_shapes:
# core/recorded_shapes.py), from the third on in the order of core/columns.py's shape_args
ANALYSIS_ARGS = ("correlation", "External id", "Input Dims", "Input type", "Concrete Inputs", "Input Strides")

# Bytes read per chunk: large enough that runs are long, small next to a trace.
CHUNK_BYTES = 8 << 20
CHUNK_CHARS = CHUNK_BYTES  # the former name
_GZIP_MAGIC = b"\x1f\x8b"
# Every phase of the trace event format but "X" (complete events).
OTHER_PHASES = "BEiICbneSTpFstfPONDMVvRc()"


class Event(msgspec.Struct, gc=False):
    """One complete (``"ph": "X"``) trace event. Times in microseconds.

    A msgspec struct (built from C, without the cyclic GC tracking that a dataclass costs
    per object): construction, fields, equality and ``repr`` are those of a dataclass.
    """

    name: str
    cat: str
    ts: float
    dur: float
    pid: int | str
    tid: int | str
    args: dict[str, Any]

    @property
    def end(self) -> float:
        return self.ts + self.dur


@dataclass
class Trace:
    events: list[Event]  # complete events only, in file order
    device_properties: list[dict[str, Any]] = field(default_factory=list)
    base_time_ns: int | None = None
    path: str = ""
    # where the profiler's own span ends (core/recording.py), read by ``load_for_analysis``
    # though its events leave the span out; inf: not read, or not written
    recorded_end: float = math.inf


KeepFn = Callable[[Event], bool]


def keep_for_analysis(event: Event) -> bool:
    """A ``keep`` predicate that drops what the breakdown never reads."""
    return event.cat in ANALYSIS_CATEGORIES


def load_for_analysis(path: str | Path) -> Trace:
    """``load_trace`` keeping only the events and args the breakdown reads, and where the
    profiler's recording ends (``Trace.recorded_end``: analyze's steps stop there)."""
    trace = load_trace(path, categories=ANALYSIS_CATEGORIES | {PROFILER_SPAN}, args=ANALYSIS_ARGS)
    trace.recorded_end, trace.events, _ = recording_end(trace.events, [e.cat for e in trace.events], math.inf)
    return trace


def load_trace(
    path: str | Path,
    keep: KeepFn | None = None,
    *,
    categories: Collection[str] | None = None,
    args: Collection[str] | None = None,
    chunk_chars: int = CHUNK_BYTES,
) -> Trace:
    """Read a kineto chrome trace, streaming its ``traceEvents``.

    ``keep`` sees every complete event and returns False to drop it at once;
    ``categories``, when given, drops events of other categories before an ``Event`` is
    even built (the cheap way to skip ``python_function`` and the like); ``args``, when
    given, names the only ``args`` keys kept on each event (kernel events carry a dozen),
    and the others are skipped by the decoder without being built. ``chunk_chars`` is the
    size of one read, in bytes of (decompressed) JSON.
    Raises ``TraceError`` for a missing file, a file that is not (gzipped) JSON, or a
    JSON document without a ``traceEvents`` list.
    """
    p = Path(path)
    keys = tuple(dict.fromkeys(args)) if args is not None else None
    maker = EventMaker(p, categories, keys, keep)
    top = stream_trace(p, maker.decoder, maker.run, maker.one, chunk_chars)
    return Trace(
        events=maker.events,
        device_properties=device_properties(top.get("deviceProperties")),
        base_time_ns=base_time(top.get("baseTimeNanoseconds")),
        path=str(p),
    )


def stream_trace(
    p: Path, decoder: msgspec.json.Decoder, on_run: RunSink, on_one: OneSink,
    chunk_chars: int = CHUNK_BYTES,
) -> dict[str, Any]:
    """Stream the ``traceEvents`` of the trace at ``p`` into ``on_run`` (runs decoded by
    ``decoder``) and ``on_one`` (elements it refused); return the other top-level keys.
    The errors of ``load_trace``."""
    if not p.is_file():  # never opened: a FIFO would wait for a writer, a device never end
        what = "not a regular file (a directory, device, FIFO or socket)"
        raise TraceError(f"{p}: {what if p.exists() else 'no such trace file'}")
    top: dict[str, Any] = {}
    # Nothing built here forms a reference cycle (what a ``keep`` predicate leaves is
    # collected afterwards); collecting while a million events and their args dicts are
    # created would only walk them again and again.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        f, gzipped = _open_binary(p)
        if not gzipped:  # no buffer larger than the file
            chunk_chars = min(chunk_chars, p.stat().st_size)
        with f:
            walk_document(Source(f, chunk_chars, p), decoder, on_run, on_one, top)
    except (OSError, EOFError, zlib.error, _InflateError, UnicodeDecodeError) as e:
        raise TraceError(f"{p}: not readable as a (gzipped) JSON trace ({_reason(e)})") from None
    finally:
        if gc_was_enabled:
            gc.enable()
    return top


def _reason(e: BaseException) -> str:
    return str(e) or type(e).__name__


def _open_binary(p: Path) -> tuple[BinaryIO, bool]:
    """The file, decompressed as it is read when gzipped (known by its magic bytes, not its
    name), and whether it is."""
    with open(p, "rb") as f:
        magic = f.read(2)
    if magic == _GZIP_MAGIC:
        return _gzip.open(p, "rb"), True  # type: ignore[return-value]
    return open(p, "rb"), False


def device_properties(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, list):
        return [d for d in value if isinstance(d, dict)]
    return []


def base_time(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):  # 1e999 in the file
        return None
    return int(value)


@functools.lru_cache(maxsize=32)
def _decoder(keys: tuple[str, ...] | None) -> tuple[msgspec.json.Decoder, type]:
    """A decoder of a list of raw events, and the struct it builds for complete events.

    The struct names only the fields an ``Event`` needs; with ``keys``, ``args`` is a
    struct of those keys alone (UNSET where absent, None when the event has no args).
    The list is a union tagged by ``ph``: events of the other phases (flows, metadata,
    instants ...) become empty structs, none of their fields built. Numbers written as
    strings are read as numbers (``strict=False``); an event this decoder refuses (no
    ``ts``, ``"ts": "soon"``, args that are not an object ...) is left to ``one``."""
    if keys is None:
        args: tuple[Any, ...] = ("args", dict[str, Any], {})
    else:
        names = [f"a{i}" for i in range(len(keys))]
        raw_args = msgspec.defstruct(
            "RawArgs", [(n, Any, msgspec.UNSET) for n in names],
            rename=dict(zip(names, keys, strict=True)), gc=False,
        )
        args = ("args", raw_args | None, None)
    complete = msgspec.defstruct(
        "RawEvent",
        [("ts", float), ("cat", str, ""), ("name", str, ""), ("dur", float, NO_DUR),
         ("pid", int | str, 0), ("tid", int | str, 0), args],
        tag_field="ph", tag="X", gc=False,
    )
    others = [msgspec.defstruct(f"RawPhase{i}", [], tag_field="ph", tag=ph, gc=False)
              for i, ph in enumerate(OTHER_PHASES)]
    return msgspec.json.Decoder(list[Union[(complete, *others)]], strict=False), complete  # noqa: UP007


class _Canon(dict):
    """Category as read -> the one string kept for it, old spellings mapped."""

    def __missing__(self, cat: str) -> str:
        self[cat] = new = _CATEGORY_ALIASES.get(cat, cat)
        return new


def category_map(categories: Collection[str]) -> dict[str, str]:
    """Each raw spelling of ``categories`` (old ones included) -> the name kept for it."""
    return {c: c for c in categories} | {
        old: new for old, new in _CATEGORY_ALIASES.items() if new in categories}


def not_finite(path: Any, name: Any, ts: float, dur: float) -> TraceError:
    """An event whose time is no finite number: every sum over it would be one too."""
    return TraceError(f"{path}: complete event {name!r} has a ts or dur that is not finite "
                      f"(ts {ts}, dur {dur})")


def not_an_id(path: Any, name: Any, field: str, value: Any) -> TraceError:
    """An event whose id ``field`` (a correlation, an External id, a pid or tid) is an object
    or a list: nothing can be matched by it."""
    return TraceError(f"{path}: event {name!r}: {field} is not an id (a number or a string) "
                      f"but {type(value).__name__} {json.dumps(value)[:40]}")


def finite_times(path: Any, xs: list[Any]) -> None:
    """``not_finite`` for the first of ``xs`` (complete events) whose ts or dur is no finite
    number ("inf" and "NaN" read as numbers): one C-level sum per field finds whether one is."""
    if math.isfinite(sum(map(EVENT_TS, xs)) + sum(map(EVENT_DUR, xs))):
        return
    for x in xs:
        if not (math.isfinite(x.ts) and math.isfinite(x.dur)):
            raise not_finite(path, x.name, x.ts, x.dur)


def extend_ids(path: Any, column: Column, xs: list[Any], values: list[Any], key: str) -> None:
    """``values`` (the ``key`` arg of each of ``xs``) appended to ``column``; ``not_an_id``
    for one that is an object or a list."""
    try:
        column.extend(values)
    except NotAnId as e:
        raise not_an_id(path, xs[e.at].name, f"args.{key}", e.value) from None


class EventMaker:
    """Raw events -> kept ``Event``s, in file order. Names, categories and ids repeat
    across iterations: each distinct value is stored once."""

    def __init__(
        self, path: Path, categories: Collection[str] | None, keys: tuple[str, ...] | None,
        keep: KeepFn | None,
    ) -> None:
        self.path = path
        self.categories = frozenset(categories) if categories is not None else None
        self.decoder, self.complete = _decoder(keys)
        # categories mode: exactly the raw spellings that pass, old ones included
        self.canon = _Canon() if self.categories is None else category_map(self.categories)
        self.keys = keys
        self.keep = keep
        self.strings: dict[Any, Any] = {}
        self.events: list[Event] = []

    def run(self, raws: list[Any]) -> None:
        """A run from the typed decoder (the hot path: one comprehension, no call per
        event but ``Event``, the interning and the args dict)."""
        complete, canon, intern = self.complete, self.canon, self.strings.setdefault
        if self.categories is None:
            xs = [r for r in raws if r.__class__ is complete]
        else:
            xs = [r for r in raws if r.__class__ is complete and r.cat in canon]
        if self.keys is None:
            evs = [Event(intern(r.name, r.name), canon[r.cat], r.ts, r.dur, intern(r.pid, r.pid),
                         intern(r.tid, r.tid), r.args) for r in xs]
        else:  # RawArgs -> the dict of the keys present (UNSET ones left out); None -> {}
            to_dict = msgspec.to_builtins
            evs = [Event(intern(r.name, r.name), canon[r.cat], r.ts, r.dur, intern(r.pid, r.pid),
                         intern(r.tid, r.tid), to_dict(r.args) or {}) for r in xs]
        if self.keep is not None:
            evs = [e for e in evs if self.keep(e)]
        self.events += evs

    def one(self, raw: Any) -> None:
        """One element as ``json.loads`` decoded it (an element the typed decoder refused)."""
        if not isinstance(raw, dict) or raw.get("ph") != "X":
            return
        name, cat = raw.get("name", ""), raw.get("cat", "")
        try:
            if self.categories is not None and cat not in self.canon:
                return
            cat = self.canon[cat]
        except TypeError:  # a category that is a list or an object
            raise self._bad(name) from None
        if not isinstance(name, str):  # a number, a list, an object: no kernel or op is named so
            raise TraceError(f"{self.path}: a complete event's name is not a string but "
                             f"{type(name).__name__} {json.dumps(name)[:40]}")
        name = self.strings.setdefault(name, name)
        args = raw.get("args")
        if not isinstance(args, dict):
            args = {}
        elif self.keys is not None:
            args = {k: args[k] for k in self.keys if k in args}
        for key in ID_ARGS:  # ids that launches and kernels are matched by
            if isinstance(args.get(key), (dict, list)):
                raise not_an_id(self.path, name, f"args.{key}", args[key])
        ids = {key: raw.get(key, 0) for key in ("pid", "tid")}  # a device, a thread
        for key, value in ids.items():
            if isinstance(value, (dict, list)):
                raise not_an_id(self.path, name, key, value)
        ts, dur = self._numbers(name, raw.get("ts"), raw.get("dur", NO_DUR))
        ev = Event(name, cat, ts, dur, ids["pid"], ids["tid"], args)
        if self.keep is None or self.keep(ev):
            self.events.append(ev)

    def _numbers(self, name: Any, ts: Any, dur: Any) -> tuple[float, float]:
        try:
            ts, dur = float(ts), float(dur)
        except (TypeError, ValueError, OverflowError):  # OverflowError: an int past a float's range
            raise self._bad(name) from None
        if not (math.isfinite(ts) and math.isfinite(dur)):  # "inf", "NaN", 1e999
            raise not_finite(self.path, name, ts, dur)
        return ts, dur

    def _bad(self, name: Any) -> TraceError:
        return TraceError(
            f"{self.path}: complete event {name!r} has no numeric ts/dur "
            f"or a name that is not a string (after {len(self.events)} events kept)"
        )
