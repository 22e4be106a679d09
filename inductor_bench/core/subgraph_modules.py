"""The modules of a subgraph's calls, call by call: a ``torch.compiler.nested_compile_region``
shared by several layers is traced once, in one of them, so the lowering record names that
layer's modules for every call of it (``layers.1.fc`` for the second and the third layer).
Each call of the subgraph in the parent graph is an ``invoke_subgraph`` node of the layer that
called it (``invoke_subgraph_6`` in ``layers.2``), the node of the operation that writes what
the call returns into (``buf7 = partitioned_fw_subgraph_1_0(...)``). A module of the subgraph's
calls under the module of one of those nodes is moved under the calling one's. Pure; no torch.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .callsites import Call
from .sources import Origin, module_path

INVOKE = "invoke_subgraph"


def rerooted(origins: dict[int, Origin], calls: list[Call],
             record: dict[str, Any]) -> tuple[dict[int, Origin], dict[str, str]]:
    """``origins`` (call position -> Origin) with the modules of each call a subgraph runs
    under the layer that called the subgraph (see the module doc), and each module path so
    made -> the one it was made from (of the same class)."""
    nodes = record.get("nodes") or {}
    invokes = {n: module_path(str(rec["module"][0])) for n, rec in nodes.items()
               if isinstance(rec, dict) and rec.get("op") == INVOKE and "/" not in n and rec.get("module")}
    if not invokes:
        return origins, {}
    caller: dict[str, str] = {}  # what a call returns into -> the module of the layer that called it
    for op in record.get("ops") or []:
        called = [invokes[n] for n in op.get("origins", []) if n in invokes]
        for name in op.get("written", []):
            if called:
                caller.setdefault(name, called[-1])
    roots = sorted(set(invokes.values()), key=len, reverse=True)
    out = dict(origins)
    made: dict[str, str] = {}
    for i, c in enumerate(calls):
        here = caller.get(c.via or "")
        if here is not None and i in out:
            moved = {_under(m, roots, here): m for m in out[i].modules}
            out[i] = replace(out[i], modules=list(moved))
            made.update({new: old for new, old in moved.items() if new != old})
    return out, made


def _under(module: str, roots: list[str], here: str) -> str:
    """``module`` moved from under the longest of ``roots`` it is in to under ``here``."""
    for r in roots:
        if module == r or module.startswith(r + "."):
            return here + module[len(r):]
    return module
