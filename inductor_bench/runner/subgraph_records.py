"""The lowerings of the subgraphs a compiled graph runs (a ``torch.compiler.nested_compile_region``'s
``invoke_subgraph``, ``torch.cond``'s branches, ``while_loop``'s condition and body), for the
lowering record (``runner/sources.py``).

Inductor lowers each such subgraph with a ``GraphLowering`` of its own (``ir.Subgraph.graph``,
held by the ``InvokeSubgraph`` / ``Conditional`` / ``WhileLoop`` node of the parent's scheduler)
and writes its kernels into a module-level function of the compiled module, its buffers named
after it (``partitioned_fw_subgraph_1_0_buf0``, ``GraphLowering.qualify_name``). Its FX nodes
are named in their own graph, so they join the record as ``<subgraph>/<node>``, as Dynamo's
subgraph nodes are (``dynamo_nodes``). Read in torch 2.13's ``_inductor/ir.py`` and
``graph.py`` (``codegen_subgraph``).
"""

from __future__ import annotations

from typing import Any

SUBGRAPH_FIELDS = ("subgraph", "true_subgraph", "false_subgraph", "cond_subgraph", "body_subgraph")


def subgraph_lowerings(graph: Any) -> list[tuple[str, Any]]:
    """(name, lowering) of every subgraph the lowering's scheduler runs, each once (a region
    called for several layers is one subgraph), that was lowered and scheduled."""
    out: dict[str, Any] = {}
    for sn in getattr(getattr(graph, "scheduler", None), "nodes", ()):
        node = getattr(sn, "node", None)
        for field in SUBGRAPH_FIELDS:
            sub = getattr(node, field, None)
            lowering = getattr(sub, "graph", None)
            lowered = getattr(lowering, "scheduler", None) is not None
            if lowered and getattr(lowering, "module", None) is not None:
                out.setdefault(str(getattr(sub, "name", field)), lowering)
    return list(out.items())


def merge_subgraph(record: dict[str, Any], name: str, inner: dict[str, Any]) -> None:
    """Add a subgraph's own record (``snapshot`` of its lowering) to ``record``: its nodes named
    ``<name>/<node>``, and its operations naming them so."""
    record["nodes"].update({f"{name}/{n}": rec for n, rec in inner["nodes"].items()})
    for op in inner["ops"]:
        op = dict(op)
        for key in ("origins", "nodes"):
            if key in op:
                op[key] = [f"{name}/{n}" for n in op[key]]
        record["ops"].append(op)
