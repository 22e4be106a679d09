"""Kineto chrome traces (``.json`` / ``.json.gz``) as plain events; no torch import.

Traces of real models reach hundreds of MB to GBs, so ``load_trace`` never holds the
whole document: it streams the ``traceEvents`` array chunk by chunk, decoding one event
at a time, and keeps only complete (``"ph": "X"``) events that pass an optional ``keep``
predicate. Memory therefore grows with the events kept, not with the file.

Device activity is linked to the CPU op that launched it through ``args.correlation``
(the kernel and its ``cuda_runtime``/``cuda_driver`` launch share it); flow events
(``"ph": "s"/"f"``) are not needed and often missing.
"""

from __future__ import annotations

import gzip
import json
import json.scanner
import re
import zlib
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from .errors import TraceError

# Category names as kineto writes them since torch 2.0, and older spellings mapped to them.
CPU_OP = "cpu_op"
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
ANALYSIS_ARGS = ("correlation", "External id")  # the args the launch links read

# Characters read per chunk: large enough that refills are rare, small next to a trace.
CHUNK_CHARS = 4 << 20
# No single trace event comes near this size; a value still unfinished beyond it means a
# malformed file, and reading on would only load the rest of the file into memory.
MAX_VALUE_CHARS = 64 << 20

# A decode error this close to the end of the buffer may just be a value cut in two
# (the longest JSON token that can be cut, "-Infinity", is 9 characters).
_CUT_MARGIN = 16
_GZIP_MAGIC = b"\x1f\x8b"
_WS = re.compile(r"[ \t\n\r]*")
_scan = json.scanner.make_scanner(json.JSONDecoder())


@dataclass(slots=True)
class Event:
    """One complete (``"ph": "X"``) trace event. Times in microseconds."""

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


KeepFn = Callable[[Event], bool]


def keep_for_analysis(event: Event) -> bool:
    """A ``keep`` predicate that drops what the breakdown never reads."""
    return event.cat in ANALYSIS_CATEGORIES


def load_for_analysis(path: str | Path) -> Trace:
    """``load_trace`` keeping only the events and args the breakdown reads."""
    return load_trace(path, categories=ANALYSIS_CATEGORIES, args=ANALYSIS_ARGS)


def load_trace(
    path: str | Path,
    keep: KeepFn | None = None,
    *,
    categories: Collection[str] | None = None,
    args: Collection[str] | None = None,
    chunk_chars: int = CHUNK_CHARS,
) -> Trace:
    """Read a kineto chrome trace, streaming its ``traceEvents``.

    ``keep`` sees every complete event and returns False to drop it at once;
    ``categories``, when given, drops events of other categories before an ``Event`` is
    even built (the cheap way to skip ``python_function`` and the like); ``args``, when
    given, names the only ``args`` keys kept on each event (kernel events carry a dozen).
    Raises ``TraceError`` for a missing file, a file that is not (gzipped) JSON, or a
    JSON document without a ``traceEvents`` list.
    """
    p = Path(path)
    if not p.is_file():
        raise TraceError(f"{p}: no such trace file")
    events: list[Event] = []
    make = _EventMaker(p, categories, args)

    def sink(raw: Any) -> None:
        ev = make(raw, len(events))
        if ev is not None and (keep is None or keep(ev)):
            events.append(ev)

    top: dict[str, Any] = {}
    try:
        with _open_text(p) as f:
            _parse_document(_Stream(f, chunk_chars, p), sink, top)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as e:
        raise TraceError(f"{p}: not readable as a (gzipped) JSON trace ({_reason(e)})") from None
    return Trace(
        events=events,
        device_properties=_device_properties(top.get("deviceProperties")),
        base_time_ns=_base_time(top.get("baseTimeNanoseconds")),
        path=str(p),
    )


def _reason(e: BaseException) -> str:
    return str(e) or type(e).__name__


def _open_text(p: Path) -> TextIO:
    with open(p, "rb") as f:
        magic = f.read(2)
    if magic == _GZIP_MAGIC:
        return gzip.open(p, "rt", encoding="utf-8")
    return open(p, encoding="utf-8")


def _device_properties(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, list):
        return [d for d in value if isinstance(d, dict)]
    return []


def _base_time(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)


class _EventMaker:
    """Decoded JSON objects -> ``Event``s, or None for what is not kept. Names and
    categories repeat across iterations: each distinct string is stored once."""

    def __init__(
        self, path: Path, categories: Collection[str] | None, args: Collection[str] | None
    ) -> None:
        self.path = path
        self.categories = frozenset(categories) if categories is not None else None
        self.args = tuple(args) if args is not None else None
        self.strings: dict[str, str] = {}

    def __call__(self, raw: Any, kept: int) -> Event | None:
        if not isinstance(raw, dict) or raw.get("ph") != "X":
            return None
        cat = raw.get("cat", "")
        if cat in _CATEGORY_ALIASES:
            cat = _CATEGORY_ALIASES[cat]
        if self.categories is not None and cat not in self.categories:
            return None
        strings = self.strings
        name = raw.get("name", "")
        args = raw.get("args")
        if not isinstance(args, dict):
            args = {}
        elif self.args is not None:
            args = {k: args[k] for k in self.args if k in args}
        try:
            return Event(
                strings.setdefault(name, name),
                strings.setdefault(cat, cat),
                float(raw["ts"]),
                float(raw.get("dur", 0.0)),
                raw.get("pid", 0),
                raw.get("tid", 0),
                args,
            )
        except (KeyError, TypeError, ValueError):
            raise TraceError(
                f"{self.path}: complete event {raw.get('name')!r} has no numeric ts/dur "
                f"or a name that is not a string (after {kept} events kept)"
            ) from None


class _Stream:
    """A JSON document read in chunks; ``buf[pos:]`` is what is not consumed yet."""

    def __init__(self, f: TextIO, chunk_chars: int, path: Path) -> None:
        self.f = f
        self.chunk = max(1, chunk_chars)
        self.path = path
        self.buf = ""
        self.pos = 0
        self.eof = False

    def more(self) -> bool:
        """Append the next chunk (at least as large as what is pending). False at EOF."""
        if self.eof:
            return False
        pending = len(self.buf) - self.pos
        if pending > MAX_VALUE_CHARS:
            raise TraceError(
                f"{self.path}: a JSON value runs past {MAX_VALUE_CHARS >> 20} MB "
                "without ending (malformed or truncated trace)"
            )
        data = self.f.read(max(self.chunk, pending))
        if not data:
            self.eof = True
            return False
        self.buf = self.buf[self.pos :] + data
        self.pos = 0
        return True

    def skip(self, pattern: re.Pattern[str]) -> str:
        """Skip what ``pattern`` matches; return the next character ("" at EOF)."""
        while True:
            self.pos = pattern.match(self.buf, self.pos).end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def value(self, what: str) -> Any:
        """Decode the JSON value at ``pos``, reading more of the file as needed."""
        while True:
            try:
                obj, end = _scan(self.buf, self.pos)
            except (StopIteration, json.JSONDecodeError) as e:
                if _may_be_cut(e, len(self.buf)) and self.more():
                    continue
                raise self.error(what, e) from None
            # A number (or literal) that touches the end of the buffer may go on.
            if end == len(self.buf) and self.more():
                continue
            self.pos = end
            return obj

    def error(self, what: str, e: Exception | None = None) -> TraceError:
        detail = f" ({e.msg})" if isinstance(e, json.JSONDecodeError) else ""
        return TraceError(f"{self.path}: not a valid JSON trace: bad or truncated {what}{detail}")


def _may_be_cut(e: Exception, buf_len: int) -> bool:
    """Whether a decode error may only mean that the buffer ends inside the value: an
    error far from the buffer's end is a real syntax error, except an unfinished string
    (reported where the string starts)."""
    if not isinstance(e, json.JSONDecodeError) or e.msg.startswith("Unterminated string"):
        return True
    return e.pos >= buf_len - _CUT_MARGIN


def _parse_document(s: _Stream, sink: Callable[[Any], None], top: dict[str, Any]) -> None:
    """Walk the top-level object: stream ``traceEvents``, keep the other keys in ``top``."""
    if s.skip(_WS) != "{":
        raise TraceError(f"{s.path}: not a kineto chrome trace (the file is not a JSON object)")
    s.pos += 1
    found = False
    first = True
    while True:
        c = s.skip(_WS)
        if c == "}":
            break
        if not first:
            if c != ",":
                raise s.error("top level (no ',' between two keys)")
            s.pos += 1
            c = s.skip(_WS)
        first = False
        if c != '"':
            raise s.error("top-level key")
        key = s.value("top-level key")
        if s.skip(_WS) != ":":
            raise s.error(f"value of {key!r}")
        s.pos += 1
        s.skip(_WS)
        if key == "traceEvents":
            _stream_array(s, sink)
            found = True
        else:
            top[key] = s.value(f"value of {key!r}")
    if not found:
        raise TraceError(f"{s.path}: not a kineto chrome trace (no traceEvents)")


def _stream_array(s: _Stream, sink: Callable[[Any], None]) -> None:
    """Decode the ``traceEvents`` list one element at a time (a trailing comma is allowed,
    as older kineto versions wrote one)."""
    if s.skip(_WS) != "[":
        raise TraceError(f"{s.path}: traceEvents is not a list")
    s.pos += 1
    ws = _WS.match
    first = True
    while True:
        # Fast path: the next "[,] {...}" lies complete in the buffer.
        buf = s.buf
        n = len(buf)
        p = ws(buf, s.pos).end()
        if p < n and buf[p] == ("{" if first else ","):
            q = p if first else ws(buf, p + 1).end()
            if q < n and buf[q] == "{":
                try:
                    obj, end = _scan(buf, q)
                except (StopIteration, json.JSONDecodeError):
                    pass  # unfinished in this buffer (or malformed): the slow path decides
                else:
                    s.pos = end  # an object ends at its "}": complete even at the buffer end
                    first = False
                    sink(obj)
                    continue
        if _next_element(s, first):
            return
        first = False
        sink(s.value("event in traceEvents"))


def _next_element(s: _Stream, first: bool) -> bool:
    """Move to the next element of the list, reading more as needed; True at its end."""
    c = s.skip(_WS)
    if c == "]":
        s.pos += 1
        return True
    if not first:
        if c != ",":
            raise s.error("traceEvents (no ',' between two events)")
        s.pos += 1
        c = s.skip(_WS)
        if c == "]":
            s.pos += 1
            return True
    if c == "":
        raise s.error("traceEvents (the file ends inside the list)")
    return False
