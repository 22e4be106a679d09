"""The measured ceilings of a device: memory bandwidth and dense throughput per compute type,
as the peak measurement (``runner/peaks_measure.py``) found them, with the datasheet figure
beside them (``core/peaks.py``), never instead of them. Pure; saved in the run directory
(``peaks.json``) and in the result (``extras.roofline``), and cached per machine under the key
``cache_key`` makes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from . import other_ops
from .devices import DEVICE, HOST, backend, canonical_name
from .peaks import COMPUTE_TYPES, FP16, FP32, lookup
from .si_units import sig3

PEAKS_FILE = "peaks.json"  # in the run directory: what the roofline figures are held against


@dataclass
class Ceilings:
    """Measured peaks of one device (best of ``reps`` repetitions each)."""

    device_name: str
    gbps: float | None  # memory bandwidth: the best of a copy and a triad (host) or a copy (device)
    tflops: dict[str, float] = field(default_factory=dict)  # compute type -> dense TFLOP/s
    copy_gbps: float | None = None
    triad_gbps: float | None = None
    threads: int | None = None  # host: the intra-op threads it ran with (those of the run)
    matmul_n: dict[str, int] = field(default_factory=dict)  # compute type -> the n of its n x n matmuls
    matmul_layout: dict[str, str] = field(default_factory=dict)  # compute type -> its operands' layout
    array_bytes: int | None = None  # host: the size of each STREAM array
    reps: int = 0
    how: str = ""  # the measurement in words: sizes, repetitions
    key: dict[str, Any] = field(default_factory=dict)  # what the cache is keyed by
    measured_at: str = ""
    from_cache: bool = False
    load: str | None = None  # the other processes' load while it ran, where it disturbed it
    errors: list[str] = field(default_factory=list)  # compute types that could not be measured
    # compute type -> the fastest kernel (TFLOP/s) that has made a run measure the type again
    # (``core/roofline.to_measure_again``): a kernel no faster than that asks for no new try
    checked_against: dict[str, float] = field(default_factory=dict)
    # this run only: compute type -> the ceiling before the run's kernels made it measure again
    remeasured_from: dict[str, float] = field(default_factory=dict)

    def flops_for(self, compute: str | None) -> float | None:
        return self.tflops.get(compute or "")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Ceilings:
        names = set(cls.__dataclass_fields__)
        kw = {k: v for k, v in d.items() if k in names}
        return cls(**{**kw, "device_name": canonical_name(str(kw.get("device_name") or ""))})


def higher_of(a: Ceilings, b: Ceilings | None) -> Ceilings:
    """A copy of ``a`` with each figure the higher of ``a``'s and ``b``'s: other work only ever
    slows a measurement down, so of two measurements of one device the higher is the nearer."""
    c = Ceilings.from_dict(a.to_dict())  # asdict copies the dicts
    if b is None:
        return c
    if (b.gbps or 0) > (c.gbps or 0):
        c.gbps, c.copy_gbps, c.triad_gbps = b.gbps, b.copy_gbps, b.triad_gbps
    for k, v in b.tflops.items():
        if v > c.tflops.get(k, 0.0):
            c.tflops[k] = v
            if k in b.matmul_n:
                c.matmul_n[k] = b.matmul_n[k]
            if k in b.matmul_layout:
                c.matmul_layout[k] = b.matmul_layout[k]
    for k, v in b.checked_against.items():
        c.checked_against[k] = max(v, c.checked_against.get(k, 0.0))
    return c


_WIDENED, _OWN = "widened to fp32 (", ": its own fastest, "


def widened(c: Ceilings, host: bool) -> Ceilings:
    """``c`` with a host's half-precision ceiling no lower than its fp32 one: a CPU can always
    widen bf16 or fp16 to fp32 and multiply at fp32's rate, as Inductor's C++ GEMM template does
    where it has no bf16 instructions. On an AMD EPYC with AVX2 (torch 2.13) torch's own bf16
    routes ran at 0.024 TFLOP/s, fp32's at 0.171, and a bf16 model's GEMM templates at 0.055,
    which read 220% of the bf16 figure. Where the half-precision routes are the faster (native
    bf16, AMX), or on an accelerator, ``c`` is as it was."""
    fp32, half = c.tflops.get(FP32), c.tflops.get(FP16)
    if not host or fp32 is None or (half is not None and half >= fp32):
        return c
    layout = c.matmul_layout.get(FP16) or ""
    if layout.startswith(_WIDENED):  # widened before, and fp32 measured faster since: its own kept
        own = layout[layout.find(_OWN):-1] if _OWN in layout else ""
    else:
        own = f"{_OWN}{layout}, {half:.3g} TFLOP/s" if half is not None else ""
    c.tflops[FP16], c.matmul_layout[FP16] = fp32, f"{_WIDENED}{c.matmul_layout.get(FP32)}{own})"
    if FP32 in c.matmul_n:
        c.matmul_n[FP16] = c.matmul_n[FP32]
    return c


def is_widened(c: Ceilings, compute: str) -> bool:
    """Whether ``compute``'s ceiling is fp32's figure (``widened``), not one measured on its own."""
    return (c.matmul_layout.get(compute) or "").startswith(_WIDENED)


def same_figures(a: Ceilings, b: Ceilings) -> bool:
    return a.gbps == b.gbps and a.tflops == b.tflops


def shared_ceilings(a: Ceilings | None, b: Ceilings | None) -> Ceilings | None:
    """Two runs' ceilings of one device (the same name and host threads) that differ: one set
    to hold both runs' kernels against, the higher of each figure, so that a kernel's move
    between the runs is the kernel's, not the measurement's. None where either run has none,
    the devices differ, or the figures are the same."""
    if a is None or b is None or same_figures(a, b):
        return None
    if (a.device_name, a.threads) != (b.device_name, b.threads):
        return None
    return higher_of(a, b)


@dataclass
class Datasheet:
    """The vendor's figures for the device (dense, no sparsity); empty where it is not listed."""

    part: str | None = None
    gbps: float | None = None
    tflops: dict[str, float] = field(default_factory=dict)


def datasheet_for(device_name: str) -> Datasheet:
    """The datasheet row of ``core/peaks.py`` for the device (no user file, no override)."""
    p = lookup(device_name)
    if p is None or not p.source.startswith("datasheet"):
        return Datasheet()
    flops = {c: v for c in COMPUTE_TYPES if (v := p.flops_for(c)) is not None}
    return Datasheet(p.source.removeprefix("datasheet: "), p.gbps, flops)


# In a result's ``errors`` where a stop came as the ceilings were measured: the run was saved without them.
STOPPED_NOTE = "the ceilings were not measured: the run was stopped while measuring them"


@dataclass
class Roofline:
    """The ceilings a run's kernels are held against (``extras.roofline`` of a result)."""

    measured: Ceilings | None = None
    datasheet: Datasheet = field(default_factory=Datasheet)
    error: str | None = None  # why nothing was measured

    def to_dict(self) -> dict[str, Any]:
        return {"measured": self.measured.to_dict() if self.measured else None,
                "datasheet": asdict(self.datasheet), "error": self.error}

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Roofline | None:
        if not isinstance(d, dict):
            return None
        m = d.get("measured")
        ds = d.get("datasheet") or {}
        return cls(Ceilings.from_dict(m) if isinstance(m, dict) else None,
                   Datasheet(ds.get("part"), ds.get("gbps"), dict(ds.get("tflops") or {})),
                   d.get("error"))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)


MEMORY, COMPUTE, LATENCY = "memory", "compute", "latency"
# A template (a GEMM's, flex attention's) whose FLOPs the files do not give: its time is its
# arithmetic, so its bytes alone would call it memory-bound far below the bandwidth. It gets
# no % and this verdict. (Flex attention under a mask of several blocks skips the ones the mask
# leaves out, at run time.)
UNCOUNTED = "FLOPs not counted"
FLOP_TEMPLATES = frozenset({"cpp_template", "cpp_attention_template", "triton_template"})
# A custom op (``mylib::scaled_tanh``) does work no file shows, memory or arithmetic: judged on
# its bytes it would be called memory-bound whatever it does. It gets no % and this verdict.
OPAQUE = "work not known"
# A call that moves no data and computes nothing (a view, ``core/other_ops.py``): its time is
# the call's own cost, so a % would be its bytes, 0, over its time. No %, and this verdict.
NO_DATA = "moves no data"
# A call whose FLOPs are counted in a type no ceiling was measured for (an int8 GEMM's integer
# operations, fp64): judged on its bytes alone it would be called memory-bound. No %.
NO_CEILING = "no ceiling for its type"
# An ATen op whose time is arithmetic no rule counts (an SVD, a recurrent layer:
# ``other_ops.ARITHMETIC_OPS``): judged on its bytes it would be called memory-bound. No %.
ARITHMETIC = "arithmetic not counted"
# An ATen op whose time is comparisons (a sort, a top-k, a binary search:
# ``other_ops.COMPARISON_OPS``): its bytes would call it memory-bound, or above the bandwidth
# for a search that reads a few elements of what it is passed. No %.
COMPARISONS = "comparisons not counted"
# A collective (an all-reduce, over NCCL or gloo) moves its bytes between processes, over links
# no ceiling was measured for: held against the memory bandwidth it would read as slow. No %.
COLLECTIVE = "communication, no ceiling"
# Categories whose kernels get no % without a FLOP count: (verdict, what the limit line says).
NOT_JUDGED = {**{c: (UNCOUNTED, "its FLOPs, not counted") for c in FLOP_TEMPLATES},
              "extern_custom": (OPAQUE, "its work, not known"),
              "communication": (COLLECTIVE, "the links between processes, not measured")}
# ... and ATen ops, by what their uncounted time is spent on (``other_ops.uncounted_work``).
NOT_JUDGED_OPS = {other_ops.ARITHMETIC_WORK: (ARITHMETIC, "its FLOPs, not counted"),
                  other_ops.COMPARISON_WORK: (COMPARISONS, "its comparisons, not counted")}
# A kernel without a FLOP count that moved its bytes at under this % of the bandwidth, in its
# mean and its fastest iteration, and is not too short to: no access pattern slows memory
# traffic that much (a gather that wastes a cache line per element still reaches several %), so
# its time is not its data but work no count holds (a mask computed from indices, atomics on a
# few addresses, a serial loop). It keeps its %, and is far from its limit, under this verdict
# instead of "memory". One whose mean other work stalled (a MixNet's batch-norm backward, 21 ms
# mean, 0.56 ms fastest: 0.8% and 31% of the bandwidth) keeps "memory": its data is its time.
NOT_DATA_PCT = 1.0
NOT_ITS_DATA = "not its data"
# The share of its limit below which a kernel is called far from it (the category table).
FAR_BELOW_PCT = 30.0
# A launch whose ideal time at the ceilings is below this cannot get near them: a GPU kernel
# launch costs a few microseconds, an OpenMP parallel region's fork and join about as much.
LATENCY_FLOOR_US = {HOST: 10.0, DEVICE: 5.0}
# ... and whose launches take less than this many times (that cost + the ideal time): a launch
# that takes longer is slow for another reason (its arithmetic, its access pattern), not short.
LATENCY_SLACK = 2.0


@dataclass
class KernelRoof:
    """One kernel against the ceilings."""

    gbps: float | None
    tflops: float | None
    intensity: float | None  # FLOP per byte
    pct: float | None  # % of its limit (the roofline at its intensity), measured ceilings
    bound: str | None  # MEMORY | COMPUTE | LATENCY | NOT_ITS_DATA | why no %; None: no count or ceilings
    limit: str = ""  # what it is held against, in words

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def kernel_roof(k: Any, ceilings: Ceilings | None, device: str) -> KernelRoof:
    """The figures of one kernel (see the module docstring)."""
    if k.bytes is None or k.ms <= 0:
        return KernelRoof(None, None, None, None, None)
    if k.bytes == 0 and not k.flops:
        return KernelRoof(None, None, None, None, NO_DATA, "its work: none")
    seconds = k.ms / 1e3
    gbps = k.bytes / seconds / 1e9
    unjudged = (NOT_JUDGED.get(getattr(k, "category", None))
                or NOT_JUDGED_OPS.get(other_ops.uncounted_work(k.name)))
    if not k.flops and unjudged is not None:
        return KernelRoof(gbps, None, None, None, *unjudged)
    tflops = k.flops / seconds / 1e12 if k.flops else None
    intensity = k.flops / k.bytes if k.flops and k.bytes else None
    if ceilings is None or not ceilings.gbps:
        return KernelRoof(gbps, tflops, intensity, None, None)
    peak_flops = ceilings.flops_for(k.compute) if k.flops else None
    if k.flops and not peak_flops:
        return KernelRoof(gbps, tflops, intensity, None, NO_CEILING, f"{k.compute or 'its type'}: none")
    if tflops is not None and peak_flops and intensity is not None:
        roof = min(peak_flops, intensity * ceilings.gbps / 1e3)
        bound = COMPUTE if intensity * ceilings.gbps / 1e3 >= peak_flops else MEMORY
        pct = 100.0 * tflops / roof
        ideal_s = max(k.bytes / (ceilings.gbps * 1e9), k.flops / (peak_flops * 1e12))
        limit = f"{k.compute} {sig3(peak_flops)} TFLOP/s, {sig3(ceilings.gbps)} GB/s"
    else:
        bound, pct = MEMORY, 100.0 * gbps / ceilings.gbps
        ideal_s = k.bytes / (ceilings.gbps * 1e9)
        limit = f"{sig3(ceilings.gbps)} GB/s"
    floor = LATENCY_FLOOR_US.get(backend(device).timeline, 5.0)
    # per launch; the verdict on its fastest iteration (a call stalled by other work is not a kernel
    # that could reach its limit); one above its limit reached it: in cache, or over a low ceiling
    fastest_ms = min(getattr(k, "samples_ms", None) or [0.0])
    fastest_s = fastest_ms / 1e3 if fastest_ms > 0 else seconds
    ideal_us, took_us = (x * 1e6 / max(k.calls, 1e-9) for x in (ideal_s, fastest_s))
    if ideal_us < floor and took_us < LATENCY_SLACK * (floor + ideal_us) and pct <= 100:
        bound = LATENCY
    elif bound == MEMORY and tflops is None and max(pct, pct * seconds / fastest_s) < NOT_DATA_PCT:
        bound = NOT_ITS_DATA  # its fastest iteration too: one that moved its data faster does no such work
    return KernelRoof(gbps, tflops, intensity, pct, bound, limit)


def no_distance(roof: KernelRoof) -> str:
    """Why the kernel's % of peak is no distance to its limit, "" where it is one: a latency-bound
    kernel's % says how short it is; a memory-bound one above the DRAM ceiling is served from a
    cache (its data fits in one), which that ceiling does not bound."""
    if roof.bound == LATENCY:
        return "latency-bound"
    if roof.bound == MEMORY and roof.pct is not None and roof.pct > 100:
        return "in cache"
    return ""


# A compute-bound kernel above this % of the compute ceiling (no cache lifts a FLOP rate):
# the ceiling was measured low, as a shared machine's slow spell or other work makes it.
ABOVE_CEILING_PCT = 100.0
MEASURE_AGAIN_PCT = 105.0  # above it, measured again (``to_measure_again``); up to it, noise


def beats_compute_ceiling(roof: KernelRoof) -> bool:
    """A compute-bound kernel above ``ABOVE_CEILING_PCT`` of its compute ceiling: its % is held
    against a ceiling measured low."""
    return roof.bound == COMPUTE and roof.pct is not None and roof.pct > ABOVE_CEILING_PCT


def pct_over_time(members: Iterable[tuple[KernelRoof, float]]) -> tuple[float | None, float | None]:
    """The time-weighted mean % of peak of kernels (each with its time), those without a % and
    those whose % is no distance to a limit left out (latency-bound, in cache: a mean of 300 %
    cache-served kernels and 40 % DRAM-bound ones would read as near the limit), and the share
    (%) of all their time it is a mean over."""
    num = den = total = 0.0
    for roof, ms in members:
        total += ms
        if roof.pct is not None and not no_distance(roof):
            num += roof.pct * ms
            den += ms
    return (num / den if den > 0 else None), (100.0 * den / total if total > 0 else None)


def qualified_parts(members: list[tuple[KernelRoof, float]]) -> list[tuple[str, float, float]]:
    """A group's kernels (each with its time) whose % is no distance to a limit, by why
    (``no_distance``): each reason, its kernels' time-weighted %, and their time, the longest first."""
    by_why: dict[str, list[tuple[float, float]]] = {}
    for roof, ms in members:
        if roof.pct is not None and (why := no_distance(roof)):
            by_why.setdefault(why, []).append((roof.pct, ms))
    parts = [(why, sum(p * ms for p, ms in xs) / den, den)
             for why, xs in by_why.items() if (den := sum(ms for _, ms in xs)) > 0]
    return sorted(parts, key=lambda part: -part[2])


def group_figures(members: list[tuple[KernelRoof, float]]
                  ) -> tuple[float | None, float | None, list[tuple[str, float, float]]]:
    """A group's ``pct_over_time`` and, where it has none, its ``qualified_parts`` (else [])."""
    pct, share = pct_over_time(members)
    return pct, share, (qualified_parts(members) if pct is None else [])


@dataclass
class GroupRoof:
    """A group's % of peak as the tables show it (a module's, a line's, an op's calls, the step's):
    ``group_figures``, the share of its time its ``parts`` hold, and whether its % takes in a
    kernel above the compute ceiling (``beats_compute_ceiling``; ``!`` in the tables)."""

    pct: float | None
    share: float | None  # of its time, the share ``pct`` is a mean over
    parts: list[tuple[str, float, float]]  # where it has no ``pct``: ``qualified_parts``
    parts_share: float | None  # of its time, the share its ``parts`` hold
    above_ceiling: bool

    def to_dict(self) -> dict[str, Any]:
        """As breakdown's JSON qualifies a kernel's % (``no_distance``, ``above_ceiling``)."""
        return {"pct": self.pct, "judged_share": self.share,
                **({"no_distance": [{"why": why, "pct": p, "ms": ms} for why, p, ms in self.parts],
                    "no_distance_share": self.parts_share} if self.parts else {}),
                **({"above_ceiling": True} if self.above_ceiling else {})}


def group_roof(members: list[tuple[KernelRoof, float]]) -> GroupRoof:
    """A group's kernels (each with its time) as one ``GroupRoof``."""
    pct, share, parts = group_figures(members)
    total = sum(ms for _, ms in members)
    parts_share = 100.0 * sum(ms for *_, ms in parts) / total if parts and total > 0 else None
    above = pct is not None and any(beats_compute_ceiling(roof) for roof, _ in members)
    return GroupRoof(pct, share, parts, parts_share, above)


def above_ceiling_in(own: KernelRoof, calls: list[tuple[KernelRoof, float]]) -> bool:
    """A row's % takes in a kernel above the compute ceiling (``!``): its own, or for an extern op
    called at several places, as the op view weighs its calls (``group_roof``), one of them."""
    return group_roof(calls).above_ceiling if len(calls) > 1 else beats_compute_ceiling(own)


def group_pct(members: list[tuple[KernelRoof, float]]) -> tuple[float | None, float | None, str]:
    """A group's % of peak (a module's, a source line's, an op's calls): ``pct_over_time``, and
    ""; where none of its kernels' % is a distance to a limit but some have a %, the figure of
    those of them that took the most time for one reason (``qualified_parts``: each latency-bound,
    or each in cache), the share of the group's time they hold, and that reason (``~`` or ``^`` in
    the tables; it says how short they are, or how far the cache lifts them)."""
    pct, share, parts = group_figures(members)
    if not parts:
        return pct, share, ""
    why, longest, ms = parts[0]
    total = sum(t for _, t in members)
    return longest, 100.0 * ms / total, why


def cache_key(key: dict[str, Any]) -> str:
    """The file name of a machine's cached peaks: a digest of what makes them differ (device
    name, driver, torch, clocks, threads)."""
    text = json.dumps(key, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def main_flops(c: Ceilings) -> float | None:
    """The fp32 figure where measured, else the highest: what a summary line names."""
    return c.tflops.get(FP32) or max(c.tflops.values(), default=None)
