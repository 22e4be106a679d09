"""The breakdown seen by kernel, op, module or source line (pure; no torch).

A view is made of *units*, each a piece of measured time with its origin: a generated kernel,
an extern op's call site, or an extern op's row where it was not split. Every unit lands in
exactly one group, so the groups of any view add up to the kernel time. A unit whose origin
spans several lines (or modules) is put in the group of all of them, never split between them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .results import BreakdownResult, GraphResult, KernelStat
from .source_chains import labels
from .sources import ROOT_MODULE, VIA, CallSite, Origin, SourceLine, at_depth, distinct_lines, path_order
from .vocab import Role


class By:
    KERNEL = "kernel"
    OP = "op"
    MODULE = "module"
    LINE = "line"
    ALL = (KERNEL, OP, MODULE, LINE)


@dataclass
class Unit:
    graph: GraphResult
    kernel: KernelStat  # the kernel row, or the op row a call site is part of
    ms: float
    calls: float
    origin: Origin | None
    site: CallSite | None = None

    @property
    def backward(self) -> bool:
        return self.graph.role == Role.BACKWARD

    @property
    def site_mark(self) -> str:
        """`` #n`` for the n-th extern call of the module; nothing for a kernel row."""
        if self.site is None:
            return ""
        return f" #{self.site.index}" if self.site.extern else f" @{self.site.occurrence}"


@dataclass
class Group:
    key: tuple[str, ...]  # the lines ("file:line") or module paths of the group; () = missing
    lines: list[SourceLine] = field(default_factory=list)
    missing: str | None = None  # why the group's units have no line / module
    units: list[Unit] = field(default_factory=list)
    built: bool = False  # ``lines`` built the units' modules: none of their own ran (built_lines)

    @property
    def ms(self) -> float:
        return sum(u.ms for u in self.units)

    @property
    def backward_ms(self) -> float:
        return sum(u.ms for u in self.units if u.backward)

    @property
    def forward_ms(self) -> float:
        return self.ms - self.backward_ms

    @property
    def one_kernel(self) -> Unit | None:
        """The first unit of a group whose units are all one kernel's (of one graph: its calls
        at several places too), which the views name; None where it holds several."""
        kernels = {(u.graph.id, u.kernel.name) for u in self.units}
        return self.units[0] if len(kernels) == 1 else None


def units(graphs: list[GraphResult], *, split: bool = True, kernel_calls: bool = False,
          weights: dict[str, float] | None = None) -> list[Unit]:
    """The measured time of ``graphs``: each kernel, with extern ops as their call sites
    where they were split (``split``) and as one row otherwise; with ``kernel_calls``, a
    generated kernel called at several places as its calls too (one code: one row in a
    ranking of kernels; a model's lines and modules get each call's own time). With
    ``weights`` (graph id -> its calls: ``BreakdownResult.weights``), each unit's time and
    calls are those of all its graph's calls; without, of one call."""
    out: list[Unit] = []
    for g in graphs:
        w = 1.0 if weights is None else weights[g.id]
        sites: dict[str, list[CallSite]] = {}
        for s in g.sites if split else []:
            if s.extern or kernel_calls:
                sites.setdefault(s.kernel, []).append(s)
        for k in g.kernels:
            if k.name in sites:
                out += [Unit(g, k, w * s.ms, w * s.calls, s.origin, s) for s in sites[k.name]]
            else:
                out.append(Unit(g, k, w * k.ms, w * k.calls, k.origin))
    return out


def step_units(result: BreakdownResult, **kw: bool) -> list[Unit]:
    """``units`` of every measured graph of the step (or script), each weighed by its calls."""
    return units(result.measured(), weights=result.weights(), **kw)


def top_step_units(result: BreakdownResult, **kw: bool) -> list[Unit]:
    """``step_units``, the most time first (the top kernels' table and chart)."""
    return sorted(step_units(result, **kw), key=lambda u: -u.ms)


def _missing(u: Unit, what: str) -> str:
    if u.origin is None:
        return u.graph.attribution or f"no {what} recorded for this kernel"
    return u.origin.missing or f"no {what} recorded for this kernel"


def built_lines(origin: Origin | None, sites: dict[str, list[Any]]) -> list[SourceLine]:
    """For a kernel with no line of the model, the lines that built its modules (an
    ``nn.Sequential`` of torch's own layers; ``runner/module_sites.py``), by file and line."""
    if origin is None or origin.lines:
        return []
    found = {(s[0], int(s[1])): SourceLine(str(s[0]), int(s[1]), str(s[2]), str(s[3]))
             for m in origin.modules if len(s := sites.get(m) or []) == 4}
    return [found[k] for k in sorted(found)]


def by_line(us: list[Unit]) -> list[Group]:
    """Units grouped by the set of model source lines they come from, largest first, a line
    reached from several callers by caller (``source_chains.labels``); a unit with none, by
    the lines that built its modules (``built``) where known."""
    groups: dict[tuple[str, ...], Group] = {}
    shown = labels(ln for u in us if u.origin for ln in u.origin.lines)
    for u in us:
        lines = distinct_lines(shown[ln] for ln in u.origin.lines) if u.origin else []
        built = built_lines(u.origin, u.graph.module_sites)
        if lines or built:
            key = (*(("built",) if built else ()), *(_line_key(ln) for ln in lines or built))
            g = groups.setdefault(key, Group(key, list(lines or built), built=bool(built)))
        else:
            why = _missing(u, "source line")
            g = groups.setdefault(("", why), Group((), missing=why))
        g.units.append(u)
    return _ordered(groups)


def _line_key(ln: SourceLine) -> str:
    """``net.py:16`` as the view keys it (full path), with the callers it is split by."""
    return VIA.join(f"{x.file}:{x.line}" for x in (ln, *ln.via))


# Between a module path and the line that built the module, in a module view's group key
BUILT_AT = " @ "


def module_key(path: str, sites: dict[str, list[Any]]) -> str:
    """A module path as the module view groups it: with the line that built the module where
    known (``0 @ /m/two.py:3``), so that the ``0`` of two compiled ``nn.Sequential``s stay apart."""
    site = sites.get(path) or []
    return f"{path}{BUILT_AT}{site[0]}:{site[1]}" if len(site) == 4 else path


def by_module(us: list[Unit], depth: int | None = None, roots: dict[str, str] | None = None) -> list[Group]:
    """Units grouped by the set of ``nn.Module`` paths (cut to ``depth`` parts) they ran in, each
    with the line that built it where known (``module_key``); a graph's own code by its name in
    ``roots`` (``compiled_from.top_levels``) where it has one, after the modules (``module_order``)."""
    groups: dict[tuple[str, ...], Group] = {}
    for u in us:
        paths = module_order({at_depth(m, depth) for m in u.origin.modules}) if u.origin else []
        mods = [module_key(named_root(p, u.graph.id, roots), u.graph.module_sites) for p in paths]
        if mods:
            key = tuple(mods)
            g = groups.setdefault(key, Group(key))
        else:
            why = _missing(u, "module")
            g = groups.setdefault(("", why), Group((), missing=why))
        g.units.append(u)
    return _ordered(groups)


def module_order(paths: set[str]) -> list[str]:
    """Module paths in a group's order: by path (``blocks.2`` before ``blocks.10``), the graph's
    own code (``ROOT_MODULE``) last: a kernel that fuses a module's work with code outside every
    module reads as that module's first (``norm (LayerNorm) + (top level)``), and the kernels of
    several such groups do not all read as the top level's."""
    return sorted(paths, key=lambda p: (p == ROOT_MODULE, path_order(p), p))


def named_root(path: str, graph_id: str, roots: dict[str, str] | None) -> str:
    """``path``, or for the graph's own code (``ROOT_MODULE``) its name in ``roots``."""
    return (roots or {}).get(graph_id, path) if path == ROOT_MODULE else path


def _ordered(groups: dict[tuple[str, ...], Group]) -> list[Group]:
    return sorted(groups.values(), key=lambda g: (-g.ms, g.key, g.missing or ""))


def has_sources(result: BreakdownResult) -> bool:
    """Whether any kernel of the result has an origin (results before schema 2 have none)."""
    return any(k.origin is not None for g in result.measured() for k in g.kernels)


@dataclass
class Recomputed:
    """The kernels and extern calls of a backward graph made only of the forward's work, done
    again there (``Origin.recomputed``), and their time in one call of the graph."""

    graph: GraphResult
    count: int
    ms: float


def recomputed(result: BreakdownResult) -> list[Recomputed]:
    """Per measured backward graph that recomputes forward work: what it recomputes."""
    out = []
    for g in (g for g in result.measured() if g.recompute_marked):
        us = [u for u in units([g]) if u.backward and u.origin is not None and u.origin.recomputed]
        if us:
            out.append(Recomputed(g, len(us), sum(u.ms for u in us)))
    return out


def recomputes_known(result: BreakdownResult) -> bool:
    """Whether every measured backward graph's record could mark its recomputed work (a run
    saved before the marks, or torch 2.5's, cannot: nothing recomputed is then unknown, not 0)."""
    return all(g.recompute_marked for g in result.measured() if g.role == Role.BACKWARD)


def recomputed_step_ms(result: BreakdownResult, found: list[Recomputed]) -> float:
    """The time in one step of ``found`` (``recomputed(result)``): each graph's times its calls."""
    weights = result.weights()
    return sum(x.ms * weights.get(x.graph.id, 1.0) for x in found)
