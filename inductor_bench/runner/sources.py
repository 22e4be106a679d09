"""Compile worker side of source attribution: what each compiled module was made from.

When Inductor reports a module it has just generated (the structured-trace record
``inductor_output_code``, emitted inside ``GraphLowering.compile_to_module`` in 2.5 to 2.13,
so the lowering is still ``V.graph``), this handler records, as plain JSON:

- ``nodes``: every ``call_function`` node of the post-grad FX graph that Inductor lowered,
  with its model source line (the innermost frame of ``node.stack_trace`` outside torch), the
  lines outside torch that called it (``callers``, innermost first, a few deep) and its
  ``nn.Module`` path (``nn_module_stack``; in a backward graph ``fwd_nn_module_stack``,
  which AOTAutograd copies from the forward node the backward node differentiates, as it
  copies ``stack_trace``);
- ``ops``: the scheduler's operations after fusion, in order: the buffers each writes
  (``bufN`` and the graph inputs it mutates), the FX nodes it was made from (``origins``),
  and for extern calls the op, the node it implements, its inputs' shapes and, where not the
  contiguous ones, their strides (``strides``: "" for a contiguous input).

One JSON line per module goes to ``sources.jsonl``; ``core/attribution.py`` joins it with the
module's text and the trace, with no torch.

A module that comes from Inductor's FX graph cache or AOTAutograd cache was not lowered in
this process: nothing is there to record. So each freshly generated module's record is also
kept in the run's Inductor cache directory with the dynamo graph of its compile
(``core/source_store.py``), and on a hit it is read back and its lines carried over to the
current compile's. Dynamo's graph of every compile, hit or miss, is what
``torch._inductor.compile_fx.compile_fx`` receives (the ``inductor`` backend and
``torch.compile``'s default both import it at the call): ``DynamoGraphs``
(``runner/dynamo_graphs.py``) wraps it, recording each node's op, source frame and module path
by compile id. Everything here is best effort: a failure is recorded as the module's ``error``
and never disturbs the compile.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
from pathlib import Path
from typing import Any

from ..core import source_store, sources
from ..core.source_store import top_level_lines
from ..core.sources import module_path, path_order
from . import compat, module_sites, trace_log
from .dynamo_graphs import DynamoGraphs, compile_key, frame_fields, module_entry
from .subgraph_records import merge_subgraph, subgraph_lowerings

PASS_MADE = "no module path recorded (a node a graph pass made)"


def _names(fn: Any) -> list[str]:
    try:
        return [str(n) for n in fn()]
    except Exception:
        return []


def _op_record(snode: Any, order: dict[str, int]) -> dict[str, Any]:
    inner = snode.get_nodes() if hasattr(snode, "get_nodes") else [snode]
    written: list[str] = []
    origins: set[str] = set()
    for sn in inner:
        for attr in ("get_buffer_names", "get_names", "get_operation_names"):
            if hasattr(sn, attr):
                written += _names(getattr(sn, attr))
        node = getattr(sn, "node", None)
        if node is None:
            continue
        written.append(str(node.get_name()) if hasattr(node, "get_name") else "")
        if hasattr(node, "get_mutation_names"):
            written += _names(node.get_mutation_names)
        origins |= {o.name for o in getattr(node, "origins", ()) if getattr(o, "op", "") == "call_function"}
    rec: dict[str, Any] = {
        "written": sorted({w for w in written if w}),
        "origins": sorted(origins, key=lambda n: (order.get(n, 1 << 30), n)),
    }
    node = getattr(snode, "node", None)
    kernel = getattr(node, "python_kernel_name", None) if node is not None else None
    if kernel:
        rec["extern"] = str(kernel)
        on = getattr(node, "origin_node", None)
        mine = [on.name] if on is not None else [n for n in rec["origins"] if n in _by_op(node, str(kernel))]
        rec["nodes"] = mine or rec["origins"]
        tensors = [i for i in getattr(node, "inputs", ()) if hasattr(i, "get_size")]
        rec["shapes"] = [_shape(i) for i in tensors]
        rec["strides"] = [_strides(i) for i in tensors]
    return rec


def op_base(target: str) -> str:
    """``torch.ops.aten.mm.default``, ``aten.mm.default``, ``extern_kernels.mm`` -> ``mm``."""
    parts = target.removeprefix("torch.ops.").split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _by_op(node: Any, kernel: str) -> set[str]:
    """The origins of an extern node that run its own op, not producers inlined into its inputs:
    those of its op, and a lowering pattern's node (whose lowering made the extern call)."""
    base = op_base(kernel)
    return {o.name for o in getattr(node, "origins", ())
            if op_base(str(o.target)) == base or _match_of(o) is not None}


def _shape(t: Any) -> str:
    try:
        return sources.shape_text(t.get_size())
    except Exception:
        return "?"


def _strides(t: Any) -> str:
    """A tensor input's strides (``1x256``: a transposed 256x512 view) where they are not the
    contiguous ones of its size; "" where they are, or are not known."""
    try:
        size, stride = list(t.get_size()), list(t.get_stride())
    except Exception:
        return ""
    if len(size) != len(stride) or contiguous(size, stride):
        return ""
    return "x".join(str(s) for s in stride)


def contiguous(size: list[Any], stride: list[Any]) -> bool:
    """Row-major strides for ``size`` (a dimension of size 1 may have any), sizes and strides
    ints or sympy expressions (dynamic shapes)."""
    return sources.contiguous(size, stride, _equal)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    try:
        import sympy  # a size expression of dynamic shapes: torch's own dependency

        return bool(sympy.expand(a - b) == 0)
    except Exception:
        return str(a) == str(b)


def snapshot(graph: Any, dynamo: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The nodes and scheduler operations of one lowering (``V.graph``) and of the subgraphs it
    runs, as plain data; ``dynamo``: the nodes of its compile's Dynamo graph (``dynamo_nodes``),
    where known."""
    record = _lowering_record(graph)
    _not_top_level(record["nodes"], top_level_lines(dynamo or {}))
    return record


def _lowering_record(graph: Any) -> dict[str, Any]:
    fx_graph = graph.module.graph
    order = {n.name: i for i, n in enumerate(fx_graph.nodes)}
    nodes: dict[str, Any] = {}
    for n in fx_graph.nodes:
        if n.op != "call_function":
            continue
        meta = fused_from(n).meta
        rec: dict[str, Any] = {"op": str(n.target),
                               **frame_fields(meta.get("stack_trace") or getattr(n, "stack_trace", None))}
        mod = module_entry(meta)
        if mod:
            rec["module"] = mod
        elif rec.get("frame") and _made_by_a_pass(n.target):
            rec[source_store.MODULE_LOST] = ("made by an Inductor pass (a pattern replacement), "
                                             "which keeps no module path")
        nodes[n.name] = rec
    record = {"nodes": nodes, "ops": [_op_record(s, order) for s in graph.scheduler.nodes],
              **_recompute_marks(graph, nodes)}
    for name, lowering in subgraph_lowerings(graph):
        merge_subgraph(record, name, _lowering_record(lowering))
    return record


def _recompute_marks(graph: Any, nodes: dict[str, Any]) -> dict[str, bool]:
    """Mark the forward's work a backward graph does again: AOTAutograd tags every node it
    traces for the forward ``partitioner_tag = "is_forward"`` (from torch 2.10; untagged before)
    and the backward's ``"is_backward"``; a node of a backward graph tagged forward is a copy the
    partitioner put there to recompute it. Whether the graph is a backward one is the lowering's
    own flag, which a subgraph's lowering takes from its parent's: a forward graph holds nodes
    tagged backward that the partitioner moved there (a nested region's weight ``permute``). The
    record says whether its marks could be set: in a backward graph under a torch that tags the
    forward (``RECOMPUTE_MARKED``)."""
    import torch

    if not getattr(graph, "is_backward", False):
        return {source_store.RECOMPUTE_MARKED: False}
    for n in graph.module.graph.nodes:
        if n.name in nodes and n.meta.get("partitioner_tag") == "is_forward":
            nodes[n.name][source_store.RECOMPUTED] = True
    return {source_store.RECOMPUTE_MARKED: compat.parse(torch.__version__) >= compat.FORWARD_TAGGED_FROM}


def fused_from(node: Any) -> Any:
    """The node whose line and module a node stands for: for a lowering pattern's node (CPU
    freezing's convolution fused with the activation or add after it, keeping the meta of the
    last node matched), the matched node that computes (the op not tagged pointwise); else itself."""
    import torch

    for m in getattr(_match_of(node), "nodes", ()):
        tags = getattr(m.target, "tags", None)
        if tags is not None and torch.Tag.pointwise not in tags and (
                m.meta.get("stack_trace") or module_entry(m.meta)):
            return m
    return node


def _match_of(node: Any) -> Any:
    """The ``Match`` a lowering pattern's node holds (target ``partial(handler, match)``), or None."""
    target = getattr(node, "target", None)
    if not isinstance(target, functools.partial):
        return None
    return next((a for a in target.args if hasattr(a, "nodes") and hasattr(a, "pattern")), None)


def _not_top_level(nodes: dict[str, dict[str, Any]], lines: dict[tuple[str, int], bool]) -> None:
    """A node with no module on a line other nodes ran in a module was made by a graph pass (a
    checkpointed layer's recomputed ``addmm``, the ``addmm`` adding weight gradients) where its
    name says so (``named_by_a_pass``), Dynamo's graph runs only modules' code on the line
    (``top_level_lines``: False), or the line, which that graph does not show, runs in several."""
    modules: dict[tuple[str, int], set[str]] = {}
    for rec in (r for r in nodes.values() if r.get("frame") and r.get("module")):
        modules.setdefault((rec["frame"][0], rec["frame"][1]), set()).add(module_path(str(rec["module"][0])))
    for name, rec in nodes.items():
        if rec.get("frame") and not rec.get("module") and not rec.get(source_store.MODULE_LOST):
            where = (rec["frame"][0], rec["frame"][1])
            there, top = sorted(modules.get(where, set()), key=path_order), lines.get(where)
            if there and (source_store.named_by_a_pass(name, str(rec.get("op", "")))
                          or (not top and len(there) >= (1 if top is False else 2))):
                runs = f"{len(there)} modules, e.g. {there[0]}" if there[1:] else f"one module, {there[0]}"
                rec[source_store.MODULE_LOST] = f"{PASS_MADE}; its line runs in {runs}"


def _made_by_a_pass(target: Any) -> bool:
    """Whether a node's target is none of torch's ops nor a builtin: a function an Inductor
    pass put in (``functools.partial(<..._register_unary_fusion_lowering.<locals>.fn>)``, the
    fused convolution and ReLU of CPU freezing). Such a node keeps its line but not the module
    it ran in: it is not the model's own top-level code."""
    import torch

    ops = (torch._ops.OpOverload, torch._ops.OpOverloadPacket, torch._ops.HigherOrderOperator)
    if isinstance(target, ops):
        return False
    return getattr(target, "__module__", None) not in ("_operator", "operator", "builtins", "math")


def inductor_cache_dir() -> str | None:
    """The Inductor cache of this process (the run's: ``TORCHINDUCTOR_CACHE_DIR``)."""
    if os.environ.get("TORCHINDUCTOR_CACHE_DIR"):
        return os.environ["TORCHINDUCTOR_CACHE_DIR"]
    try:
        from torch._inductor.runtime.runtime_utils import cache_dir

        return str(cache_dir())
    except Exception:
        return None


NOT_KEPT = ("the module came from Inductor's cache, which holds no record of its lowering "
            "(filled by a compile that kept none)")
NO_GRAPH = ("the module came from Inductor's cache, and this compile's dynamo graph was not seen "
            "to carry its lines over")


# torch gives the nodes of the graph compiled autograd captured of a backward no stack trace
# (torch 2.13: none of the nodes Inductor lowers has one)
AUTOGRAD_NO_LINES = "compiled autograd's backward: torch gives its nodes no line"


def _no_lines_in_autograd(nodes: dict[str, Any]) -> None:
    for rec in nodes.values():
        if not rec.get("frame"):
            rec.setdefault(source_store.LOST, AUTOGRAD_NO_LINES)


class SourceRecorder(logging.Handler):
    """Receives ``torch.__trace`` records; at each new compiled module, appends what it was
    made from to ``log_path``, keeping fresh records in (and reading hits from) the store
    under ``cache_dir`` (see the module doc)."""

    def __init__(self, log_path: Path, cache_dir: str | None = None) -> None:
        super().__init__(level=logging.DEBUG)
        self.log_path = log_path
        self.cache_dir = cache_dir
        self.seen: set[str] = set()
        self.dynamo = DynamoGraphs()

    def emit(self, record: logging.LogRecord) -> None:
        if not self.dynamo.installed and isinstance(getattr(record, "metadata", None), dict):
            # the first structured record of a compile comes before its backend imports
            # compile_fx; a process that never compiles never imports Inductor for it
            with contextlib.suppress(Exception):
                self.dynamo.install()
        found = trace_log.compiled_module(record)
        if found is None or found[0] in self.seen:
            return
        path, md = found
        self.seen.add(path)
        entry: dict[str, Any] = {"path": path, "frame_id": md.get("frame_id")}
        try:
            cid = compile_key(md.get("frame_id"), md.get("frame_compile_id"), md.get("compiled_autograd_id"))
            entry.update(self._record(path, cid, getattr(record, "payload", None)))
            if built := self.dynamo.built.get(cid):  # this compile's, seen afresh on a hit too: never stored
                entry[source_store.BUILT] = built
            if trace_log.of_compiled_autograd(md):  # a fresh lowering's record and a cache hit's
                _no_lines_in_autograd(entry.get("nodes") or {})
        except Exception as e:  # never disturb the compile
            entry["error"] = f"recording failed: {type(e).__name__}: {e}"[:300]
        try:
            with open(self.log_path, "a") as f:
                f.write(json.dumps(entry) + "\n")
        except OSError:
            pass

    def _record(self, path: str, cid: str, payload: Any) -> dict[str, Any]:
        from torch._inductor.virtualized import V

        text = payload if isinstance(payload, str) else Path(path).read_text(errors="replace")
        key = source_store.text_key(text)
        now = self.dynamo.by_compile.get(cid)
        graph = V.graph
        if getattr(graph, "scheduler", None) is not None and getattr(graph, "module", None) is not None:
            snap = {**snapshot(graph, now), **_aot_id()}
            if now is not None and self.cache_dir:
                source_store.save(self.cache_dir, key, {**snap, "dynamo": now})
            return snap
        stored = source_store.load(self.cache_dir, key) if self.cache_dir else None
        if stored is None:
            return {"error": NOT_KEPT}
        if now is None:
            return {"error": NO_GRAPH}
        return source_store.carry_over(stored, now)


def _aot_id() -> dict[str, str]:
    """The graph's name as AOTAutograd gave it to its compiler (``0_forward``), which a C++
    wrapper module does not write (``core/cppwrapper.py``); kept in the store, so that a hit
    has it too."""
    with contextlib.suppress(Exception):  # evidence only
        from torch._guards import TracingContext

        name = TracingContext.try_get().aot_graph_name
        if name:
            return {source_store.AOT_ID: str(name[0])}
    return {}


def attach(log_path: Path, cache_dir: str | None = None) -> SourceRecorder:
    """The recorder on the ``torch.__trace`` logger; its store is in ``cache_dir`` (default:
    this process's Inductor cache)."""
    rec = SourceRecorder(log_path, cache_dir or inductor_cache_dir())
    with contextlib.suppress(Exception):  # evidence only
        module_sites.install()
    trace_log.attach(rec)
    return rec
