"""Source attribution of one analysed graph (pure; no torch).

Joins three things: the compiled module's ``call()`` (``core/callsites.py``: which kernel or
extern call writes which buffers), what the compile worker recorded about the lowering
(``runner/sources.py``: the scheduler's operations with the buffers they write and the FX
nodes they were made from; the FX nodes with their source line and ``nn.Module`` path), and
the trace. It fills ``KernelStat.origin`` for every kernel and, on the host timeline, splits
each extern op into its call sites (``GraphResult.sites``); on either timeline, each generated
kernel ``call()`` calls at several places into its calls.

Splitting is exact or not done: in every iteration the k-th event of an extern op (say the
third ``aten::convolution``) or of a kernel is its k-th call in ``call()``, which holds only
when each iteration has exactly as many events of it as ``call()`` has calls of it; otherwise
it keeps its one row and ``GraphResult.attribution`` says why.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .breakdown import op_name
from .callsites import Call, parse_calls
from .devices import HOST, backend
from .kernel_events import cpu_kernel_events, device_kernel_events, find_markers
from .loop_calls import Branch, Place, places
from .modparse import ModuleInfo
from .module_bytes import heaviest_first
from .module_calls import module_calls
from .own_nodes import own_extern_nodes, own_origins
from .results import GraphResult
from .site_events import events_by_key, match_sites
from .source_chains import record_line
from .source_store import BUILT, LOST, MODULE_LOST, RECOMPUTE_MARKED, RECOMPUTED, carried_note, line_modules
from .sources import ROOT_MODULE, CallSite, Origin, SourceLine, call_shapes, merge, module_path, path_order
from .stride_rebuild import with_strides
from .subgraph_modules import rerooted
from .timeline import launch_stacks
from .trace import Trace
from .unplaced import NO_NODE, call_bytes, mostly_unplaced
from .weight_copies import weight_copy_ms, weight_copy_origins

NO_RECORD = "no record of the lowering: the run predates source attribution or its compile worker wrote none"


# -- FX nodes -> an Origin -------------------------------------------------------------------


def origin_of(names: list[str], nodes: dict[str, Any]) -> Origin:
    """The source lines and module paths of some FX nodes of the record."""
    lines: set[SourceLine] = set()
    modules: Counter[str] = Counter()  # module path -> how many of the nodes ran in it
    for n in placed_by(names, nodes):
        rec = nodes.get(n) or {}
        mod = rec.get("module")
        if rec.get("frame"):
            lines.add(record_line(rec))  # with the lines that called it
            if mod or not rec.get(MODULE_LOST):  # no module at all: the model's own code
                modules[module_path(mod[0]) if mod else ROOT_MODULE] += 1
        elif mod:
            modules[module_path(mod[0])] += 1
    missing = None
    if not names:
        missing = NO_NODE
    elif not modules:  # a line without a module: why the module is not known, where said
        missing = next((nodes[n][MODULE_LOST] for n in names if MODULE_LOST in (nodes.get(n) or {})), None)
    if names and not lines:
        lost = [nodes[n][LOST] for n in names if LOST in (nodes.get(n) or {})]
        ops = sorted({str((nodes.get(n) or {}).get("op", "?")) for n in names})
        if lost:
            missing = lost[0]
        elif modules:  # Dynamo keeps no frame inside torch: a model made of torch's own modules
            missing = (f"no line: Dynamo records none inside torch's own modules (module "
                       f"{', '.join(sorted(modules))[:60]}: {', '.join(ops)[:60]})")
        else:  # why the module was lost says more, where it was (a cache hit)
            missing = missing or f"its FX nodes carry no stack trace ({', '.join(ops)[:80]})"
    most = sorted(modules, key=lambda m: (-modules[m], path_order(m)))  # most of its nodes first
    again = bool(names) and all((nodes.get(n) or {}).get(RECOMPUTED) for n in names)
    return Origin(list(names), sorted(lines, key=lambda ln: ln.key), most, missing, again)


# Ops that make a tensor from no input (``where(x <= 0, 0, grad)``'s zero in a ReLU's backward):
# one such node, deduplicated across the graph, is fused into kernels of every layer, and names
# the place of the first layer that made it.
CONSTANT_OPS = frozenset(f"aten.{op}.default" for op in ("full", "zeros", "ones", "scalar_tensor"))


def placed_by(names: list[str], nodes: dict[str, Any]) -> list[str]:
    """The nodes whose lines and modules are a kernel's: its nodes but the constants it reads
    (``CONSTANT_OPS``), where it has others; those the record holds, where it holds some (a
    subgraph's operation names the parent's nodes that called it, ``true_graph_0/cond``, as its
    own, which its record has not)."""
    known = [n for n in names if n in nodes] or names
    kept = [n for n in known if str((nodes.get(n) or {}).get("op")) not in CONSTANT_OPS]
    return seeds_users(kept or known, nodes)


# Inductor's ``replace_random`` pass draws one seed per random op of the graph (dropout) in a
# single node of no line (``aten::randint``, called once); each op's ``inductor_lookup_seed``
# keeps that op's line and module.
SEEDS, LOOKUP_SEED = "prims.inductor_seeds.default", "prims.inductor_lookup_seed.default"


def seeds_users(names: list[str], nodes: dict[str, Any]) -> list[str]:
    """``names`` with a seeds node of no line replaced by the seed lookups of the graph's
    random ops, the work its seeds are drawn for."""
    def unplaced_seeds(n: str) -> bool:
        rec = nodes.get(n) or {}
        return rec.get("op") == SEEDS and not rec.get("frame")

    lookups = [n for n, rec in nodes.items() if rec.get("op") == LOOKUP_SEED]
    if not lookups or not any(unplaced_seeds(n) for n in names):
        return names
    return [n for n in names if not unplaced_seeds(n)] + lookups


def call_origins(calls: list[Call], record: dict[str, Any], own: list[list[str]] | None = None,
                 ) -> tuple[dict[int, Origin], dict[int, list[str]]]:
    """Per call (by position in ``calls``): its Origin, and for extern calls the input shapes
    (``own``: the record's ``own_origins``, where the caller has them)."""
    nodes = record.get("nodes") or {}
    all_ops = record.get("ops") or []
    own, ran = own if own is not None else own_origins(all_ops), own_extern_nodes(all_ops)
    by_buffer: dict[str, list[int]] = {}  # the operations writing each buffer, in order
    for k, op in enumerate(all_ops):
        for name in op.get("written", []):
            by_buffer.setdefault(name, []).append(k)
    in_place = _in_place_externs(calls, all_ops)
    origins: dict[int, Origin] = {}
    shapes: dict[int, list[str]] = {}
    for i, c in enumerate(calls):
        if c.written is None:
            origins[i] = Origin(missing=f"{c.name}: its signature names no outputs this tool can read")
            continue
        writers = [by_buffer[b] for b in [*c.written, *c.fused] if b in by_buffer]
        ks = list(dict.fromkeys(w[0] for w in writers)) or ([in_place[i]] if i in in_place else [])
        if not ks:
            origins[i] = Origin(missing="the lowering record has no operation writing its buffers")
            continue
        if c.extern:
            e = _running(c, writers, ks, all_ops)
            shapes[i] = call_shapes(all_ops[e])
            origins[i] = module_from_operands(origin_of(_nodes_run(all_ops[e], ran[e], own[e]), nodes),
                                              own[e], nodes)
            continue
        names = []
        for k in ks:
            names += [n for n in own[k] if n not in names]
        origins[i] = origin_of(names, nodes)
    return origins, shapes


def _running(c: Call, writers: list[list[int]], first: list[int], ops: list[dict[str, Any]]) -> int:
    """The record's operation that runs extern call ``c``: of those writing its buffers, one
    running its op (a copy writes a buffer an earlier operation made), else the first extern."""
    runs = [k for w in writers for k in w if ops[k].get("extern") == c.name]
    return next(iter(runs), next((k for k in first if ops[k].get("extern")), first[0]))


def _nodes_run(op: dict[str, Any], ran: list[str], own: list[str]) -> list[str]:
    """The FX nodes an extern operation runs; where the record found no node of its op (the
    copy into a complex tensor a ``.to`` becomes), those of its origins left after piling up."""
    if op.get("nodes") == op.get("origins"):
        ran = [n for n in ran if n in own] or ran
    return ran or own


def _in_place_externs(calls: list[Call], ops: list[dict[str, Any]]) -> dict[int, int]:
    """Call position -> record operation, for extern calls that return nothing: an op that
    writes into its argument (CPU freezing's ``mkldnn._convolution_pointwise_.binary`` adds the
    convolution into the residual's buffer), whose operation the record lists under buffers
    of its own. The k-th call of such an op is the k-th operation of the record running it."""
    runs: dict[str, list[int]] = {}
    for k, op in enumerate(ops):
        if op.get("extern"):
            runs.setdefault(str(op["extern"]), []).append(k)
    seen: dict[str, int] = {}
    out: dict[int, int] = {}
    for i, c in enumerate(calls):
        if not c.extern:
            continue
        nth = seen[c.name] = seen.get(c.name, -1) + 1
        if c.written == [] and nth < len(runs.get(c.name, ())):
            out[i] = runs[c.name][nth]
    return out


def module_from_operands(o: Origin, operation_nodes: list[str], nodes: dict[str, Any]) -> Origin:
    """An extern call whose own node a pass made in no module (a checkpointed layer's fused
    ``addmm_default``, a tied embedding's weight gradients) takes the one module and the lines
    of the other nodes its operation was lowered from (the weight's ``permute``: the GEMM is
    theirs), then the one module its own line runs in, as its line (the tied ``wte``, whose
    gradient it adds). Several operand modules leave it unknown, with its reason."""
    if o.modules or not o.lines:
        return o
    others = {n: r for n in operation_nodes if n not in o.nodes if (r := nodes.get(n) or {}).get("module")}
    mods, line = {module_path(str(r["module"][0])) for r in others.values()}, line_modules(nodes, o.nodes)
    if len(mods) != 1:
        return o
    mods_then_line = sorted(mods) + (sorted(line - mods) if len(line) == 1 else [])
    return Origin(o.nodes, origin_of(o.nodes + list(others), nodes).lines, mods_then_line, None, o.recomputed)


def module_types(nodes: dict[str, Any]) -> dict[str, str]:
    """Each ``nn.Module`` path the record's nodes ran in -> its class name (``Linear``): a path
    of an ``nn.Sequential`` (``features.3``) says little without it."""
    out: dict[str, str] = {}
    for rec in nodes.values():
        mod = (rec or {}).get("module")
        if isinstance(mod, list) and len(mod) > 1 and mod[1]:
            out.setdefault(module_path(str(mod[0])), str(mod[1]))
    return out


# -- the graph ----------------------------------------------------------------------------


def attribute(
    graph: GraphResult, trace: Trace, module: ModuleInfo, text: str, record: dict[str, Any] | None
) -> GraphResult:
    """Fill the origins of ``graph``'s kernels and its extern call sites (see the module doc)."""
    if record is None or record.get("error") or "ops" not in record:
        graph.attribution = (record or {}).get("error") or NO_RECORD
        return graph
    calls, nodes = parse_calls(text, module), record.get("nodes") or {}
    args = module_calls(text, module)  # read once
    own, sizes = own_origins(record["ops"] or []), call_bytes(calls, args)
    origins, shapes = call_origins(calls, record, own)
    shapes, unknown = with_strides(shapes, calls, text, module, record)
    copies = weight_copy_ms(graph, calls, record, args, sizes)
    for k in graph.kernels:
        k.copy_ms = copies.get(k.name)
    graph.weight_copy_ms = sum(copies.values()) or None  # None: copies none
    origins = weight_copy_origins(mostly_unplaced(origins, calls, record, text, module, sizes), calls, record,
                                  args, sizes)
    origins = heaviest_first(origins, calls, record, text, module, lambda ns: origin_of(ns, nodes).modules,
                             sizes=sizes, own=own)
    origins, made = rerooted(origins, calls, record)
    graph.recompute_marked = bool(record.get(RECOMPUTE_MARKED))
    graph.module_types = types = module_types(nodes)
    types.update({new: types[old] for new, old in made.items() if old in types})
    graph.module_sites = sites = dict(record.get(BUILT) or {})
    sites.update({new: sites[old] for new, old in made.items() if old in sites})
    per_kernel: dict[str, list[Origin | None]] = {}
    for i, c in enumerate(calls):
        if not c.extern:
            per_kernel.setdefault(c.name, []).append(origins.get(i))
    externs = [(i, c) for i, c in enumerate(calls) if c.extern]
    host = backend(graph.device).timeline == HOST
    per_iter = cpu_kernel_events(trace, find_markers(trace)) if host else None  # read once for both splits
    where = places(text, calls)
    kernel_sites, notes = _split_kernels(trace, per_iter, module, graph, calls, origins, where)
    per_kernel = _ran(per_kernel, kernel_sites)
    if per_iter is not None:
        sites, more = _split_host(per_iter, module, graph, externs, origins, shapes, where)
        graph.sites, notes = sites + kernel_sites, more + notes
        _host_origins(graph, per_kernel, externs, origins, sites)
    else:
        graph.sites = kernel_sites
        _device_origins(graph, per_kernel, externs, origins, _device_launchers(trace))
        if externs:
            notes.append("extern kernels are not split by call site on a device timeline")
    notes += carried_note(record) + unknown
    graph.attribution = "; ".join(notes) or None
    return graph


def _ran(per_kernel: dict[str, list[Origin | None]], sites: list[CallSite]) -> dict[str, list[Origin | None]]:
    """Each generated kernel's calls' origins, those of its call sites where its calls were
    split (a call in a while_loop of no trips ran none, and names no line)."""
    split: dict[str, list[Origin | None]] = {}
    for s in sites:
        split.setdefault(s.kernel, []).append(s.origin)
    return {k: split.get(k, os) for k, os in per_kernel.items()}


def _host_origins(
    graph: GraphResult,
    per_kernel: dict[str, list[Origin | None]],
    externs: list[tuple[int, Call]],
    origins: dict[int, Origin],
    sites: list[CallSite],
) -> None:
    """Each kernel row's origin on the host timeline: a generated kernel's from its calls, an
    extern op's from its call sites (or its calls, where they were not split)."""
    by_op: dict[str, list[Origin | None]] = {}
    for s in sites:
        by_op.setdefault(s.kernel, []).append(s.origin)
    split = {s.kernel for s in sites}
    for i, c in externs:
        op = op_name(c.name) or c.name
        if op not in split:
            by_op.setdefault(op, []).append(origins.get(i))
    for k in graph.kernels:
        if k.name in per_kernel:
            k.origin = merge(per_kernel[k.name])
        elif k.name in by_op:
            k.origin = merge(by_op[k.name])
        else:
            k.origin = Origin(missing="an op the module's own Python code runs, not one of its calls")


def _device_origins(
    graph: GraphResult,
    per_kernel: dict[str, list[Origin | None]],
    externs: list[tuple[int, Call]],
    origins: dict[int, Origin],
    launchers: dict[str, set[str]],
) -> None:
    """Each kernel row's origin on a device timeline: a generated kernel's from its calls, an
    extern kernel's from the calls of the ops that launched it."""
    for k in graph.kernels:
        if k.name in per_kernel:
            k.origin = merge(per_kernel[k.name])
            continue
        ops = launchers.get(k.name, set())
        mine = [origins.get(i) for i, c in externs if op_name(c.name) in ops]
        k.origin = merge(mine) or Origin(missing="no extern call of the module launched it")


def _device_launchers(trace: Trace) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for i, stack in launch_stacks(trace).items():
        out.setdefault(trace.events[i].name, set()).update(stack)
    return out


def _split_host(
    per_iter: list[list[tuple[int, Any]]],
    module: ModuleInfo,
    graph: GraphResult,
    externs: list[tuple[int, Call]],
    origins: dict[int, Origin],
    shapes: dict[int, list[str]],
    where: list[Place | Branch | str | None],
) -> tuple[list[CallSite], list[str]]:
    """Each extern op's events, iteration by iteration, onto its calls as they ran (``where``:
    each call's place in a ``while_loop``, ``loop_calls.places``)."""
    by_op: dict[str, list[tuple[int, Call]]] = {}
    for i, c in externs:
        by_op.setdefault(op_name(c.name) or c.name, []).append((i, c))
    events = events_by_key(per_iter, lambda name: None if module.kernel_for_record(name) else name, by_op)

    def site(op: str, j: int, i: int, c: Call) -> dict[str, Any]:
        return {"kernel": op, "index": c.index, "callee": c.name, "shapes": shapes.get(i, []),
                "origin": origins.get(i)}

    sites, notes = match_sites(by_op, events, graph, len(per_iter), site, where)
    sites.sort(key=lambda s: s.index)
    return sites, notes


def _split_kernels(
    trace: Trace,
    per_iter: list[list[tuple[int, Any]]] | None,
    module: ModuleInfo,
    graph: GraphResult,
    calls: list[Call],
    origins: dict[int, Origin],
    where: list[Place | Branch | str | None],
) -> tuple[list[CallSite], list[str]]:
    """Each generated kernel that ``call()`` calls at several places: its events, iteration by
    iteration, onto those calls as they ran (``where``: as ``_split_host``'s; ``per_iter``: the
    host timeline's events, C++ kernels known by the name each records; None: a device
    timeline, read here only where some kernel is called twice, kernels by their own name)."""
    by_kernel: dict[str, list[tuple[int, Call]]] = {}
    for i, c in enumerate(calls):
        if not c.extern:
            by_kernel.setdefault(c.name, []).append((i, c))
    by_kernel = {k: cs for k, cs in by_kernel.items() if len(cs) > 1}
    if not by_kernel:
        return [], []
    if per_iter is None:
        per_iter = device_kernel_events(trace, find_markers(trace))
        events = events_by_key(per_iter, lambda name: name, by_kernel)
    else:
        recorded = module.kernel_for_record
        events = events_by_key(per_iter, lambda name: k.name if (k := recorded(name)) else None, by_kernel)

    def site(kernel: str, j: int, i: int, c: Call) -> dict[str, Any]:
        return {"kernel": kernel, "index": -1, "callee": kernel, "origin": origins.get(i), "occurrence": j}

    return match_sites(by_kernel, events, graph, len(per_iter), site, where)
