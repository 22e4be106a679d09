"""Torch's own CUDA-graph state of each compiled graph, kept by the compile worker.

torch.compile's CUDA-graph modes decide in ``CompiledFxGraph.post_compile`` (``output_code.py``)
whether a graph runs from CUDA graphs: from fields the compiled graph carries
(``disabled_cudagraphs_reason``, ``cudagraph_info.cudagraph_fail_reasons``, ``partition_maps``,
``device_types``) and the ``static_input_idxs`` it is handed. With graph partitions (torch 2.11+)
several of those decisions are never logged, so the log line alone misses them
(``core/replay_plan.py`` lists which). ``attach`` wraps ``post_compile`` (which runs on a cache
hit too) and appends the state of each graph to the modules log, keyed by the SHA-256 of the
module's text, which is how ``states_by_sha`` joins it to the module file.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from pathlib import Path
from typing import Any

STATE_KEY = "cudagraph_state"
SHA_KEY = "module_sha256"


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def state_of(compiled: Any, graph_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The fields of a ``CompiledFxGraph`` (and of the ``graph_kwargs`` its ``post_compile``
    receives) that decide whether the mode runs it from CUDA graphs. Missing fields (another
    torch version) are None."""
    info = getattr(compiled, "cudagraph_info", None)
    maps = getattr(compiled, "partition_maps", None)
    requested = graph_kwargs.get("cudagraphs")
    static = graph_kwargs.get("static_input_idxs")
    return {
        "cudagraphs_requested": None if requested is None else bool(requested),
        "disabled_cudagraphs_reason": getattr(compiled, "disabled_cudagraphs_reason", None),
        "cudagraph_fail_reasons": None if info is None else list(info.cudagraph_fail_reasons or []),
        "static_input_idxs": None if static is None else sorted(int(i) for i in static),
        "mutated_input_idxs": sorted(int(i) for i in getattr(compiled, "mutated_input_idxs", None) or []),
        "device_types": sorted(getattr(compiled, "device_types", None) or []),
        "partition_maps": None if maps is None else [
            {"input_index_mapping": [None if i is None else int(i) for i in pm.input_index_mapping]}
            for pm in maps
        ],
    }


def attach(log_path: Path) -> bool:
    """Record every compiled graph's state into ``log_path`` from now on in this process;
    False when this torch has no ``CompiledFxGraph.post_compile`` to wrap."""
    try:
        from torch._inductor.output_code import CompiledFxGraph
    except ImportError:
        return False
    real = getattr(CompiledFxGraph, "post_compile", None)
    if real is None or getattr(real, "_inductor_bench_state", False):
        return real is not None

    signature = inspect.signature(real)

    def post_compile(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            given = signature.bind(self, *args, **kwargs).arguments
            line = {STATE_KEY: state_of(self, handed(self, given)),
                    SHA_KEY: text_sha(getattr(self, "source_code", "") or "")}
            with open(log_path, "a") as f:
                f.write(json.dumps(line) + "\n")
        except Exception:  # the record must never break the compile
            pass
        return real(self, *args, **kwargs)

    post_compile._inductor_bench_state = True  # type: ignore[attr-defined]
    CompiledFxGraph.post_compile = post_compile
    return True


def handed(compiled: Any, given: dict[str, Any]) -> dict[str, Any]:
    """What ``post_compile`` was handed that decides, by its parameter names: from torch 2.8 its
    ``graph_kwargs``; torch 2.6 and 2.7 hand it the ``cudagraphs`` flag itself and keep
    ``static_input_idxs`` in the graph's ``fx_kwargs``."""
    if given.get("graph_kwargs") is not None:
        return dict(given["graph_kwargs"])
    fx_kwargs = getattr(compiled, "fx_kwargs", None) or {}
    return {"cudagraphs": given.get("cudagraphs"), "static_input_idxs": fx_kwargs.get("static_input_idxs")}


def states_by_sha(lines: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """module text SHA-256 -> its recorded state (the last one recorded)."""
    return {str(ln[SHA_KEY]): ln[STATE_KEY] for ln in lines if STATE_KEY in ln and SHA_KEY in ln}
