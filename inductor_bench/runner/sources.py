"""Compile worker side of source attribution: what each compiled module was made from.

When Inductor reports a module it has just generated (the structured-trace record
``inductor_output_code``, emitted inside ``GraphLowering.compile_to_module`` in 2.5 to 2.13,
so the lowering is still ``V.graph``), this handler records, as plain JSON:

- ``nodes``: every ``call_function`` node of the post-grad FX graph that Inductor lowered,
  with its model source line (the innermost frame of ``node.stack_trace`` outside torch) and
  its ``nn.Module`` path (``nn_module_stack``; in a backward graph ``fwd_nn_module_stack``,
  which AOTAutograd copies from the forward node the backward node differentiates, as it
  copies ``stack_trace``);
- ``ops``: the scheduler's operations after fusion, in order: the buffers each writes
  (``bufN`` and the graph inputs it mutates), the FX nodes it was made from (``origins``),
  and for extern calls the op, the node it implements and its inputs' shapes.

One JSON line per module goes to ``sources.jsonl``; ``core/attribution.py`` joins it with the
module's text and the trace, with no torch. A module that comes from a cache hit (no lowering
ran) is recorded with the reason. Everything here is best effort: a failure is recorded as
the module's ``error`` and never disturbs the compile.
"""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path
from typing import Any

from . import trace_log

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>[^\n]+)\n(?P<code>[^\n]*)')
_TORCH_DIR: str | None = None


def _torch_dir() -> str:
    global _TORCH_DIR
    if _TORCH_DIR is None:
        import torch

        _TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
    return _TORCH_DIR


def user_frame(stack_trace: str | None) -> list[Any] | None:
    """``[file, line, function, code]`` of the innermost frame of an FX stack trace that is
    not inside torch itself (``nn.Conv2d.forward`` is not the model's line); None without one."""
    if not stack_trace:
        return None
    frames = [m for m in _FRAME.finditer(stack_trace)]
    if not frames:
        return None
    inside = _torch_dir()
    user = [m for m in frames if not os.path.abspath(m.group("file")).startswith(inside)]
    m = (user or frames)[-1]
    return [m.group("file"), int(m.group("line")), m.group("func").strip(), m.group("code").strip()]


def module_entry(meta: dict[str, Any]) -> list[str] | None:
    """``[path, type]`` of the innermost ``nn.Module`` a node ran in: ``nn_module_stack``, or
    in a backward graph ``fwd_nn_module_stack`` (the forward node's). None when neither."""
    stack = meta.get("nn_module_stack") or meta.get("fwd_nn_module_stack")
    if not stack:
        return None
    path, kind = list(stack.values())[-1][:2]
    name = getattr(kind, "__name__", None) or str(kind).rsplit(".", 1)[-1].strip("'>")
    return [str(path), name]


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
        rec["shapes"] = [_shape(i) for i in getattr(node, "inputs", ()) if hasattr(i, "get_size")]
    return rec


def op_base(target: str) -> str:
    """``torch.ops.aten.mm.default``, ``aten.mm.default``, ``extern_kernels.mm`` -> ``mm``."""
    parts = target.removeprefix("torch.ops.").split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _by_op(node: Any, kernel: str) -> set[str]:
    """The origins of an extern node that run its own op (not producers inlined into its inputs)."""
    base = op_base(kernel)
    return {o.name for o in getattr(node, "origins", ()) if op_base(str(o.target)) == base}


def _shape(t: Any) -> str:
    try:
        return "x".join(str(s) for s in t.get_size()) or "scalar"
    except Exception:
        return "?"


def snapshot(graph: Any) -> dict[str, Any]:
    """The nodes and scheduler operations of one lowering (``V.graph``) as plain data."""
    fx_graph = graph.module.graph
    order = {n.name: i for i, n in enumerate(fx_graph.nodes)}
    nodes: dict[str, Any] = {}
    for n in fx_graph.nodes:
        if n.op != "call_function":
            continue
        rec: dict[str, Any] = {"op": str(n.target)}
        frame = user_frame(n.meta.get("stack_trace") or getattr(n, "stack_trace", None))
        if frame:
            rec["frame"] = frame
        mod = module_entry(n.meta)
        if mod:
            rec["module"] = mod
        if n.meta.get("partitioner_tag") == "is_backward" or n.meta.get("autograd_backward"):
            rec["backward"] = True
        nodes[n.name] = rec
    ops = [_op_record(s, order) for s in graph.scheduler.nodes]
    return {"nodes": nodes, "ops": ops}


class SourceRecorder(logging.Handler):
    """Receives ``torch.__trace`` records; at each new compiled module, appends what it was
    made from to ``log_path`` (see the module docstring)."""

    def __init__(self, log_path: Path) -> None:
        super().__init__(level=logging.DEBUG)
        self.log_path = log_path
        self.seen: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        found = trace_log.compiled_module(record)
        if found is None or found[0] in self.seen:
            return
        path, md = found
        self.seen.add(path)
        entry: dict[str, Any] = {"path": path, "frame_id": md.get("frame_id")}
        try:
            from torch._inductor.virtualized import V

            graph = V.graph
            if getattr(graph, "scheduler", None) is None or getattr(graph, "module", None) is None:
                entry["error"] = "the module came from Inductor's cache: no lowering ran to record"
            else:
                entry.update(snapshot(graph))
        except Exception as e:  # never disturb the compile
            entry["error"] = f"recording failed: {type(e).__name__}: {e}"[:300]
        try:
            with open(self.log_path, "a") as f:
                f.write(json.dumps(entry) + "\n")
        except OSError:
            pass


def attach(log_path: Path) -> SourceRecorder:
    rec = SourceRecorder(log_path)
    trace_log.attach(rec)
    return rec
