"""Autotuning subgraphs: compiled modules that are not graphs of the model (pure; no torch).

Under max-autotune (and for custom ops registered with ``register_custom_op_autotuning``),
some autotuning choices are whole FX subgraphs: decompose-K for GEMMs with a large K
(``kernel/mm.py``), custom-op decompositions (``kernel/custom_op.py``), b2b GEMM (2.13).
To time such a choice Inductor compiles it on its own (torch 2.11 and 2.13,
``codegen/subgraph.py``, ``SubgraphChoiceCaller._compile_for_benchmarking``)::

    GraphLowering(gm, ..., name=f"benchmark_{choice}").compile_to_module()

That emits an ``inductor_output_code`` structured-trace record like a model graph's: same
frame id, same compile id, same ``# AOT ID`` in the module. Three things tell it apart, any
one of which is enough (torch 2.5 has no such subgraphs):

1. the call stack when the record is emitted passes through ``_compile_for_benchmarking``
   in ``codegen/subgraph.py`` (the compile worker records the Inductor frames);
2. the ``GraphLowering`` that compiled it has a name, ``benchmark_<choice>``; a model
   graph's has none (``compile_fx.py`` passes no ``name``);
3. in the module text, graph inputs and buffers carry that name as a prefix
   (``GraphLowering.qualify_name``): ``benchmark_<choice>_arg0_1``, ``benchmark_<choice>_buf0``,
   where a model graph has ``arg0_1`` / ``primals_1`` and ``buf0``. This one also works on a
   module recorded without the first two.

The compile worker flags such modules in ``modules.jsonl`` (``subgraph: true`` and a reason);
only the others are profiled.
"""

from __future__ import annotations

import re
from typing import Any

SUBGRAPH_KEY = "subgraph"
REASON_KEY = "subgraph_reason"
# Evidence the compile worker records with each module.
STACK_KEY = "inductor_stack"  # "<path under torch/_inductor>:<function>", outermost first
GRAPH_NAME_KEY = "graph_name"  # GraphLowering.name of the graph that was compiled
CHOICE_KEY = "choice"  # the autotuning choice a benchmark subgraph was compiled for

BENCHMARK_FRAME = "codegen/subgraph.py:_compile_for_benchmarking"
GRAPH_NAME_PREFIX = "benchmark_"
# A graph input or buffer named after a "benchmark_..." GraphLowering.
_QUALIFIED = re.compile(r"\b(benchmark_\w+?)_(?:arg\d+_\d+|buf\d+)\b")


def reason(entry: dict[str, Any], module_text: str | None = None) -> str | None:
    """Why the recorded module is an autotuning subgraph, or None when it is a model graph.

    ``entry``: the module's line in ``modules.jsonl``; ``module_text``: its source, when at hand.
    """
    if entry.get(SUBGRAPH_KEY) and entry.get(REASON_KEY):
        return str(entry[REASON_KEY])
    choice = entry.get(CHOICE_KEY)
    what = f"autotuning subgraph{f' {choice}' if choice else ''}"
    if BENCHMARK_FRAME in (entry.get(STACK_KEY) or []):
        return f"{what}: compiled by Inductor to benchmark an autotuning choice ({BENCHMARK_FRAME})"
    name = entry.get(GRAPH_NAME_KEY)
    if isinstance(name, str) and name.startswith(GRAPH_NAME_PREFIX):
        return f"{what}: compiled as graph {name}, a name Inductor gives only to benchmark subgraphs"
    if module_text:
        m = _QUALIFIED.search(module_text)
        if m:
            return (f"autotuning subgraph: its inputs and buffers are named after graph {m.group(1)}, "
                    "a name Inductor gives only to benchmark subgraphs")
    return None


def mark(entry: dict[str, Any], module_text: str | None = None) -> dict[str, Any]:
    """``entry`` with ``subgraph: true`` and the reason when it is a subgraph."""
    why = reason(entry, module_text)
    if why:
        entry[SUBGRAPH_KEY] = True
        entry[REASON_KEY] = why
    return entry


def left_out_line(n: int) -> str:
    """The report's line for the subgraphs left out of the profile."""
    s = "" if n == 1 else "s"
    return (f"{n} autotuning subgraph{s} left out: compiled only to benchmark an autotuning "
            "choice, never run by the model (listed in modules.jsonl)")
