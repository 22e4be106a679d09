"""A compiled module's ``call`` captured into a CUDA graph and replayed, as torch.compile's
CUDA-graph modes run it.

``mode="reduce-overhead"`` (and ``max-autotune``) never run a graph's kernels one launch at
a time after warm-up: Inductor records the graph's ``call`` into a CUDA graph (cudagraph
trees, applied outside the module in ``output_code.py``) and replays it. The module's own
harness (``get_args`` + ``call``) launches kernel by kernel, so profiling it would describe a
run the mode never does: every kernel's launch latency in the wall time, a lower busy %.
``capture`` does what the mode does, in the standard pattern: warm up on a side stream (lazy
initialisation and allocations happen outside the capture), capture one ``call`` on static
inputs, then ``replay()`` re-runs every kernel of it with one launch. The inputs stay the same
tensors (``call`` empties the list it is given, not the tensors), and the outputs live in the
graph's private memory pool, kept alive by this object.

The accelerator namespace (``torch.cuda``) is passed in, so the capture logic is tested
without a GPU against a recording stand-in.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

# Calls on the side stream before capture: the first can allocate and initialise lazily
# (cuBLAS handles, workspace), the next ones run as they will in the graph.
SIDE_STREAM_WARMUP = 2


class CudaGraphReplay:
    """``call(list(args))`` captured once; ``replay()`` launches it again."""

    def __init__(self, ns: Any, call: Callable[[list[Any]], Any], args: Sequence[Any]) -> None:
        self.ns = ns
        self.static_args = list(args)
        side = ns.Stream()
        side.wait_stream(ns.current_stream())
        with ns.stream(side):
            for _ in range(SIDE_STREAM_WARMUP):
                call(list(self.static_args))
        ns.current_stream().wait_stream(side)
        ns.synchronize()
        self.graph = ns.CUDAGraph()
        with ns.graph(self.graph):
            self.outputs = call(list(self.static_args))
        ns.synchronize()

    def replay(self) -> None:
        self.graph.replay()


def capture(
    ns: Any, call: Callable[[list[Any]], Any], args: Sequence[Any]
) -> tuple[CudaGraphReplay | None, str | None]:
    """(the replay, None), or (None, why the capture failed): a graph that cannot be captured
    is then profiled kernel by kernel, and the report says so."""
    try:
        return CudaGraphReplay(ns, call, args), None
    except Exception as e:  # any failure of the user's graph under capture
        first = (str(e).strip().splitlines() or [""])[0]
        with contextlib.suppress(Exception):  # the capture's own error is the one to report
            ns.synchronize()
        return None, f"{type(e).__name__}: {first}"[:300]
