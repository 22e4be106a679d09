"""A ``torch.while_loop``'s kernels, counted per trip (pure; no torch).

Inductor writes a ``while_loop``'s condition and body as subgraph functions of the module,
called from a Python ``while`` of ``call``::

    while should_loop:
        (buf1[0], buf1[1]) = while_loop_body_graph_0(while_loop_body_graph_0_args)
        (buf1_cond_result,) = while_loop_cond_graph_0(while_loop_cond_graph_0_args)

They run a number of times known only at run time, and ``run_order`` does not put them in
``call``'s order. Each function is compiled for one size: where its lines name no size symbol
(``s0``, ``u0``, ``ks0``: nothing that could change from one trip to the next), one call of it
is read like ``call``'s (the shapes its asserts and allocations state, the element types of
the kernel's signature), so each of its kernels moves the same bytes at every launch; the
kernel's count per iteration is that launch's times its launches per iteration as profiled
(``KernelStat.calls``: the trips, and one more for the condition). Where a size symbol is
named, a kernel is called at unequal sizes within one call, or the kernel is also launched
outside the loop, it keeps no count.
"""

from __future__ import annotations

import re

from .buffers import BufferTable, CallArgs, call_of
from .kernel_space import reach
from .modparse import ModuleInfo, function_body, partition_names, run_order
from .results import GraphResult
from .work import Work, generated_work, kernel_params, kernel_values

_WHILE = re.compile(r"^(?P<indent>\s*)while\b.*:\s*$")
_FUNCTION_CALL = re.compile(r"^\s+(?:\([^)]*\)|\w+)\s*=\s*(?P<fn>\w+)\((?P=fn)_args\)\s*$")
_SYMBOL = re.compile(r"\b(?:s|u|ks)\d+\b")


def loop_functions(lines: list[str], names: list[str]) -> list[str]:
    """The subgraph functions ``call`` (or a partition) calls inside a ``while``, in order."""
    out: list[str] = []
    for owner in ("call", *names):
        loop_indent: int | None = None
        for i in function_body(lines, owner):
            ln = lines[i]
            indent = len(ln) - len(ln.lstrip())
            if loop_indent is not None and ln.strip() and indent <= loop_indent:
                loop_indent = None
            if (w := _WHILE.match(ln)) is not None:
                loop_indent = len(w["indent"])
            elif loop_indent is not None and (m := _FUNCTION_CALL.match(ln)) and m["fn"] not in out:
                out.append(m["fn"])
    return out


def per_launch(module: ModuleInfo, lines: list[str], fn: str) -> dict[str, Work | None]:
    """Each kernel one call of ``fn`` launches -> the work of one launch (None where it cannot
    be counted: a size symbol in ``fn``, a nested subgraph, unequal launches)."""
    body = [lines[i] for i in function_body(lines, fn)]
    fixed = not any(_SYMBOL.search(ln) or _FUNCTION_CALL.match(ln) for ln in body)
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
    launched: dict[str, list[Work | None]] = {}
    for fn in loop_functions(lines, names):
        for name, work in per_launch(module, lines, fn).items():
            launched.setdefault(name, []).append(work)
    outside = {c.name for c in _top_level_calls(module, lines, names)}
    for k in graph.kernels:
        works = launched.get(k.name)
        if not works:
            continue
        w = works[0]
        if w is None or k.name in outside or any(x != w for x in works) or not k.calls:
            k.bytes = k.flops = k.compute = k.work_from = None
            continue
        k.bytes = None if w.bytes is None else w.bytes * k.calls
        k.flops = None if w.flops is None else w.flops * k.calls
        k.compute, k.work_from = w.compute, w.source
    return graph


def _top_level_calls(module: ModuleInfo, lines: list[str], names: list[str]) -> list[CallArgs]:
    """The calls ``call`` makes outside the loop's functions (``run_order`` leaves them out)."""
    return [c for i, _ in run_order(lines, names) if (c := call_of(lines[i], module)) is not None]
