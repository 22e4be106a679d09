"""Traces cut short as they were written (a job killed while torch.profiler exported): among
several traces such a file is left out and named, the others analysed.

A gzipped trace is read to the end of its stream (in C, nothing kept but its last bytes): a
stream that ends early, or whose JSON does not end with the ``}`` that closes a trace, was
cut. A plain trace is cut where its last character (whitespace aside) is not that ``}``;
an empty file (or one of whitespace alone) was cut before anything was written.
A file cut right after an event's own ``}`` passes here, and is found as it is read
(``CutShort``): among several it is left out so too, ``cut_found_in_reading``."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from .errors import CutShort, TraceError
from .first_few import first_few
from .trace import _gzip as inflating  # ISA-L's where installed, as the reader's
from .trace import _InflateError as InflateError

CHUNK = 1 << 20
TAIL = 64
CUT_WHY = CutShort.why
GZIP_CUT_WHY = "cut short (its gzip stream ends early, as when a job is killed while writing it)"
EMPTY_WHY = "empty (nothing written in it, as when a job is killed before writing it)"


def cut_short(path: Path) -> str | None:
    """Why ``path`` is a trace cut short, or None where it ends as a whole trace does (or
    cannot be read: its reader names that)."""
    try:
        with open(path, "rb") as f:
            gzipped = f.read(2) == b"\x1f\x8b"
        tail = _gzip_tail(path) if gzipped else _plain_tail(path)
    except OSError:
        return None
    if tail is None:
        return GZIP_CUT_WHY
    if not tail.strip():
        return EMPTY_WHY
    return None if tail.rstrip().endswith(b"}") else CUT_WHY


def _plain_tail(path: Path) -> bytes:
    with open(path, "rb") as f:
        f.seek(0, 2)
        f.seek(max(f.tell() - TAIL, 0))
        return f.read()


def _gzip_tail(path: Path) -> bytes | None:
    """The last bytes of a gzipped file's content; None where its stream ends early."""
    tail = b""
    try:
        with inflating.open(path, "rb") as f:
            while chunk := f.read(CHUNK):
                tail = chunk[-TAIL:] if len(chunk) >= TAIL else (tail + chunk)[-TAIL:]
    except (EOFError, gzip.BadGzipFile, zlib.error, InflateError):
        return None
    return tail


def every_one_cut(paths: list[Path] | list[str]) -> TraceError:
    """The one line where every trace given is cut short or empty."""
    named = first_few([str(p) for p in paths], 3)
    return TraceError(f"every trace given is cut short or empty (each ends mid-JSON or mid-gzip-stream, "
                      f"or holds nothing, as when a job is killed while writing it): {named}")


def cut_found_in_reading(paths: list[Path], read: list[object]) -> dict[str, str]:
    """Of the traces ``read`` from ``paths`` (each its result, or the error it raised), those
    found cut short as they were read: path to why; every one: one line."""
    cut = {str(p): r.why for p, r in zip(paths, read, strict=True) if isinstance(r, CutShort)}
    if cut and len(cut) == len(paths):
        raise every_one_cut(paths)
    return cut
