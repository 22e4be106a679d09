"""Dynamo's side of source attribution: the graph each compile hands to Inductor.

``DynamoGraphs`` wraps ``torch._inductor.compile_fx.compile_fx`` (what the ``inductor`` backend
and ``torch.compile``'s default call) and records, by compile id, every node of the dynamo
graph it receives: its op, its model source frame and its ``nn.Module`` path. A compile whose
module comes from Inductor's cache lowers nothing, but its dynamo graph is still seen here,
which is how ``runner/sources.py`` carries the lines of a stored record over to it. The node
readers (``user_frame``, ``module_entry``) serve the post-grad nodes there too.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from typing import Any

from ..core.source_store import CALLERS
from . import module_sites
from .module_sites import torch_dir as _torch_dir

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>[^\n]+)\n(?P<code>[^\n]*)')
DYNAMO_DIR = "_dynamo" + os.sep  # under torch's own directory


def user_frame(stack_trace: str | None) -> list[Any] | None:
    """``[file, line, function, code]`` of the innermost frame of an FX stack trace that is
    not inside torch itself (``nn.Conv2d.forward`` is not the model's line); where every frame
    is torch's (an ``nn.Sequential`` compiled whole), the innermost one outside Dynamo, whose
    own frames are its machinery (torch 2.5's ``external_utils.py`` wrapper of a compiled
    module) and no line of a model; None without one."""
    frames = user_frames(stack_trace)
    return frames[0] if frames else None


CALLERS_KEPT = 3  # frames outside torch kept outward of a node's own line


def user_frames(stack_trace: str | None) -> list[list[Any]]:
    """``user_frame`` and, after it, the frames outside torch that called it, innermost first,
    at most ``CALLERS_KEPT`` of them: for the ``addmm`` of a library's layer class
    (``pytorch_utils.py:119``, ``Conv1D.forward``), the model's line that called the layer
    (``self.c_attn(hidden_states)``), then the one that called that. A frame of the same line
    as the one inside it (a list comprehension's, and the ``forward`` it is written in) is one
    line, kept once. Empty without a frame."""
    if not stack_trace:
        return []
    frames = [m for m in _FRAME.finditer(stack_trace)]
    inside = _torch_dir()
    where = [os.path.abspath(m.group("file")) for m in frames]
    user = [m for m, f in zip(frames, where, strict=True) if not f.startswith(inside)]
    not_dynamo = [m for m, f in zip(frames, where, strict=True) if not f.startswith(inside + DYNAMO_DIR)]
    chain: list[list[Any]] = []
    for m in user[::-1] if user else not_dynamo[-1:]:
        file, line = m.group("file"), int(m.group("line"))
        if not chain or chain[-1][:2] != [file, line]:
            chain.append([file, line, m.group("func").strip(), m.group("code").strip()])
    return chain[: 1 + CALLERS_KEPT]


def frame_fields(stack_trace: str | None) -> dict[str, Any]:
    """A node record's ``frame`` and ``callers`` (``user_frames``), each where there is one."""
    frame, *callers = user_frames(stack_trace) or [None]
    return {**({"frame": frame} if frame else {}), **({CALLERS: callers} if callers else {})}


def module_entry(meta: dict[str, Any]) -> list[str] | None:
    """``[path, type]`` of the innermost ``nn.Module`` a node ran in: ``nn_module_stack``, or
    in a backward graph ``fwd_nn_module_stack`` (the forward node's). None when neither."""
    stack = meta.get("nn_module_stack") or meta.get("fwd_nn_module_stack")
    if not stack:
        return None
    path, kind = list(stack.values())[-1][:2]
    name = getattr(kind, "__name__", None) or str(kind).rsplit(".", 1)[-1].strip("'>")
    return [str(path), name]


def _target_name(target: Any) -> str:
    """A node's target as a name stable across processes (``<built-in method conv2d ...>``
    carries an address)."""
    if isinstance(target, str):
        return target
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    return str(name) if name else type(target).__name__


def dynamo_nodes(gm: Any, prefix: str = "") -> dict[str, dict[str, Any]]:
    """Dynamo's FX graph as plain data: node name -> op, source frame, ``nn.Module`` entry;
    with the nodes of the subgraphs a higher-order op runs (a checkpointed region's
    ``wrap_body_0``, a ``cond`` branch), named ``wrap_body_0/linear``: their lines are there."""
    out: dict[str, dict[str, Any]] = {}
    for name, sub in gm.named_children():
        if hasattr(getattr(sub, "graph", None), "nodes"):
            out.update(dynamo_nodes(sub, f"{prefix}{name}/"))
    for n in gm.graph.nodes:
        if n.op not in ("call_function", "call_method", "call_module"):
            continue
        rec = {"op": f"{n.op}:{_target_name(n.target)}", **frame_fields(n.meta.get("stack_trace"))}
        mod = module_entry(n.meta)
        if mod:
            rec["module"] = mod
        out[prefix + n.name] = rec
    return out


def compile_key(frame_id: Any, frame_compile_id: Any, compiled_autograd_id: Any = None) -> str:
    """A compile's id as the structured trace's metadata gives it (and ``CompileId``)."""
    return f"{compiled_autograd_id}/{frame_id}/{frame_compile_id}"


class DynamoGraphs:
    """The dynamo graph each compile of this process handed to Inductor, by compile id
    (``compile_key``), recorded by a wrapper around ``compile_fx`` (see the module doc)."""

    WRAPPED = "_inductor_bench_sources"

    def __init__(self) -> None:
        self.by_compile: dict[str, dict[str, dict[str, Any]]] = {}
        self.built: dict[str, dict[str, list[Any]]] = {}  # compile -> module path -> its site
        self._local = threading.local()
        self.installed = False

    def install(self) -> None:
        """Wrap ``compile_fx`` (once; importing Inductor, which a compile does anyway). A call
        made while ``compile_fx``'s module is still being imported wraps nothing and leaves
        the next call to: torch 2.8's import of it warms the compile pool, which writes a
        structured record (the recorder's first) before the function exists."""
        if self.installed:
            return
        import torch._inductor.compile_fx as cfx

        inner = getattr(cfx, "compile_fx", None)
        if inner is None:  # the module's import is under way (its own records call here)
            return
        self.installed = True
        if getattr(inner, self.WRAPPED, False):
            return

        @functools.wraps(inner)
        def compile_fx(model_: Any, *args: Any, **kwargs: Any) -> Any:
            depth = getattr(self._local, "depth", 0)
            if depth == 0:  # compile_fx calls itself (config patches): the outer graph is dynamo's
                self._record(model_)
            self._local.depth = depth + 1
            try:
                return inner(model_, *args, **kwargs)
            finally:
                self._local.depth = depth

        setattr(compile_fx, self.WRAPPED, True)
        cfx.compile_fx = compile_fx

    def _record(self, gm: Any) -> None:
        try:
            from torch._guards import CompileContext

            cid = CompileContext.current_compile_id()
            if cid is not None and hasattr(gm, "graph"):
                autograd_id = getattr(cid, "compiled_autograd_id", None)  # 2.5: not there
                key = compile_key(cid.frame_id, cid.frame_compile_id, autograd_id)
                self.by_compile[key] = nodes = dynamo_nodes(gm)
                self.built[key] = module_sites.built_sites(nodes)
        except Exception:  # never disturb the compile
            pass
