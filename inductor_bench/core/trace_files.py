"""The trace files ``analyze`` is given: files named, or the traces directly in a directory.

A directory's ``*.json`` that is no profiler trace (a config, metrics, an inductor-bench
result) is skipped and named, not read as one; a directory holding an inductor-bench run is
pointed to ``report``; a directory or file that cannot be read is bad input, named."""

from __future__ import annotations

import codecs
import contextlib
import gzip
import hashlib
import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .cut_short import cut_short, every_one_cut
from .errors import UsageError
from .first_few import first_few
from .rerun import tool_command
from .rundir import BREAKDOWN_FILE, COMPARE_FILE

HEADER_CHARS = 1 << 16  # distributedInfo is written before traceEvents
TRACE_SUFFIXES = (".json", ".json.gz")
# What a chrome trace's top-level object holds near its start (kineto writes its header keys
# first; a trace of another tool opens with traceEvents)
_TRACE_KEYS = re.compile(r'"(?:traceEvents|schemaVersion|deviceProperties|displayTimeUnit|'
                         r'baseTimeNanoseconds|distributedInfo|traceName)"\s*:')


@dataclass
class TraceFiles:
    files: list[Path]
    not_traces: list[Path] = field(default_factory=list)  # a directory's JSON files skipped
    cut: dict[Path, str] = field(default_factory=dict)  # traces cut short among several: why


def trace_files(paths: Iterable[Path]) -> TraceFiles:
    """The trace files named, a directory standing for the traces directly in it."""
    out = TraceFiles([])
    for p in paths:
        try:
            if p.is_dir():
                _directory(p, out)
            elif p.name in (BREAKDOWN_FILE, COMPARE_FILE) and not is_trace(p):
                raise UsageError(f"{p}: an inductor-bench result, not a profiler trace: "
                                 f"`{tool_command('report', p)}` shows it")
            else:
                out.files.append(p)
        except OSError as e:  # a directory on the way that cannot be read or searched
            raise UsageError(f"{e.filename or p}: cannot read ({e.strerror or e})") from None
    seen: set[Path] = set()
    for p in out.files:
        if p.resolve() in seen:
            raise UsageError(f"{p}: given twice; give each trace once")
        seen.add(p.resolve())
    if len(out.files) > 1:
        _set_aside_cut(out)
    prints: dict[tuple[int, bytes], Path] = {}
    for p in out.files:
        if len(out.files) > 1 and (same := prints.setdefault(_fingerprint(p), p)) != p:
            raise UsageError(f"{p}: the same trace as {same} (a copy: the same bytes); give each trace once")
    return out


def _set_aside_cut(out: TraceFiles) -> None:
    """Among several traces, those cut short as they were written left out, named in ``cut``;
    where every one is, one line."""
    out.cut = {p: why for p in out.files if (why := cut_short(p))}
    if len(out.cut) == len(out.files):
        raise every_one_cut(out.files)
    out.files = [p for p in out.files if p not in out.cut]


def _directory(p: Path, out: TraceFiles) -> None:
    """The traces directly in ``p`` into ``out``; its JSON files that are no trace set aside."""
    try:
        found = sorted(f for f in p.iterdir() if f.is_file() and f.name.endswith(TRACE_SUFFIXES))
    except OSError as e:
        raise UsageError(f"{p}: cannot read this directory ({e.strerror or e})") from None
    for result, where in ((BREAKDOWN_FILE, "graphs/<graph>"), (COMPARE_FILE, "<mode>/graphs/<graph>")):
        if p / result in found:
            raise UsageError(f"{p}: an inductor-bench run directory ({result}), not profiler traces: "
                             f"`{tool_command('report', p)}` shows it; its graphs' traces are in "
                             f"{p}/{where}/")
    traces = [f for f in found if is_trace(f) or _empty(f)]  # an empty one: cut before it was written
    if not traces:
        names = ", ".join(f.name for f in found[:3]) + (", ..." if len(found) > 3 else "")
        what = f" ({names}: no traceEvents)" if found else _below(p)
        raise UsageError(f"{p}: no trace files (*.json, *.json.gz) in this directory{what}")
    out.files += traces
    out.not_traces += [f for f in found if f not in traces]


def _empty(path: Path) -> bool:
    return trace_head(path, missing=None) == ""


def _below(p: Path) -> str:
    """Where the traces are when a directory holds none itself but its subdirectories do (one
    per rank or run, as some jobs write them): named, for the user to give."""
    try:
        subs = sorted(d for d in p.iterdir() if d.is_dir() and any(
            f.name.endswith(TRACE_SUFFIXES) and f.is_file() for f in d.iterdir()))
    except OSError:
        return ""
    if not subs:
        return ""
    named = first_few([str(d) for d in subs], 3)
    which = f"subdirectory {named} holds some: give it" if len(subs) == 1 else \
        f"subdirectories {named} hold some: give them"
    return f"; its {which} (a directory is read alone, not the directories in it)"


def is_trace(path: Path) -> bool:
    """Whether ``path`` opens as a chrome trace does: a top-level object with one of its keys
    (an unreadable file counts as one, for its reader to name the error)."""
    head = trace_head(path, missing=None)
    if head is None:
        return True
    return head.lstrip().startswith("{") and _TRACE_KEYS.search(head) is not None


def _fingerprint(path: Path, edge: int = 1 << 16) -> tuple[int, bytes]:
    """A trace file's size and a hash of its first and last ``edge`` bytes: two cycles or
    ranks differ there (their events' times, gzipped or not); a copy does not."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(edge)
            f.seek(max(size - edge, len(head)))
            tail = f.read(edge)
    except OSError:
        return (-1, str(path).encode())  # unreadable: left to the reader's own error
    return size, hashlib.blake2b(head + tail, digest_size=16).digest()


def trace_head(path: Path, missing: str | None = "") -> str | None:
    """The first ``HEADER_CHARS`` characters of a trace, gzipped or not (``missing`` where
    unreadable): its header, and the first of its events; of a gzipped trace cut short before
    them, what its stream held before it ended."""
    try:
        with open(path, "rb") as f:
            gzipped = f.read(2) == b"\x1f\x8b"
        if gzipped:
            return _gzip_head(path)
        # utf-8-sig: a byte order mark before the header is skipped, as the reader skips it
        with open(path, encoding="utf-8-sig", errors="replace") as f:
            return f.read(HEADER_CHARS)
    except OSError:
        return missing


def _gzip_head(path: Path) -> str:
    """``trace_head`` of a gzipped trace, read piece by piece: a stream that ends early keeps
    the pieces read before its end (a whole read of the text raises EOFError, losing them)."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
    pieces: list[str] = []
    read = 0
    with gzip.open(path, "rb") as f, contextlib.suppress(EOFError, zlib.error):
        while read < HEADER_CHARS and (raw := f.read1(HEADER_CHARS)):
            pieces.append(text := decoder.decode(raw))
            read += len(text)
    return "".join(pieces)[:HEADER_CHARS]
