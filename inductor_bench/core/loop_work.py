"""A ``torch.while_loop``'s kernels, counted per trip (pure; no torch).

Inductor writes a ``while_loop``'s condition and body as subgraph functions of the module,
called from a Python ``while`` of ``call``::

    while should_loop:
        (buf1[0], buf1[1]) = while_loop_body_graph_0(while_loop_body_graph_0_args)
        (buf1_cond_result,) = while_loop_cond_graph_0(while_loop_cond_graph_0_args)

They run a number of times known only at run time; ``run_order`` puts each in ``call``'s order
once, at its first call. Each function is compiled for one size: where its lines name no size symbol
(``s0``, ``u0``, ``ks0``: nothing that could change from one trip to the next), one call of it
is read like ``call``'s (the shapes its asserts and allocations state, the element types of
the kernel's signature), so each of its kernels moves the same bytes at every launch; the
kernel's count per iteration is that launch's times its launches per iteration as profiled
(``KernelStat.calls``: the trips, and one more for the condition). Where a size symbol is
named, a kernel is called at unequal sizes within one call, or the kernel is also launched
outside the loop, it keeps no count. An extern call a loop's function makes (a GEMM in the
body) is one call's work times the function's calls per iteration: those of a generated kernel
only it launches over that kernel's launches per call of it, none where no such kernel ran (a
loop of no trips: the op's calls outside the loop are still counted); a body without one, or
naming a size symbol, leaves its op without a count.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

from .breakdown import op_name
from .buffers import BufferTable, CallArgs
from .devices import HOST, backend
from .kernel_space import reach
from .modparse import SUBGRAPH_CALL, ModuleInfo, function_body, loop_functions, partition_names, run_order
from .module_calls import call_of
from .results import GraphResult
from .work import Work, generated_work, kernel_params, kernel_values

_SYMBOL = re.compile(r"\b(?:s|u|ks)\d+\b")


def per_launch(module: ModuleInfo, lines: list[str], fn: str) -> dict[str, Work | None]:
    """Each kernel one call of ``fn`` launches -> the work of one launch (None where it cannot
    be counted: a size symbol in ``fn``, a nested subgraph, unequal launches)."""
    body = [lines[i] for i in function_body(lines, fn)]
    fixed = not any(_SYMBOL.search(ln) or SUBGRAPH_CALL.match(ln) for ln in body)
    table = BufferTable()
    works: dict[str, list[Work]] = {}
    for ln in body:
        call = call_of(ln, module)
        if call is None:
            table.read_line(ln)
            continue
        table.bind(call)
        if call.extern:
            continue
        k = module.kernels[call.name]
        params = kernel_params(k)
        works.setdefault(call.name, []).append(
            generated_work(k, call, params, reach(k.source, k.kind, kernel_values(params, call))))
    return {name: ws[0] if fixed and all(w == ws[0] for w in ws) else None for name, ws in works.items()}


def count_loops(graph: GraphResult, module: ModuleInfo, text: str) -> GraphResult:
    """Fill the counts of the kernels a ``while_loop``'s functions launch (see the module doc):
    one launch's bytes and FLOPs times the kernel's launches per iteration."""
    lines = text.splitlines()
    names = partition_names(text)
    fns = loop_functions(lines, names)
    launched: dict[str, list[Work | None]] = {}
    for fn in fns:
        for name, work in per_launch(module, lines, fn).items():
            launched.setdefault(name, []).append(work)
    inside = loop_lines(lines, fns)
    outside = {c.name for i, c in _calls(module, lines, names) if i not in inside}
    within = {c.name for i, c in _calls(module, lines, names) if i in inside and not c.extern}
    for k in graph.kernels:
        works = launched.get(k.name)
        if k.name not in within:
            continue
        w = works[0] if works else None
        if w is None or k.name in outside or any(x != w for x in works) or not k.calls:
            k.bytes = k.flops = k.compute = k.work_from = None
            continue
        k.bytes = None if w.bytes is None else w.bytes * k.calls
        k.flops = None if w.flops is None else w.flops * k.calls
        k.compute, k.work_from = w.compute, w.source
    return graph


def loop_lines(lines: list[str], fns: list[str]) -> set[int]:
    """The lines of the functions ``fns`` and of the subgraph functions they call."""
    out: set[int] = set()
    todo, seen = list(fns), set(fns)
    while todo:
        for i in function_body(lines, todo.pop()):
            out.add(i)
            if (m := SUBGRAPH_CALL.match(lines[i])) is not None and m["fn"] not in seen:
                seen.add(m["fn"])
                todo.append(m["fn"])
    return out


def with_trips(pairs: list[tuple[CallArgs, Work]], graph: GraphResult, module: ModuleInfo,
               text: str) -> list[tuple[CallArgs, Work]]:
    """``call_work``'s calls, each extern call a loop's function makes counted as one call's
    times the function's calls per iteration (``runs_per_iteration``); none (bytes and FLOPs
    unknown) where those are not known, or where on the host its op's row ran other than the
    calls so found (its calls outside the loop, one each, and those in it)."""
    lines = text.splitlines()
    names = partition_names(text)
    fns = loop_functions(lines, names)
    inside = loop_lines(lines, fns)
    if not inside:
        return pairs
    own, runs = _own_lines(lines, fns), runs_per_iteration(graph, module, lines, names)
    factors = [1.0 if i not in inside else runs.get(own.get(i, "")) for i, c in _calls(module, lines, names)
               if c.extern]
    ops = [op_name(c.name) or c.name for c, _ in pairs if c.extern]
    found: dict[str, float | None] = {}
    for op, f in zip(ops, factors, strict=False):
        found[op] = None if f is None or (op in found and found[op] is None) else found.get(op, 0.0) + f
    rows = {k.name: k.calls for k in graph.kernels} if backend(graph.device).timeline == HOST else {}
    wrong = {op for op, f in zip(ops, factors, strict=False)
             if f != 1.0 and op in rows and not _same(found[op], rows[op])}
    out, e = [], 0
    for c, w in pairs:
        if c.extern:
            f = None if e >= len(factors) or ops[e] in wrong else factors[e]
            e += 1
            if f != 1.0:
                w = replace(w, bytes=None if f is None or w.bytes is None else w.bytes * f,
                            flops=None if f is None or w.flops is None else w.flops * f)
        out.append((c, w))
    return out


def runs_per_iteration(graph: GraphResult, module: ModuleInfo, lines: list[str], names: list[str],
                       ) -> dict[str, float | None]:
    """Each function a loop calls -> its calls per iteration: the launches per iteration (as
    profiled) of a generated kernel no other function or line launches, over its launches per
    call of the function (none, where the graph's kernels ran and none of those did: a loop of no
    trips); None where it has no such kernel, they disagree, or its lines name a size symbol or
    call another function (a call of it could then do other work)."""
    own = _own_lines(lines, loop_functions(lines, names))
    launches: dict[str, dict[str, int]] = {}  # function -> kernel -> its launches per call
    where: dict[str, set[str]] = {}  # kernel -> the loop's functions launching it, "" for any other line
    for i, c in _calls(module, lines, names):
        fn = own.get(i, "")
        if not c.extern:
            per = launches.setdefault(fn, {})
            per[c.name] = per.get(c.name, 0) + 1
            where.setdefault(c.name, set()).add(fn)
    calls = {k.name: k.calls for k in graph.kernels}
    out: dict[str, float | None] = {}
    for fn in set(own.values()):
        body = [lines[i] for i in own if own[i] == fn]
        fixed = not any(_SYMBOL.search(ln) or SUBGRAPH_CALL.match(ln) for ln in body)
        mine = [k for k in launches.get(fn, {}) if where[k] == {fn}]
        got = {calls[k] / launches[fn][k] for k in mine if calls.get(k)}
        if calls and mine and not any(k in calls for k in mine):
            got = {0.0}  # none of its kernels ran: a loop of no trips
        out[fn] = got.pop() if fixed and len(got) == 1 else None
    return out


def _same(a: float | None, b: float) -> bool:
    return a is not None and math.isclose(a, b, rel_tol=1e-9)


def _own_lines(lines: list[str], fns: list[str]) -> dict[int, str]:
    """Each line of the functions ``fns`` (not of those they call) -> its function."""
    return {i: fn for fn in fns for i in function_body(lines, fn)}


def _calls(module: ModuleInfo, lines: list[str], names: list[str]) -> list[tuple[int, CallArgs]]:
    """The calls of ``run_order``'s lines, with their line indices."""
    return [(i, c) for i, _ in run_order(lines, names) if (c := call_of(lines[i], module)) is not None]
