"""A kernel's verdict against its limit in words: the mark before its % of peak (``~``
latency-bound, ``^`` in cache, ``!`` above a low compute ceiling) and what bounds it."""

from __future__ import annotations

from ..core.ceilings import (
    ARITHMETIC,
    COLLECTIVE,
    COMPARISONS,
    NO_CEILING,
    NO_DATA,
    NOT_DATA_PCT,
    NOT_ITS_DATA,
    OPAQUE,
    UNCOUNTED,
    beats_compute_ceiling,
    no_distance,
)
from ..core.results import KernelStat
from ..core.roofline import LATENCY, KernelRoof, short_when_undisturbed
from ..core.work import draws_random
from . import format as fmt

BOUND_WORDS = {"memory": "memory", "compute": "compute", LATENCY: "latency (too short)",
               UNCOUNTED: "- (a template: FLOPs not counted)",
               OPAQUE: "- (a custom op: its work is not known)", NO_DATA: "- (a view: moves no data)",
               NO_CEILING: "- (no ceiling for its compute type)",
               ARITHMETIC: "- (its arithmetic: FLOPs not counted)",
               COMPARISONS: "- (sorting or searching: comparisons not counted)",
               COLLECTIVE: "- (a collective: no ceiling for its links)",
               NOT_ITS_DATA: f"not its data (under {NOT_DATA_PCT:g}% of the bandwidth: uncounted work)"}

# why a % is no distance to a limit (``core/ceilings.no_distance``) -> the mark before it in the tables
MARKS = {"latency-bound": "~", "in cache": "^"}
LOW_CEILING = "!"  # before a % held against a compute ceiling it beat (``beats_compute_ceiling``)


def pct_mark(roof: KernelRoof) -> str:
    return MARKS.get(no_distance(roof), "") or (LOW_CEILING if beats_compute_ceiling(roof) else "")


def bound_words(roof: KernelRoof, k: KernelStat | None = None, device: str = "") -> str:
    """The verdict in words; a memory-bound kernel above the measured bandwidth is served
    from a cache (its data fits in one), which the DRAM ceiling does not bound; one that
    draws random numbers spends time on them that its count does not hold (core/work.py); a
    latency-bound one whose mean launch is not short is short only undisturbed (its fastest)."""
    if k is not None and device and (fastest := short_when_undisturbed(k, roof, device)) is not None:
        return f"latency (short when undisturbed: fastest {fastest:.3g} µs a launch; its mean is not)"
    if pct_mark(roof) == "^":
        return "memory (in cache: above the DRAM ceiling)"
    if pct_mark(roof) == LOW_CEILING:
        return "compute (ceiling low: the roofline warning says why)"
    if roof.bound == "memory" and k is not None and draws_random(k.work_from):
        return "memory (and random numbers: not counted)"
    if roof.bound == NOT_ITS_DATA and k is not None and draws_random(k.work_from):
        return f"not its data (under {NOT_DATA_PCT:g}% of the bandwidth: its random numbers, not counted)"
    return BOUND_WORDS.get(roof.bound or "", fmt.DASH)
