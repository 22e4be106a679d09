"""How far each kernel is from the device's limit: achieved GB/s and TFLOP/s, arithmetic
intensity, % of the measured ceiling at that intensity, and a bound verdict (pure; no torch).

A kernel's counts (``KernelStat.bytes`` / ``flops``, per iteration: ``core/work.py``) are
divided by its time, the statistics policy's figure (``KernelStat.ms``), never a time of its
own. Its limit is the roofline at its intensity I = FLOPs / bytes: min(peak FLOP/s,
I x peak bandwidth), with the measured ceilings (``core/ceilings.py``, where ``kernel_roof``
lives so that a result can write the figures into its JSON). A kernel without a FLOP count is
held against the bandwidth alone. The verdict:

- **memory-bound**: its intensity is below the ridge point (peak FLOP/s / peak bandwidth), or
  it has no FLOP count;
- **compute-bound**: at or above the ridge point;
- **latency-bound**: even at the ceilings one launch would take less than ``LATENCY_FLOOR_US``
  (a launch, or a parallel region's start and join, costs about that much on its own), and it
  took less than ``LATENCY_SLACK`` times that cost plus its ideal time, so its % of peak says
  how short it is, not how slow. A launch that took longer is slow for another reason (a
  transcendental per element, a strided access) and keeps its memory or compute verdict;
- **not its data**: without a FLOP count, under ``NOT_DATA_PCT`` of the bandwidth and not too
  short: its time is work no count holds (a mask computed from indices).
"""

from __future__ import annotations

import math
from dataclasses import replace
from itertools import groupby

from .call_groups import as_judged, by_category, grouped
from .call_pairs import Call, call_move, one_side_words, pair_calls, same_inputs, strides_alike
from .ceilings import (
    FAR_BELOW_PCT,
    LATENCY,
    LATENCY_FLOOR_US,
    LATENCY_SLACK,
    MEASURE_AGAIN_PCT,
    Ceilings,
    KernelRoof,
    Roofline,
    above_ceiling_in,
    beats_compute_ceiling,
    group_pct,
    group_roof,
    kernel_roof,
    no_distance,
    pct_over_time,
    same_figures,
    shared_ceilings,
)
from .devices import backend
from .diff_records import ADDED, REMOVED, SectionDiff
from .results import BreakdownResult, GraphResult, KernelStat
from .sources import CallSite
from .views import units


def short_when_undisturbed(k: KernelStat, roof: KernelRoof, device: str) -> float | None:
    """A latency-bound kernel whose mean launch, the row's time, is too long to be short (other
    work stalled some of its iterations; ``kernel_roof`` judges on its fastest): that fastest
    launch in µs; None where its mean launch is short too, or it is not latency-bound."""
    if roof.bound != LATENCY or roof.pct is None or k.calls <= 0 or not k.samples_ms:
        return None
    mean_us = k.ms * 1e3 / k.calls
    floor = LATENCY_FLOOR_US.get(backend(device).timeline, 5.0)
    if mean_us < LATENCY_SLACK * (floor + roof.pct / 100 * mean_us):
        return None
    return min(k.samples_ms) * 1e3 / k.calls


def far_below(k: KernelStat, roof: KernelRoof) -> bool:
    """Under ``FAR_BELOW_PCT`` of its limit, and long enough to have reached it."""
    return roof.pct is not None and roof.pct < FAR_BELOW_PCT and roof.bound != LATENCY


def category_far_below_ms(result: BreakdownResult,
                          graphs: list[GraphResult] | None = None) -> dict[str, float]:
    """Category -> ms of its kernels under ``FAR_BELOW_PCT`` of their limit: in all the graphs
    (each graph times its calls), or in one call of each of ``graphs``."""
    c = ceilings_of(result)
    w = result.weights() if graphs is None else {g.id: 1.0 for g in graphs}
    out: dict[str, float] = {}
    for g in result.measured() if graphs is None else graphs:
        for k in judged(g):
            if far_below(k, kernel_roof(k, c, g.device)):  # each kernel's time in its own category
                for cat, ms in by_category(g, k).items():
                    out[cat] = out.get(cat, 0.0) + w[g.id] * ms
    return out


def judged(g: GraphResult) -> list[KernelStat]:
    """The graph's kernels as each is held against its limit: an extern op called at several
    places (a model's 16 linears, one ``mkldnn::_linear_pointwise`` row) as each of its call
    sites, split as the tables split it (``views.units``), with that call's time and counts
    (``site_stat``); the op row itself where a site was not counted or the sites do not
    account for its time. Their times add up to the graph's kernel time."""
    return [k for k, _ in judged_sites(g)]


def judged_sites(g: GraphResult) -> list[tuple[KernelStat, str]]:
    """``judged``, each with the mark a call site's row has (`` #3``; none for a kernel or op)."""
    return [(k, mark) for k, mark, _ in judged_calls(g)]


def judged_calls(g: GraphResult) -> list[tuple[KernelStat, str, CallSite | None]]:
    """``judged_sites``, each with its call site (None for a kernel or an op row)."""
    out: list[tuple[KernelStat, str, CallSite | None]] = []
    for _, group in groupby(units([g]), key=lambda u: id(u.kernel)):
        us = list(group)
        k = us[0].kernel
        parts = [(site_stat(g, k, u.site), u.site_mark, u.site) for u in us if u.site is not None]
        whole = (not parts or any(p is k for p, _, _ in parts)  # site_stat: the op row where not counted
                 or abs(k.ms - sum(p.ms for p, _, _ in parts)) > 1e-6 * max(k.ms, 1e-9))
        out += [(k, "", None)] if whole else parts
    return grouped(g, out)  # a device's extern call: all the kernels it launched, as one


def site_stat(g: GraphResult, k: KernelStat, site: CallSite) -> KernelStat:
    """One extern call site as a kernel of its own: its time, calls and counts (its op row's
    compute type), for its own figures; the op row itself where the site was not counted. A
    generated kernel's call moves and computes its share of the kernel's (one code, one size).
    Its iterations are the site's own: the latency verdict reads the fastest of them, which for
    the row's are all its calls together."""
    own = {"samples_ms": list(site.samples_ms)}
    if not site.extern:
        share = site.calls / k.calls if k.calls else 0.0
        scaled = {n: None if getattr(k, n) is None else getattr(k, n) * share for n in ("bytes", "flops")}
        return replace(k, ms=site.ms, calls=site.calls, **scaled, **own)
    if not 0 <= site.index < len(g.site_counts):
        return k
    moved, flops = g.site_counts[site.index]
    return replace(k, ms=site.ms, calls=site.calls, bytes=moved, flops=flops, **own)


def kernel_pcts(result: BreakdownResult, c: Ceilings | None = None
                ) -> dict[tuple[str, str], tuple[KernelRoof, bool]]:
    """(graph, kernel) -> its figures against the ceilings, for the kernels of a result with
    ceilings (its own, or ``c``) that have a % of their limit; a row called at several places
    as the op view judges it (``op_roof``), not its calls' figures pooled; and whether its %
    takes in a kernel above the compute ceiling, as the op view marks it (``above_ceiling_in``)."""
    c = c or ceilings_of(result)
    out = {}
    for g in result.measured():
        calls: dict[str, list[tuple[KernelRoof, float]]] = {}
        for j, _, site in judged_calls(g):
            if site is not None:
                calls.setdefault(site.kernel, []).append((kernel_roof(j, c, g.device), j.ms))
        for k in g.kernels:  # an extern call's kernels on a device as one (``call_groups``)
            own, its_calls = kernel_roof(as_judged(g, k) or k, c, g.device), calls.get(k.name, [])
            if (roof := op_roof(own, its_calls)).pct is not None:
                out[(g.id, k.name)] = roof, above_ceiling_in(own, its_calls)
    return out


def step_pct(result: BreakdownResult, c: Ceilings | None = None) -> float | None:
    """The time-weighted mean % of peak of the step's counted kernels (each graph's times its
    calls), those whose % is no distance to a limit left out (``no_distance``: a latency-bound
    one's says how short it is, an in-cache one's is above the DRAM ceiling that does not bound
    it); None without ceilings or counts. Against the result's own ceilings, or ``c``."""
    return weighted_pct(result, c)[0]


def judged_share(result: BreakdownResult, c: Ceilings | None = None) -> float | None:
    """The share (%) of the step's kernel time that ``step_pct`` is a mean over: the kernels
    with a % that is a distance to their limit (a template without a FLOP count has none)."""
    return weighted_pct(result, c)[1]


def weighted_pct(result: BreakdownResult, c: Ceilings | None = None) -> tuple[float | None, float | None]:
    """(``step_pct``, ``judged_share``) in one pass over the step's kernels."""
    return pct_over_time(step_members(result, c))


def step_members(result: BreakdownResult, c: Ceilings | None = None) -> list[tuple[KernelRoof, float]]:
    """The step's counted kernels against the ceilings (its own, or ``c``), each with its time in
    the step: what ``weighted_pct`` weighs, and ``group_roof`` qualifies as the views' total row."""
    c = c or ceilings_of(result)
    w = result.weights()
    return [(kernel_roof(k, c, g.device), w[g.id] * k.ms) for g in result.measured() for k in judged(g)]


def op_roof(own: KernelRoof, calls: list[tuple[KernelRoof, float]]) -> KernelRoof:
    """A row called at several places (its calls' figures, each with its time) as the op view
    judges it (``group_pct``): its calls' time-weighted %, bound as the longest of them it is over
    (latency-bound where it is theirs, memory where they are in cache; where none is a distance to
    a limit, the reason that holds most of its time); its own figures where it has no such % or
    one call."""
    pct, _, why = group_pct(calls) if len(calls) > 1 else (None, None, "")
    if pct is None:
        return own
    judged = [(ms, r) for r, ms in calls if r.pct is not None and no_distance(r) == why]
    return replace(own, pct=pct, bound=max(judged, key=lambda x: x[0])[1].bound)


def roofline_moves(section: SectionDiff, base: BreakdownResult, head: BreakdownResult) -> None:
    """Each paired kernel's % of peak on both sides, and each side's time-weighted %, where
    the side has ceilings: how a change or a mode moved the kernels toward their limit; with
    or without, each extern op's paired calls whose shapes changed (``shapes_changed``)."""
    if base.roofline is None and head.roofline is None:
        _call_moves(section, base, head, None, moves=False)  # which calls changed shapes, still
        return
    cb, ch = ceilings_of(base), ceilings_of(head)
    shared = shared_ceilings(cb, ch)  # one device measured twice: both against the higher figures
    bp, hp = kernel_pcts(base, shared), kernel_pcts(head, shared)
    for k in section.kernels:
        b, h = bp.get((k.base_graph or k.graph, k.base_name or k.name)), hp.get((k.graph, k.name))
        k.base_pct, k.head_pct = (r[0].pct if r else None for r in (b, h))
        k.no_distance = _no_distance_words(b[0] if b else None, h[0] if h else None)
        k.above_ceiling = [side for side, r in (("base", b), ("head", h)) if r and r[1]]
    _call_moves(section, base, head, shared)
    # a side without a roofline of its own (a run stopped before its ceilings were measured)
    # has no %: none is made for it against the other side's ceilings
    bs, hs = (group_roof(step_members(r, shared)) if r.roofline is not None else None for r in (base, head))
    section.roofline_sides = (bs, hs)
    section.roofline_loaded = any(held_under_load(c, shared) for c in (cb, ch))
    if cb is not None and ch is not None and not same_figures(cb, ch):
        section.roofline_ceilings = (cb, ch, shared)


def held_under_load(c: Ceilings | None, shared: Ceilings | None) -> bool:
    """A side's ceilings were measured under load (may be low) and a figure of theirs is one its
    kernels are held against: its own, or the higher one of two runs' (``shared_ceilings``)."""
    if c is None or not c.load:
        return False
    return (shared is None or c.gbps == shared.gbps
            or any(shared.tflops.get(t) == v for t, v in c.tflops.items()))


def _no_distance_words(b: KernelRoof | None, h: KernelRoof | None) -> str:
    return ", ".join(f"{why} in {side}" for side, r in (("base", b), ("head", h))
                     if r is not None and (why := no_distance(r)))


def _call_moves(section: SectionDiff, base: BreakdownResult, head: BreakdownResult,
                c: Ceilings | None, moves: bool = True) -> None:
    """Each paired extern op's calls, as ``judged_calls`` holds them against their limit, each
    paired with the same call on the other side (``call_pairs.pair_calls``: ``KernelDiff.calls``,
    the calls on one side only in ``calls_one_side``); where none pairs, why its move stays the
    op's (``KernelDiff.calls_unpaired``). The pairs whose shapes differ in ``shapes_changed``,
    alone where not ``moves`` (neither side has ceilings)."""
    bc, hc = strides_alike(_calls_of(base, c), _calls_of(head, c))
    w = head.weights()
    for k in section.kernels:
        if k.status in (ADDED, REMOVED):
            continue
        b, h = bc.get((k.base_graph or k.graph, k.base_name or k.name), []), hc.get((k.graph, k.name), [])
        pairs, b_left, h_left = pair_calls(b, h)
        k.shapes_changed = [k.name + ph.mark for pb, ph in pairs if not same_inputs(pb, ph)]
        if not moves:
            continue
        if pairs:
            k.calls = [call_move(k.graph, k.name, pb, ph, w.get(k.graph, 1.0)) for pb, ph in pairs]
            k.calls_one_side = one_side_words(b_left, h_left)
        elif b or h:
            k.calls_unpaired = f"{_calls_words(b)} in base, {_calls_words(h)} in head" + (
                ", none made from the same module and source line on both sides" if b and h else "")


def _calls_of(result: BreakdownResult, c: Ceilings | None) -> dict[tuple[str, str], list[Call]]:
    """(graph, op) -> its extern calls in call order, each with its figures against ``c`` (or
    the result's own ceilings)."""
    c = c or ceilings_of(result)
    out: dict[tuple[str, str], list[Call]] = {}
    for g in result.measured():
        for k, mark, site in judged_calls(g):
            if site is not None and site.extern:
                out.setdefault((g.id, k.name), []).append(Call(mark, k, kernel_roof(k, c, g.device), site))
    return out


def _calls_words(calls: list[Call]) -> str:
    if not calls:
        return "one row"
    marks = ", ".join(c.mark.strip() for c in sorted(calls, key=lambda c: c.site.index))
    return f"{len(calls)} call(s) ({marks})"


def ceilings_of(result: BreakdownResult) -> Ceilings | None:
    return result.roofline.measured if result.roofline is not None else None


def has_counts(result: BreakdownResult) -> bool:
    return any(k.bytes is not None for g in result.measured() for k in g.kernels)


def chart_points(result: BreakdownResult) -> list[tuple[str, KernelStat, KernelRoof]]:
    """(graph id, kernel, figures) of every kernel with a byte count, as ``judged`` holds it
    against its limit (an extern op's call sites each on its own, named with its mark as the
    tables name it: ``aten::convolution #1``), the most time in the step (or the script: its
    graph's calls times its own) first."""
    c = ceilings_of(result)
    w = result.weights()
    pts = [(g.id, replace(k, name=k.name + mark) if mark else k, kernel_roof(k, c, g.device))
           for g in result.measured() for k, mark in judged_sites(g) if k.bytes is not None and k.ms > 0]
    return sorted(pts, key=lambda p: -w[p[0]] * p[1].ms)


def above_compute_ceiling(points: list[tuple[str, KernelStat, KernelRoof]]
                          ) -> list[tuple[str, KernelStat, KernelRoof]]:
    """Of ``chart_points``, the compute-bound kernels above ``ABOVE_CEILING_PCT`` of the ceiling."""
    return [p for p in points if beats_compute_ceiling(p[2])]


def to_measure_again(points: list[tuple[str, KernelStat, KernelRoof]], c: Ceilings | None
                     ) -> dict[str, float]:
    """Compute type -> the fastest kernel (TFLOP/s) above its measured ceiling, for the types
    worth measuring again: those where a kernel beat both the ceiling by more than the
    measurement's noise (``MEASURE_AGAIN_PCT``) and, by as much, the fastest kernel that already
    made a run measure the type again
    (``Ceilings.checked_against``). Each new try needs a faster kernel than the last one, so a
    machine whose GEMMs really beat the square matmul is measured again a bounded number of
    times, not on every run."""
    if c is None:
        return {}
    want: dict[str, float] = {}
    for _, k, roof in above_compute_ceiling(points):
        t, rate = k.compute, roof.tflops
        if not t or rate is None or (roof.pct or 0.0) <= MEASURE_AGAIN_PCT:
            continue
        if rate > c.checked_against.get(t, 0.0) * MEASURE_AGAIN_PCT / 100.0:
            want[t] = max(want.get(t, 0.0), rate)
    return want


def ridge(c: Ceilings, compute: str) -> float | None:
    """FLOP per byte where the compute ceiling meets the bandwidth one."""
    f = c.flops_for(compute)
    return f * 1e3 / c.gbps if f and c.gbps else None


def finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)


__all__ = ["Roofline", "KernelRoof", "kernel_roof", "chart_points"]
