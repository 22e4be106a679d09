"""Read an Inductor compiled module's source (pure text; no torch import).

From the module we learn its role (``# AOT ID``), every kernel it defines (Triton or
C++, with the kernel's own source), where each kernel came from (the
``Original ATen: [...]`` comments), the Triton kernel files it names
(``# kernel path:``), the extern calls it makes (``extern_kernels.mm`` ...), and how it is
partitioned.

Graph partitions (torch 2.11+ with CUDA graphs on): the launches are written into module-level
``def partition_N(args)`` functions, ``Runner.call`` runs ``self.partitions[N](...)`` with eager
work between them, and ``runner = Runner(partitions=[partition_0, ...])`` lists them.
``run_order`` gives a module's ``call`` lines in the order they run, each partition call
replaced by that partition's body; every reader of the calls goes through it.

Subgraphs (a ``torch.compiler.nested_compile_region``'s ``invoke_subgraph``, ``torch.cond``'s
branches) are module-level functions too, ``def partitioned_fw_subgraph_1_0(args)``, called as
``buf2 = partitioned_fw_subgraph_1_0(partitioned_fw_subgraph_1_0_args)``: ``run_order`` puts
the subgraph's body where each such call is, once per call (a region called for two layers runs
its kernels twice), and both branches of a ``cond`` in the order they are written. A
``while_loop``'s condition and body, called inside a ``while`` of ``call`` as ``(buf1[0],
buf1[1]) = while_loop_body_graph_0(while_loop_body_graph_0_args)``, run as many times as the
values decide (also inside a ``while`` of a subgraph function: a loop in a ``cond``'s branch):
each is put in once, at its first call (the condition's, before the loop).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from . import cppwrapper
from .devices import device_of_module
from .module_types import (  # the types every reader of a module names from here
    RECORD,
    EagerCall,
    ExternCall,
    KernelInfo,
    ModuleInfo,
    Partitioning,
    cpp_heuristic,
    fused_ops_from_name,
    role_of,
    split_list,
)

_AOT_ID = re.compile(r"^# AOT ID: \['([^']*)'\]", re.M)
_KERNEL_DEF = re.compile(
    r"^(?P<name>\w+) = async_compile\.(?P<kind>triton|cpp_pybinding|cpp|cuda|rocm|halide)\(",
    re.M,
)
_ORIGIN = re.compile(
    r"#\s*(?:Topologically Sorted|Unsorted) Source Nodes: \[(?P<nodes>[^\]]*)\], "
    r"Original ATen: \[(?P<aten>[^\]]*)\]"
)
_KERNEL_PATH = re.compile(r"^# kernel path: (?P<path>\S+)\s*$")
_HEURISTIC = re.compile(r"@triton_heuristics\.(\w+)\(")
_EXTERN_CALL = re.compile(
    r"^\s+(?:(?P<lhs>\w+)\s*=\s*)?(?P<callee>extern_kernels\.\w+|aten\.[\w.]+|torch\.ops\.[\w.]+)"
    r"\((?P<args>.*)$"
)
# ``buf3.copy_(buf4, False)`` (torch 2.5: ``buf3.copy_(buf4)``): a copy Inductor writes as a method
# of its destination (between devices, or into a complex tensor); the profiler names it aten::copy_
_COPY_INTO = re.compile(r"^\s+(?P<into>\w+)\.copy_\((?P<args>.*)$")
COPY_CALLEE = "aten.copy_"
_QUOTES = ("'''", "r'''", '"""', 'r"""')
_PARTITION_CALL = re.compile(r"\bself\.partitions\[(?P<index>\d+)\]\(")
_PARTITION_LIST = re.compile(r"^\w+\s*=\s*Runner\(partitions=\[(?P<names>[^\]]*)\]\)", re.M)
_CALL_SITE = re.compile(r"^\s+(\w+)(?:\.run)?\(")
# ``buf3 = true_graph_0(true_graph_0_args)``, a ``while_loop``'s ``(buf1[0], buf1[1]) =
# while_loop_body_graph_0(while_loop_body_graph_0_args)``: a call of a subgraph function of the module
SUBGRAPH_CALL = re.compile(
    r"^\s+(?:(?:(?P<into>\w+)|\(\s*(?P<first>\w+)[^)]*\))\s*=\s*)?(?P<fn>\w+)\((?P=fn)_args\)\s*$")
WHILE = re.compile(r"^(?P<indent>\s*)while\b.*:\s*$")
_SUBGRAPH_DEPTH = 8  # subgraphs inside subgraphs, at most
# a C++ kernel's own signature: named ``kernel`` in a Python module's source, by its name in a
# C++ wrapper's
CPP_SIGNATURE = re.compile(r'extern\s+"C"\s+void\s+\w+\((?P<params>[^)]*)\)', re.S)


@dataclass(frozen=True)
class ExternLine:
    """An extern call as its line in the module writes it."""

    callee: str  # ``extern_kernels.mm``, ``torch.ops.aten._fft_c2c.default``, ``aten.copy_``
    args: str  # the text after its opening parenthesis; a copy's destination first
    lhs: str | None = None  # the name its result is assigned to
    into: str | None = None  # the buffer a copy writes


def extern_line(line: str) -> ExternLine | None:
    """The extern call a line of a module's function makes, or None."""
    if (m := _EXTERN_CALL.match(line)) is not None:
        return ExternLine(m.group("callee"), m.group("args"), m.group("lhs"))
    if (m := _COPY_INTO.match(line)) is not None:
        return ExternLine(COPY_CALLEE, f"{m.group('into')}, {m.group('args')}", into=m.group("into"))
    return None


def _string_body(text: str, start: int) -> str:
    """The triple-quoted string literal that starts at or after ``start``."""
    best = None
    for q in _QUOTES:
        i = text.find(q, start)
        if i != -1 and (best is None or i < best[0]):
            best = (i, q)
    if best is None:
        return ""
    i, q = best
    delim = q[-3:]
    body_start = i + len(q)
    end = text.find(delim, body_start)
    return text[body_start:end] if end != -1 else text[body_start:]


def _comment_block_above(lines: list[str], idx: int) -> list[str]:
    out: list[str] = []
    j = idx - 1
    while j >= 0 and lines[j].lstrip().startswith("#"):
        out.append(lines[j].strip())
        j -= 1
    return list(reversed(out))


def parse_module(text: str) -> ModuleInfo:
    if cppwrapper.is_cpp_wrapper(text):
        return cppwrapper.parse(text)
    m = _AOT_ID.search(text)
    aot_id = m.group(1) if m else ""
    lines = text.splitlines()
    line_starts = [0]
    for ln in lines:
        line_starts.append(line_starts[-1] + len(ln) + 1)
    offset_to_line = {off: i for i, off in enumerate(line_starts)}

    kernels: dict[str, KernelInfo] = {}
    for km in _KERNEL_DEF.finditer(text):
        name, kind = km.group("name"), km.group("kind")
        kind = "cpp" if kind.startswith("cpp") else kind
        source = _string_body(text, km.end())
        info = KernelInfo(name=name, kind=kind, source=source)
        for c in _comment_block_above(lines, offset_to_line.get(km.start(), 0)):
            if (pm := _KERNEL_PATH.match(c)) is not None:
                info.kernel_path = pm.group("path")
            elif (om := _ORIGIN.search(c)) is not None:
                info.source_nodes = split_list(om.group("nodes"))
                info.aten_ops = split_list(om.group("aten"))
        if kind == "triton":
            hm = _HEURISTIC.search(source)
            info.heuristic = hm.group(1) if hm else None
        elif kind == "cpp":
            info.heuristic = cpp_heuristic(source)
            info.record_names = RECORD.findall(source)
        kernels[name] = info

    names = partition_names(text)
    externs: list[ExternCall] = []
    pending: tuple[list[str], list[str]] | None = None
    for ln in (lines[i] for i in scan_order(lines, names)):
        om = _ORIGIN.search(ln)
        if om:
            pending = (split_list(om.group("nodes")), split_list(om.group("aten")))
            continue
        if (em := extern_line(ln)) is not None:
            nodes, aten = (pending or ([], [])) if em.into is None else ([], [])
            externs.append(ExternCall(callee=em.callee, aten_ops=aten, source_nodes=nodes))
            pending = None if em.into is None else pending
            continue
        cm = _CALL_SITE.match(ln)
        if cm and cm.group(1) in kernels and pending:
            k = kernels[cm.group(1)]
            if not k.aten_ops:
                k.source_nodes, k.aten_ops = pending
            pending = None

    for k in kernels.values():
        if not k.aten_ops:
            k.aten_ops = fused_ops_from_name(k.name)

    # with partitions, the allocations that name the device are in the partitions' bodies
    run_text = "\n".join(lines[i] for i, _ in run_order(lines, names)) if names else ""
    device = device_of_module(text, run_text + text.split("def call", 1)[-1])
    return ModuleInfo(aot_id, role_of(aot_id), kernels, externs, device,
                      partitioning(lines, names, kernels))


# -- graph partitions -----------------------------------------------------------------------


_TRIPLE_QUOTE = re.compile(r"'''|\"\"\"")


def string_lines(lines: list[str]) -> frozenset[int]:
    """The lines inside triple-quoted strings: the kernels' sources, whose own harness (with
    ``TORCHINDUCTOR_BENCHMARK_KERNEL=1``) defines a ``call`` and a ``get_args`` of its own.
    Kept for the last few modules: reading one graph asks this of the same lines about 25
    times, each a scan of the whole module (0.4 s of a DenseNet breakdown's 3.5 s of analysis)."""
    return _string_lines(tuple(lines))


@functools.lru_cache(maxsize=4)
def _string_lines(lines: tuple[str, ...]) -> frozenset[int]:
    inside: set[int] = set()
    open_quote: str | None = None
    for i, ln in enumerate(lines):
        if open_quote is not None:
            inside.add(i)
        for m in _TRIPLE_QUOTE.finditer(ln):
            if open_quote is None:
                open_quote = m.group(0)
            elif m.group(0) == open_quote:
                open_quote = None
    return frozenset(inside)


def function_body(lines: list[str], name: str) -> range:
    """The indices of the body of the first ``def <name>(`` (module level or a method) outside
    the kernels' sources; empty when there is none."""
    head = re.compile(rf"^\s*def {re.escape(name)}\(")
    in_strings = string_lines(lines)
    for i, ln in enumerate(lines):
        if head.match(ln) and i not in in_strings:
            indent = len(ln) - len(ln.lstrip())
            end = i + 1
            while end < len(lines) and not (
                lines[end].strip() and len(lines[end]) - len(lines[end].lstrip()) <= indent
            ):
                end += 1
            return range(i + 1, end)
    return range(0)


def partition_names(text: str) -> list[str]:
    """The partition functions of ``runner = Runner(partitions=[...])``, by index; empty for a
    module without partitions (``partitions=[]``, or no Runner at all)."""
    m = _PARTITION_LIST.search(text)
    return [n.strip() for n in m.group("names").split(",") if n.strip()] if m else []


def run_order(lines: list[str], names: list[str]) -> list[tuple[int, int | None]]:
    """The lines of ``call`` in the order they run, as (line index, the partition it is in or
    None for ``call``'s own lines): each ``self.partitions[N](...)`` line is replaced by the
    body of partition N."""
    return [(i, part) for i, part, _ in run_order_via(lines, names)]


def run_order_via(lines: list[str], names: list[str]) -> list[tuple[int, int | None, str | None]]:
    """``run_order`` with, for each line a subgraph function runs, what the call of that
    subgraph in ``call`` (or a partition) returns into (``buf2`` of ``buf2 = f(f_args)``, the
    first name of a tuple it is unpacked into). A function called inside a ``while`` (a
    ``while_loop``'s condition and body) is put in once, at its first call."""
    out: list[tuple[int, int | None, str | None]] = []
    once = Once(set(loop_functions(lines, names)), set())
    for i in function_body(lines, "call"):
        m = _PARTITION_CALL.search(lines[i])
        if m is None:
            out += [(j, None, via) for j, via in _inlined(lines, i, once)]
            continue
        n = int(m.group("index"))
        body = function_body(lines, names[n] if n < len(names) else f"partition_{n}")
        out += [(j, n, via) for k in body for j, via in _inlined(lines, k, once)]
    return out


def loop_functions(lines: list[str], names: list[str]) -> list[str]:
    """The subgraph functions called inside a ``while`` of ``call``, a partition or a subgraph
    function they call (a ``while_loop`` in a ``cond``'s branch), in order."""
    out: list[str] = []
    owners, seen = ["call", *names], {"call", *names}
    for owner in owners:  # grows as it goes
        loop_indent: int | None = None
        for i in function_body(lines, owner):
            ln = lines[i]
            indent = len(ln) - len(ln.lstrip())
            if loop_indent is not None and ln.strip() and indent <= loop_indent:
                loop_indent = None
            if (w := WHILE.match(ln)) is not None:
                loop_indent = len(w["indent"])
            elif (m := SUBGRAPH_CALL.match(ln)) is not None and len(owners) < 64:
                if m["fn"] not in seen:
                    seen.add(m["fn"])
                    owners.append(m["fn"])
                if loop_indent is not None and m["fn"] not in out:
                    out.append(m["fn"])
    return out


class Once(NamedTuple):
    """The subgraph functions put in at their first call only (a ``while_loop``'s), and those
    of them already put in."""

    functions: set[str]
    placed: set[str]


def _inlined(lines: list[str], i: int, once: Once, depth: int = 0,
             via: str | None = None) -> list[tuple[int, str | None]]:
    """Line ``i``, or where it calls a subgraph function of the module, that function's body
    (its own subgraph calls inlined too) followed by the calling line; each with what the
    outermost subgraph call returns into. A function of ``once`` is put in at its first call
    only."""
    m = SUBGRAPH_CALL.match(lines[i])
    if m is None or depth >= _SUBGRAPH_DEPTH or m["fn"] in once.placed:
        return [(i, via)]
    if m["fn"] in once.functions:
        once.placed.add(m["fn"])
    inner = via if via is not None else (m.group("into") or m.group("first"))
    body = function_body(lines, m.group("fn"))
    return [x for k in body for x in _inlined(lines, k, once, depth + 1, inner)] + [(i, via)]


def has_subgraphs(lines: list[str]) -> bool:
    """Whether ``call`` (or a partition) calls a subgraph function of the module."""
    in_strings = string_lines(lines)
    return any(SUBGRAPH_CALL.match(ln) and i not in in_strings for i, ln in enumerate(lines))


def scan_order(lines: list[str], names: list[str]) -> list[int]:
    """Every line of the module, those ``call`` runs first in the order it runs them (the
    order of ``ModuleInfo.externs``); without partitions simply the module's order."""
    if not names and not has_subgraphs(lines):
        return list(range(len(lines)))
    first = [i for i, _ in run_order(lines, names)]
    seen = set(first)
    return first + [i for i in range(len(lines)) if i not in seen]


def partitioning(lines: list[str], names: list[str], kernels: dict[str, KernelInfo]) -> Partitioning:
    """How ``call`` runs the module's partitions and what it runs eagerly between them."""
    if not names:
        return Partitioning()
    order: list[int] = []
    eager: list[EagerCall] = []
    for i in function_body(lines, "call"):
        ln = lines[i]
        if (pm := _PARTITION_CALL.search(ln)) is not None:
            order.append(int(pm.group("index")))
        elif (em := extern_line(ln)) is not None:
            eager.append(EagerCall(em.callee, len(order)))
        elif (cm := _CALL_SITE.match(ln)) is not None and cm.group(1) in kernels:
            eager.append(EagerCall(cm.group(1), len(order)))
    return Partitioning(len(names), order, eager)


def read_module(path: str | Path) -> ModuleInfo:
    return parse_module(Path(path).read_text(errors="replace"))


def is_compiled_module(text: str) -> bool:
    if "def call(" in text and ("benchmark_compiled_module" in text or "# AOT ID" in text):
        return True
    return cppwrapper.is_cpp_wrapper(text)
