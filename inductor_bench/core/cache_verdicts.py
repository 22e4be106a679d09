"""Which graphs the FX graph cache's verdicts fell on: each verdict names its compile, the
report's graph ids start with it (``0-forward``, ``0.1-backward``), and a compile's graphs are
compiled forward first. Pure, no torch."""

from __future__ import annotations

from .vocab import Role

# the order a compile's graphs are compiled in: the forward (or inference) graph, then its backward
_COMPILED_FIRST = {Role.FORWARD: 0, Role.INFERENCE: 0, Role.BACKWARD: 1}


def verdict_graphs(verdicts: list[list[str]], graph_ids: list[str]) -> list[str | None]:
    """Each verdict's graph id, in the verdicts' order; None where its compile's graphs cannot
    be told apart (not one graph a verdict, a role twice, or the compile not named)."""
    by_compile: dict[str, list[str]] = {}
    for gid in graph_ids:
        by_compile.setdefault(gid.split("-", 1)[0], []).append(gid)
    seen: dict[str, int] = {}
    out: list[str | None] = []
    for name, _ in verdicts:
        graphs = _in_compile_order(by_compile.get(name, []))
        n = seen[name] = seen.get(name, -1) + 1
        own = sum(1 for other, _ in verdicts if other == name)
        out.append(graphs[n] if name and graphs and len(graphs) == own else None)
    return out


def _in_compile_order(graph_ids: list[str]) -> list[str]:
    """One compile's graph ids in the order compiled; empty where that order is not known (a
    role met twice, or one the compile order does not place)."""
    roles = [gid.split("-", 1)[1] if "-" in gid else "" for gid in graph_ids]
    ranks = [_COMPILED_FIRST.get(role) for role in roles]
    if None in ranks or len(set(ranks)) != len(ranks):
        return []
    return [gid for _, gid in sorted(zip(ranks, graph_ids, strict=True))]


def named_for(verdicts: list[list[str]], state: str, graph_ids: list[str]) -> str:
    """``: graphs 0-forward, 0-backward``: the graphs whose verdict was ``state``, each by its id
    where its compile's graphs can be told apart, else by its compile (``compile 1``); "" for none."""
    graphs: list[str] = []
    compiles: list[str] = []
    for (name, verdict), gid in zip(verdicts, verdict_graphs(verdicts, graph_ids), strict=True):
        if verdict == state and (gid or name):
            (graphs if gid else compiles).append(gid or name)
    parts = [_listed("graph", list(dict.fromkeys(graphs))), _listed("compile", list(dict.fromkeys(compiles)))]
    shown = [p for p in parts if p]
    return f": {' and '.join(shown)}" if shown else ""


def _listed(noun: str, names: list[str]) -> str:
    if not names:
        return ""
    return f"{noun}{'' if len(names) == 1 else 's'} {', '.join(names)}"
