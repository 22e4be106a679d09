"""The byte-level reader behind ``trace.load_trace``; no torch import.

The top-level object of a chrome trace is walked by hand (its keys are few and small) and
its ``traceEvents`` list is cut into *runs* of whole events that msgspec decodes at C speed
into typed structs, skipping every field the struct does not name without building it.

A run ends at a ``}`` followed by ``,`` and ``{``: in kineto's layout, the end of one event
and the start of the next. That guess can be wrong (such a ``}`` may lie inside a string or
a nested value), but then msgspec rejects the run: a prefix of a valid JSON list decodes
only when it is cut between two elements. A rejected run is retried shorter; an element no
run gets past (malformed, or of a shape the typed decoder refuses, such as a ``ts`` that is
an object) is read alone by the stdlib ``json``; what no reader can use there (a time that
is not a finite number, a name that is not a string, an id that is an object) is named in
one error.

The file is read into one reused buffer, and a run is decoded where it lies: the byte
before it and the byte after it (a ``,``, ``[`` or whitespace) are turned into ``[`` and
``]`` for the call and put back, so no event is copied before msgspec reads it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from .errors import CutShort, TraceError

# No single trace event comes near this size; a value still unfinished beyond it means a
# malformed file, and reading on would only load the rest of the file into memory.
MAX_VALUE_BYTES = 64 << 20
# The longest run decoded at once (its raw events all exist together), as a fraction of
# the chunk read and at most MAX_RUN_BYTES.
RUN_FRACTION = 4
MAX_RUN_BYTES = 512 << 10
# A rejected run shorter than this is not split again: its first element is read alone.
_MIN_RUN = 4096

_WS = re.compile(rb"[ \t\n\r]*")
_BOM = b"\xef\xbb\xbf"  # UTF-8's byte order mark
_BOUNDARY = re.compile(rb"\}[ \t\n\r]*,[ \t\n\r]*\{")
# A string (group 1 is its closing quote, None when the buffer ends inside it) or a bracket.
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(")?|[\[\]{}]')
_SCALAR = re.compile(rb'[^ \t\n\r,:\[\]{}"]+')
_OPENERS = b"[{"
_QUOTE, _LBRACKET, _RBRACKET = b'"[]'

RunSink = Callable[[list[Any]], None]  # a run of events as the typed decoder built them
OneSink = Callable[[Any], None]  # one element as ``json.loads`` built it


class Source:
    """A JSON document read in chunks into one buffer; ``buf[pos:end]`` is what is read
    and not consumed yet (``buf`` past ``end`` is stale)."""

    def __init__(self, f: BinaryIO, chunk: int, path: Path) -> None:
        self.f = f
        self.chunk = max(1, chunk)
        self.run = max(1, min(self.chunk // RUN_FRACTION, MAX_RUN_BYTES))
        self.path = path
        self.buf = bytearray()
        self.pos = 0
        self.end = 0
        self.eof = False

    def more(self) -> bool:
        """Read on after what is pending, into room for at least half a chunk or half as
        much as is pending (so a long value is rescanned a few times, not once a chunk).
        False at EOF."""
        if self.eof:
            return False
        pending = self.end - self.pos
        if pending > MAX_VALUE_BYTES:
            raise TraceError(
                f"{self.path}: a JSON value runs past {MAX_VALUE_BYTES >> 20} MB "
                "without ending (malformed or truncated trace)"
            )
        want = max(self.chunk, pending)
        start = max(self.pos - 1, 0)  # one byte before pos stays, for a run's "["
        kept = self.end - start
        buf = self.buf
        if len(buf) - kept < (want + 1) // 2:  # the first read, or a value longer than a chunk
            grown = bytearray(kept + want)
            grown[:kept] = buf[start : self.end]
            self.buf = buf = grown
        elif start:
            buf[:kept] = buf[start : self.end]
        with memoryview(buf) as view:
            got = self.f.readinto(view[kept:])
        self.pos -= start
        self.end = kept + (got or 0)
        if not got:
            self.eof = True
            return False
        return True

    def peek(self) -> bytes:
        """Skip whitespace; return the next byte (b"" at EOF) without consuming it."""
        while True:
            self.pos = _WS.match(self.buf, self.pos, self.end).end()
            if self.pos < self.end:
                return bytes(self.buf[self.pos : self.pos + 1])
            if not self.more():
                return b""

    def value(self, what: str) -> Any:
        """Decode the JSON value at ``pos`` with the stdlib ``json`` and move past it."""
        while (end := _value_end(self.buf, self.pos, self.end, self.eof)) < 0:
            if self.eof:
                raise self.cut(what)
            self.more()
        try:  # strict=False: a raw control character inside a string is kept (torch 2.5's
            # Python tracer writes some frame names as freed bytes)
            obj = json.loads(self.buf[self.pos : end], strict=False)
        except json.JSONDecodeError as e:
            raise self.error(what, f" ({e.msg})") from None
        self.pos = end
        return obj

    def error(self, what: str, detail: str = "") -> TraceError:
        return TraceError(f"{self.path}: not a valid JSON trace: bad or truncated {what}{detail}")

    def cut(self, what: str) -> CutShort:
        """The error where the file ends before the JSON does: a trace cut as it was written."""
        return CutShort(*self.error(what).args)


def _value_end(buf: bytearray, pos: int, end: int, eof: bool) -> int:
    """Where the JSON value starting at ``pos`` ends, or -1 when it may go on past
    ``end``. Only strings and brackets are followed; the decoder judges the rest."""
    c = buf[pos] if pos < end else -1
    if c == _QUOTE:
        m = _TOKEN.match(buf, pos, end)
        return m.end() if m.group(1) is not None else -1
    if c >= 0 and c in _OPENERS:
        depth = 0
        for m in _TOKEN.finditer(buf, pos, end):
            t = buf[m.start()]
            if t == _QUOTE:
                if m.group(1) is None:
                    return -1
            elif t in _OPENERS:
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    return m.end()
        return -1
    m = _SCALAR.match(buf, pos, end)
    stop = m.end() if m else pos
    return -1 if stop == end and not eof else stop


def walk_document(
    s: Source, decoder: msgspec.json.Decoder, on_run: RunSink, on_one: OneSink, top: dict[str, Any]
) -> None:
    """Walk the top-level object: stream ``traceEvents``, keep the other keys in ``top``."""
    if s.peek() == _BOM[:1] and bytes(s.buf[s.pos : s.pos + 3]) == _BOM:
        s.pos += 3  # a byte order mark (an editor's save on Windows): JSON's readers may skip it
    if s.peek() == b"":  # a trace whose writing never began (a job killed before its export)
        raise TraceError(f"{s.path}: not a kineto chrome trace (the file is empty)")
    if s.peek() != b"{":
        _check_text(bytes(s.buf[s.pos : min(s.pos + 64, s.end)]))
        raise TraceError(f"{s.path}: not a kineto chrome trace (the file is not a JSON object)")
    s.pos += 1
    found = False
    first = True
    while True:
        c = s.peek()
        if c == b"}":
            break
        if c == b"":
            raise s.cut("top level (the file ends before the object is closed)")
        if not first:
            if c != b",":
                raise s.error("top level (no ',' between two keys)")
            s.pos += 1
            c = s.peek()
        first = False
        if c != b'"':
            raise s.error("top-level key")
        key = s.value("top-level key")
        if (colon := s.peek()) != b":":
            raise (s.cut if colon == b"" else s.error)(f"value of {key!r}")
        s.pos += 1
        s.peek()
        if key == "traceEvents":
            _stream_events(s, decoder, on_run, on_one)
            found = True
        else:
            top[key] = s.value(f"value of {key!r}")
    if not found:
        raise TraceError(f"{s.path}: not a kineto chrome trace (no traceEvents)")
    s.pos += 1
    if s.peek():  # as json.load refuses it ("Extra data"), not read as the first object alone
        raise TraceError(f"{s.path}: not a valid JSON trace: extra data after its top-level object "
                         "(two traces written into one file?)")


def _check_text(head: bytes) -> None:
    """Raise UnicodeDecodeError when the file does not start as UTF-8 text (binary data)."""
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(head) - 3:  # not merely a character cut by the slice
            raise


def _stream_events(s: Source, decoder: msgspec.json.Decoder, on_run: RunSink, on_one: OneSink) -> None:
    """Decode the ``traceEvents`` list in runs (a trailing comma is allowed, as older
    kineto versions wrote one)."""
    if s.peek() != b"[":
        raise TraceError(f"{s.path}: traceEvents is not a list")
    s.pos += 1
    first = True
    while True:
        c = s.peek()
        if c == b"]":
            s.pos += 1
            return
        if not first:
            if c == b"":
                raise s.cut("traceEvents (the file ends inside the list)")
            if c != b",":
                raise s.error("traceEvents (no ',' between two events)")
            s.pos += 1
            c = s.peek()
            if c == b"]":
                s.pos += 1
                return
        if c == b"":
            raise s.cut("traceEvents (the file ends inside the list)")
        first = False
        if s.end - s.pos < s.run:
            s.more()  # for a run as long as allowed
        if not _decode_run(s, decoder, on_run):
            on_one(s.value("event in traceEvents"))


def _decode_run(s: Source, decoder: msgspec.json.Decoder, on_run: RunSink) -> bool:
    """Decode the longest run of whole events at ``pos`` that msgspec accepts; False when
    there is none (the next element is then read alone)."""
    buf, lo = s.buf, s.pos  # lo >= 1: the list's "[" or a "," lies before it
    hi = min(s.end, lo + s.run)
    retries = 0
    while (j := _last_boundary(buf, lo, hi, s.end)) >= 0:
        before, after = buf[lo - 1], buf[j + 1]
        buf[lo - 1], buf[j + 1] = _LBRACKET, _RBRACKET
        try:
            with memoryview(buf) as view:
                raws = decoder.decode(view[lo - 1 : j + 2])
        except msgspec.DecodeError:  # ValidationError included
            # First the boundary before (a wrong guess at the end costs one step), then halve
            # (an element the decoder refuses is reached in a few cheap steps: it fails there).
            hi = j if retries == 0 else lo + (j - lo) // 2
            retries += 1
            if hi - lo < _MIN_RUN and retries > 1:
                return False
            continue
        finally:
            buf[lo - 1], buf[j + 1] = before, after
        s.pos = j + 1
        on_run(raws)
        return True
    return False


def _last_boundary(buf: bytearray, lo: int, hi: int, end: int) -> int:
    """The last ``}`` in ``buf[lo:hi]`` followed by ``,`` and ``{`` (before ``end``), or -1."""
    j = hi
    while (j := buf.rfind(b"}", lo, j)) >= 0:
        if _BOUNDARY.match(buf, j, end):
            return j
    return -1
