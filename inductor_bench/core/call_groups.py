"""An extern call's kernels as one, on a device timeline (pure; no torch).

A GEMM or attention call may launch several device kernels: cuBLAS's split-K GEMM and the
``splitKreduce_kernel`` after it, an attention backward's main kernel and the small sums and
copies it launches beside it. The call's work (bytes, FLOPs) is counted on its main kernel (the
one that took most of its time, ``device_calls``); the other kernels it launched are recorded on
that kernel's row (``KernelStat.beside``: name -> launches and ms an iteration), and the roofline
holds the work against the time of all of them (``grouped``): the main kernel's row is judged
with their time added, and each other kernel's row with that time taken away (a row left with
none and no count of its own is not judged at all), so the rows judged still add up to the
graph's kernel time and each kernel's time is in one of them once. The kernel tables keep each
kernel's own time; its % of peak is its calls' (``as_judged``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TypeVar

from .device_calls import CallLaunches
from .results import GraphResult, KernelStat
from .trace import DEVICE_CATEGORIES, Trace

US_PER_MS = 1e3
Site = TypeVar("Site")  # a judged row's call site (``sources.CallSite``), or None


def set_beside(graph: GraphResult, launches: dict[int, CallLaunches], trace: Trace | None,
               one_call: bool = False) -> None:
    """Each kernel row's ``beside`` (and ``own_calls``, its own launches an iteration under
    those calls): the other measured kernels that the followed calls it is the main kernel of
    launched, each with its launches and its time an iteration under those
    calls: the mean over the graph's steady iterations of its per-iteration time there
    (``GraphResult.summary``, as every kernel row's figure); for
    ``one_call`` (the one call launched beside a graph's CUDA-graph replays), the kernel row's
    time times the share of that kernel's time in the one call that those calls took."""
    rows = {k.name: k for k in graph.kernels}
    us: dict[str, dict[str, list[float]]] = {}
    count: dict[str, dict[str, int]] = {}
    own: dict[str, int] = {}
    n = 1
    for c in launches.values():
        main = c.main
        own[main] = own.get(main, 0) + c.launches[main]
        for name, per_iter in c.us.items():
            if name == main or name not in rows:
                continue
            acc = us.setdefault(main, {}).setdefault(name, [0.0] * len(per_iter))
            for j, x in enumerate(per_iter):
                acc[j] += x
            mine = count.setdefault(main, {})
            mine[name] = mine.get(name, 0) + c.launches[name]
            n = len(per_iter)
    totals = _totals(trace) if one_call and trace is not None else {}
    for k in graph.kernels:
        mine = us.get(k.name)
        if not mine:
            k.beside = k.own_calls = None
            continue
        k.beside, k.own_calls = {}, own[k.name] / n
        for name, per_iter in sorted(mine.items()):
            if one_call:
                ms = rows[name].ms * sum(per_iter) / totals[name] if totals.get(name) else 0.0
            else:  # the policy's figure, as the kernel rows' (all iterations for a result saved before it)
                ms = graph.summary([x / US_PER_MS for x in per_iter]).ms
            k.beside[name] = [count[k.name][name] / n, min(ms, rows[name].ms)]


def _totals(trace: Trace) -> dict[str, float]:
    out: dict[str, float] = {}
    for ev in trace.events:
        if ev.cat in DEVICE_CATEGORIES:
            out[ev.name] = out.get(ev.name, 0.0) + ev.dur
    return out


def beside_ms(k: KernelStat) -> float:
    """The time an iteration of the other kernels ``k``'s calls launched (0 for none)."""
    return sum(ms for _, ms in (k.beside or {}).values())


def folded_ms(g: GraphResult) -> dict[str, float]:
    """Kernel name -> its time an iteration that is some main kernel's calls' (``beside``)."""
    out: dict[str, float] = {}
    for k in g.kernels:
        for name, (_, ms) in (k.beside or {}).items():
            out[name] = out.get(name, 0.0) + ms
    return out


def kernels_a_call(k: KernelStat) -> float:
    """The kernels its calls ran, its own launches and theirs, over its own launches (one a call
    for a GEMM's main kernel): 2 for a split-K GEMM and its reduction. Its own launches are
    those under the followed calls (``own_calls``), not those of calls that could not be
    followed, which launched nothing counted beside it (a result saved without them: all)."""
    calls = k.own_calls if k.own_calls else k.calls
    if not calls:
        return 1.0
    return (calls + sum(c for c, _ in (k.beside or {}).values())) / calls


def as_judged(g: GraphResult, k: KernelStat, folded: dict[str, float] | None = None) -> KernelStat | None:
    """A whole kernel row as the roofline judges it (the module docstring): with the time of the
    kernels its calls launched beside it, less its own time that other calls' main kernels took;
    None for a row left with no time and no count."""
    folded = folded_ms(g) if folded is None else folded
    away, extra = folded.get(k.name, 0.0), beside_ms(k)
    if not away and not extra:
        return k
    own = max(k.ms - away, 0.0)
    if own <= 1e-9 * max(k.ms, 1e-9) and k.bytes is None and not extra:
        return None
    shift = extra - away
    return replace(k, ms=own + extra, samples_ms=[max(s + shift, 0.0) for s in k.samples_ms])


def grouped(g: GraphResult, rows: list[tuple[KernelStat, str, Site]]) -> list[tuple[KernelStat, str, Site]]:
    """``rows`` (a graph's judged rows: kernel, mark, call site) with each whole row
    ``as_judged``; the rows a call site splits are left as they are."""
    folded = folded_ms(g)
    if not folded:
        return rows
    out = []
    for k, mark, site in rows:
        if site is None and not mark:
            j = as_judged(g, k, folded)
            if j is None:
                continue
            k = j
        out.append((k, mark, site))
    return out


def by_category(g: GraphResult, k: KernelStat) -> dict[str, float]:
    """A judged row's time by the category of each kernel in it: its own and the kernels its
    calls launched beside it (each kernel's time in its own category, as the category tables
    count it)."""
    cats = {x.name: x.category for x in g.kernels}
    out = {k.category: k.ms - beside_ms(k)}
    for name, (_, ms) in (k.beside or {}).items():
        cat = cats.get(name, k.category)
        out[cat] = out.get(cat, 0.0) + ms
    return out


def op_owners(kernels: list[KernelStat], ops: set[str]) -> dict[str, list[str]]:
    """Device timelines, the extern ops (of ``ops``) whose calls could not be followed one by
    one (``device_calls``): each op's work goes to the longest kernel it launched (a GEMM's own
    kernel, not the small reduction or cast beside it)."""
    best: dict[str, KernelStat] = {}
    for k in kernels:
        for op in (k.launched_by or "").split(", "):
            if op in ops and (op not in best or k.ms > best[op].ms):
                best[op] = k
    out: dict[str, list[str]] = {}
    for op, k in best.items():
        out.setdefault(k.name, []).append(op)
    return out
