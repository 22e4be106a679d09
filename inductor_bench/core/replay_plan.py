"""How torch.compile's CUDA-graph modes run one compiled graph, decided from its module's text
and torch's own state (pure; no torch import): the plan the replay follows (``runner/replay.py``).

What torch does (read from torch 2.11's ``output_code.py``, ``compile_fx.py``,
``cudagraph_utils.py``; graph partitions, ``config.graph_partition``, are on by default there):

- With partitions, ``cudagraph_partition_post_compile`` records each ``partition_N`` as a CUDA
  graph of its own (cudagraph trees) and ``Runner.call`` runs what cannot be captured eagerly
  between them. Without (modules that have no ``Runner(partitions=...)``, before 2.9 or with
  ``graph_partition`` off), ``cudagraph_post_compile`` records the whole ``call``.
- The whole graph runs eagerly, kernel by kernel, when (``CompiledFxGraph.__init__`` /
  ``post_compile``); "logged" is whether a "skipping cudagraphs" line is written:

  * ``disabled_cudagraphs_reason`` set at lowering (CPU ops, several devices, ...) or for mutated
    inputs: logged when the graph has a CUDA device; torch's state (and the log) tell.
  * ``cudagraph_fail_reasons`` (mutated inputs, complex memory overlap, non-Tensor inputs):
    logged without partitions, **not logged with them**; torch's state tells, the overlap also
    the strides of ``get_args``. Torch 2.13 dropped the overlap test and added "input storage
    mutation" (also set as ``disabled_cudagraphs_reason``, so logged); 2.14 and 2.15 accept
    custom class inputs.
  * no partition at all (``Runner(partitions=[])`` with CUDA graphs on): **not logged**; the
    module's text tells.
  * no CUDA device among the graph's devices: not logged (a counter only); torch's state.
  * the compiler bisector disabled the subsystem: logged; only the log tells.

- Each replay copies every input that is not static (``static_input_idxs``: parameters and
  buffers Dynamo marked static) into the graph's own buffer first (``cudagraph_trees.py``); a
  partition's inputs that eager work made between partitions are never static. Outputs of an
  earlier partition are the tree's own memory and are not copied.

``plan`` takes the module's text, whether the mode asked for CUDA graphs, torch's recorded state
for the graph (``cudagraph_state``: the fields ``CompiledFxGraph`` carries, when the run kept
them) and the reason torch logged (when it logged one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .devices import BACKENDS
from .modparse import EagerCall, function_body, parse_module, partition_names

_UNPACK = re.compile(r"^\s+(?P<names>\w+(?:\s*,\s*\w+)*)\s*,?\s*=\s*args\s*$")
_PART_ARGS = re.compile(r"^\s+partition(?P<n>\d+)_args\s*=\s*\[(?P<names>[^\]]*)\]")
_PART_CALL = re.compile(r"^\s+(?:\(?(?P<outs>[\w\s,]*?)\)?\s*=\s*)?self\.partitions\[(?P<n>\d+)\]\(")
_RAND_STRIDED = re.compile(
    r"^\s+(?P<name>\w+)\s*=\s*rand_strided\(\((?P<size>[^)]*)\),\s*\((?P<stride>[^)]*)\)"
)

# where a decision came from
FROM_MODULE = "module"  # the compiled module's text
FROM_TORCH = "torch"  # torch's recorded state of the compiled graph
FROM_LOG = "log"  # torch's "skipping cudagraphs" log line
# the device types whose graphs CUDA-graph modes capture (torch's ``device_types``)
GRAPH_DEVICES = frozenset(b.name for b in BACKENDS if b.cuda_graphs)


@dataclass
class Step:
    """One step of a replay: a partition replayed from its CUDA graph, or eager work."""

    kind: str  # "graph" | "eager"
    partition: int | None = None  # kind "graph": which partition
    calls: list[str] = field(default_factory=list)  # kind "eager": the kernels / extern calls
    copied: list[str] = field(default_factory=list)  # kind "graph": inputs copied in first
    positions: list[int] = field(default_factory=list)  # ... their positions among its arguments


@dataclass
class ReplayPlan:
    graphed: bool  # the mode runs it from CUDA graphs
    reason: str | None = None  # why not
    reason_from: str | None = None  # FROM_MODULE / FROM_TORCH / FROM_LOG
    logged: bool = False  # whether torch logged the reason
    partitioned: bool = False  # the module has graph partitions (a Runner with partitions)
    steps: list[Step] = field(default_factory=list)
    copied_inputs: list[int] = field(default_factory=list)  # graph inputs copied per replay
    static_inputs: list[int] | None = None  # None: unknown (no recorded state)

    @property
    def partitions(self) -> int:
        return sum(1 for s in self.steps if s.kind == "graph")

    def how_it_ran(self) -> str:
        """One short line: how the mode runs this graph (the report's per-graph line)."""
        if not self.graphed:
            said = "logged" if self.logged else "not logged by torch"
            return f"eager, kernel by kernel: {self.reason} ({said}; from {self.reason_from})"
        eager = sum(1 for s in self.steps if s.kind == "eager")
        shape = (f"{self.partitions} CUDA-graph partition(s), {eager} eager step(s)"
                 if self.partitioned else "one CUDA graph of the whole call")
        copied = f"{len(self.copied_inputs)} input(s) copied per replay"
        if self.static_inputs is None:
            copied += " (static inputs unknown: all copied)"
        return f"replayed: {shape}; {copied}"

    def request(self) -> dict[str, Any]:
        """What the profiling worker needs to replay it (JSON)."""
        return {"graphed": self.graphed, "partitioned": self.partitioned,
                "copies": {str(s.partition): s.positions for s in self.steps
                           if s.kind == "graph" and s.partition is not None},
                "copied_inputs": self.copied_inputs}


def module_inputs(lines: list[str]) -> list[str]:
    """The names ``call`` unpacks its arguments into, in order."""
    for i in function_body(lines, "call"):
        m = _UNPACK.match(lines[i])
        if m:
            return [n.strip() for n in m.group("names").split(",") if n.strip()]
    return []


def overlapping_inputs(text: str) -> list[str]:
    """Inputs of the harness whose sizes and strides overlap in memory, by torch 2.11's
    ``complex_memory_overlap`` (expanded dimensions, stride 0, are dropped first; then, strides
    sorted, each must be at least the span of the ones below)."""
    lines = text.splitlines()
    out = []
    for i in function_body(lines, "get_args"):
        m = _RAND_STRIDED.match(lines[i])
        if not m:
            continue
        try:
            size = [int(x) for x in m.group("size").split(",") if x.strip()]
            stride = [int(x) for x in m.group("stride").split(",") if x.strip()]
        except ValueError:  # symbolic sizes: not decidable here
            continue
        if len(size) != len(stride):
            continue
        dims = sorted((st, sz) for sz, st in zip(size, stride, strict=True) if sz != 1 and st != 0)
        span = 1
        for st, sz in dims:
            if st < span:
                out.append(m.group("name"))
                break
            span = st * sz
    return out


def _steps(text: str, inputs: list[str], static: set[int] | None) -> list[Step]:
    """``call``'s partitions and the eager work between them (``modparse``'s eager calls, by
    how many partitions ran before each), in order."""
    lines = text.splitlines()
    eager = parse_module(text).partitions.eager
    steps: list[Step] = []
    args: dict[int, list[str]] = {}
    made_by_partitions: set[str] = set()
    ran = 0
    for i in function_body(lines, "call"):
        if (am := _PART_ARGS.match(lines[i])) is not None:
            args[int(am.group("n"))] = [a.strip() for a in am.group("names").split(",") if a.strip()]
        elif (cm := _PART_CALL.match(lines[i])) is not None:
            steps += _eager_step(eager, ran)
            n = int(cm.group("n"))
            taken = args.get(n, [])
            at = [k for k, a in enumerate(taken) if _copied(a, inputs, static, made_by_partitions)]
            steps.append(Step("graph", partition=n, copied=[taken[k] for k in at], positions=at))
            made_by_partitions.update(o.strip() for o in (cm.group("outs") or "").split(",") if o.strip())
            ran += 1
    return steps + _eager_step(eager, ran)


def _eager_step(eager: list[EagerCall], after: int) -> list[Step]:
    calls = [e.callee for e in eager if e.after == after]
    return [Step("eager", calls=calls)] if calls else []


def _copied(name: str, inputs: list[str], static: set[int] | None, from_partitions: set[str]) -> bool:
    if name in from_partitions:
        return False
    if name in inputs:
        return static is None or inputs.index(name) not in static
    return True  # made by eager work between partitions


# the first torch whose mode no longer runs a graph with overlapping inputs eagerly
OVERLAP_UNCHECKED_FROM = (2, 13)


def version_tuple(version: str | None) -> tuple[int, int] | None:
    m = re.match(r"(\d+)\.(\d+)", version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def plan(text: str, cuda_graphs: bool, state: dict[str, Any] | None = None,
         logged_skip: str | None = None, torch_version: str | None = None) -> ReplayPlan:
    """How the mode runs the graph of this module (see the module's docstring). Without torch's
    state, the overlap of the harness's inputs is checked when ``torch_version`` is older than
    2.13 or unknown."""
    lines = text.splitlines()
    names = partition_names(text)
    partitioned = "Runner(partitions=" in text
    static = None if state is None else set(state.get("static_input_idxs") or [])
    inputs = module_inputs(lines)
    base = ReplayPlan(False, partitioned=partitioned,
                      static_inputs=None if static is None else sorted(static))
    if not cuda_graphs:
        base.reason, base.reason_from = "the mode uses no CUDA graphs", FROM_TORCH
        return base
    version = version_tuple(torch_version)
    check_overlap = state is None and (version is None or version < OVERLAP_UNCHECKED_FROM)
    why = _not_graphed(text, names, partitioned, state, logged_skip, check_overlap)
    if why is not None:
        base.reason, base.reason_from, base.logged = why
        return base
    base.graphed = True
    if partitioned:
        base.steps = _steps(text, inputs, static)
    else:
        at = [k for k in range(len(inputs)) if static is None or k not in static]
        base.steps = [Step("graph", copied=[inputs[k] for k in at], positions=at)]
    base.copied_inputs = [k for k in range(len(inputs)) if static is None or k not in static]
    if partitioned:  # only the inputs some partition takes
        taken = {a for s in base.steps for a in s.copied}
        base.copied_inputs = [k for k in base.copied_inputs if inputs[k] in taken]
    return base


def _not_graphed(text: str, names: list[str], partitioned: bool, state: dict[str, Any] | None,
                 logged_skip: str | None, check_overlap: bool) -> tuple[str, str, bool] | None:
    """(why the mode runs the graph eagerly, where that was read, whether torch logged it)."""
    if logged_skip:
        return logged_skip, FROM_LOG, True
    if state is not None:
        if state.get("disabled_cudagraphs_reason"):
            types = set(state.get("device_types") or GRAPH_DEVICES)
            return str(state["disabled_cudagraphs_reason"]), FROM_TORCH, bool(types & GRAPH_DEVICES)
        fails = state.get("cudagraph_fail_reasons") or []
        if fails:
            return ", ".join(fails), FROM_TORCH, not partitioned
        if state.get("device_types") and not set(state["device_types"]) & GRAPH_DEVICES:
            return "no CUDA device in the graph", FROM_TORCH, False
        if partitioned and state.get("partition_maps") == []:
            return "no graph partitions", FROM_TORCH, False
    if partitioned and not names:
        return "no graph partitions", FROM_MODULE, False
    overlap = overlapping_inputs(text) if check_overlap else []
    if overlap:
        return f"complex memory overlap ({', '.join(overlap)})", FROM_MODULE, not partitioned
    return None
