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

As the mode does (``cudagraph_trees.py``), every input that is not static is copied into the
graph's own copy of it before each replay (``copy``: the positions to copy; parameters and
buffers Dynamo marked static are not copied). With graph partitions (torch 2.11+) the mode
records each ``partition_N`` as a CUDA graph of its own and ``Runner.call`` runs the eager work
between them: ``install_partitions`` wraps the module's partitions the way the mode's
``recursively_apply_fns`` does, each captured on its first call (``PartitionReplay``), and
``call`` then runs as the mode runs it. What to capture and copy comes from
``core/replay_plan.py``.

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
    """``call(list(args))`` captured once; ``replay()`` launches it again. ``copy``: positions
    of the inputs captured on a copy of their own, refreshed from the given tensors by
    ``run``."""

    def __init__(self, ns: Any, call: Callable[[list[Any]], Any], args: Sequence[Any],
                 copy: Sequence[int] = ()) -> None:
        self.ns = ns
        self.copy = [i for i in copy if i < len(args)]
        self.static_args = [a.clone() if i in self.copy else a for i, a in enumerate(args)]
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

    def run(self, args: Sequence[Any]) -> Any:
        """One replay on ``args``, as the mode runs it: the non-static inputs copied in first."""
        for i in self.copy:
            self.static_args[i].copy_(args[i])
        self.graph.replay()
        return self.outputs


class PartitionReplay:
    """One graph partition of a module, as the mode runs it: captured on its first call (the
    eager work before it has run), then each call copies the inputs at ``copy`` into the
    captured ones and replays."""

    def __init__(self, ns: Any, fn: Callable[[list[Any]], Any], copy: Sequence[int]) -> None:
        self.ns, self.fn, self.copy = ns, fn, list(copy)
        self.captured: CudaGraphReplay | None = None
        self.error: str | None = None

    def __call__(self, args: list[Any]) -> Any:
        given = list(args)
        args.clear()  # as the partition itself does
        if self.captured is None:
            self.captured, self.error = capture(self.ns, self.fn, given, self.copy)
            if self.captured is None:
                raise PartitionCaptureError(self.error or "capture failed")
        return self.captured.run(given)


class PartitionCaptureError(RuntimeError):
    """A partition could not be captured (the mode would have failed the same way)."""


def install_partitions(ns: Any, mod: Any, copies: dict[int, Sequence[int]]) -> list[PartitionReplay]:
    """Wrap every partition of a loaded module in a ``PartitionReplay`` (``copies``: partition
    index -> positions of its arguments to copy at each replay), through the module's own
    ``recursively_apply_fns`` as the mode does; the wrappers, by partition index."""
    runner = getattr(mod, "runner", None)
    count = len(getattr(runner, "partitions", None) or [])
    fns = list(runner.partitions) if count else []
    wrappers = [PartitionReplay(ns, fn, copies.get(i, ())) for i, fn in enumerate(fns)]
    if callable(getattr(mod, "recursively_apply_fns", None)):
        mod.recursively_apply_fns([lambda fn, w=w: w for w in wrappers])
    elif runner is not None:
        runner.partitions = list(wrappers)
    return wrappers


def capture(
    ns: Any, call: Callable[[list[Any]], Any], args: Sequence[Any], copy: Sequence[int] = ()
) -> tuple[CudaGraphReplay | None, str | None]:
    """(the replay, None), or (None, why the capture failed): a graph that cannot be captured
    is then profiled kernel by kernel, and the report says so."""
    try:
        return CudaGraphReplay(ns, call, args, copy), None
    except Exception as e:  # any failure of the user's graph under capture
        first = (str(e).strip().splitlines() or [""])[0]
        with contextlib.suppress(Exception):  # the capture's own error is the one to report
            ns.synchronize()
        return None, f"{type(e).__name__}: {first}"[:300]
