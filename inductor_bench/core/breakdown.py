"""Trace events -> one graph's kernel breakdown; no torch import.

The profiling worker wraps every harness call (``call(args)`` of the compiled module)
in a ``record_function("inductor_bench::iteration")`` marker; on CUDA the call ends with
a synchronize inside the marker, so all device work of iteration *i* is launched inside
marker *i* and done before it ends. What counts as a kernel (``core/kernel_events.py``):

- **host** (CPU): the top-level ``cpu_op`` events inside each marker on the marker's thread
  (C++ kernels record ``graph_<i>_<kernel>``; extern ops such as ``aten::addmm``).
  Ops nested in them (``aten::expand`` inside ``aten::addmm``) are part of their
  parent's inclusive time. Busy = union of those top-level intervals.
- **device** (GPU): device events (``kernel``, ``gpu_memcpy``, ``gpu_memset``) whose launch
  (same ``args.correlation``) lies inside a marker: the device clock's offset from the host's
  is not trusted. Busy = union of their intervals per device, at most the marker's span;
  with several devices, the busiest one.

Times in a ``GraphResult`` are milliseconds per iteration: every one of them (wall, busy, each
kernel, hence each category and the kernel total) is the mean over the same steady
iterations, those the policy of ``core/steady.py`` keeps by their wall time; the disturbed
ones are recorded (``GraphResult.left_out``) with the raw samples of every iteration. The
policy checks an iteration by its parts (``core/parts.py``: its kernels' times, each call's
time of a kernel called at several places, its idle time between kernels, where a preemption
lands as often as in a kernel) and by the worker's own clock reading of it (by which the window
was chosen): ``settle``, once here and again once attribution has made the call sites.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from . import categories
from .classify import classify
from .columns import ITERATION_MARKER
from .cppwrapper import shim_op
from .devices import HOST, backend
from .kernel_events import cpu_kernel_events, device_kernel_events, find_markers, require_device_activity
from .modparse import KernelInfo, ModuleInfo
from .parts import judge
from .results import GraphResult, KernelStat
from .timeline import launch_stacks, union_length
from .trace import Event, Trace

MARKER = ITERATION_MARKER
US_PER_MS = 1000.0
_CALLEE = re.compile(r"^(?:extern_kernels\.(?P<ext>\w+)|aten\.(?P<aten>\w+)(?:\.\w+)?"
                     r"|torch\.ops\.(?P<ns>\w+)\.(?P<op>\w+)(?:\.\w+)?)$")


@dataclass
class _Kernel:
    """One kernel of the graph while its launches are gathered."""

    name: str
    info: KernelInfo | None
    samples_us: list[float]
    count: int = 0
    launchers: list[str] = field(default_factory=list)
    origin: tuple[list[str], list[str]] | None = None  # extern (aten_ops, source_nodes)
    by_category_us: dict[str, float] = field(default_factory=dict)  # extern: per launch


def analyze_graph(
    trace: Trace,
    module: ModuleInfo | None,
    graph: GraphResult,
    *,
    kernel_files: dict[str, str] | None = None,
    stack_hints: dict[str, tuple[str, ...]] | None = None,
    clock: Sequence[float] = (),
) -> GraphResult:
    """Fill ``graph``'s measured fields from ``trace`` and return it.

    ``module`` (parsed compiled module) names kernels and gives their origin and source
    category; ``kernel_files`` maps kernel name -> kernel file for ``KernelStat.file``.
    ``stack_hints`` (kernel name -> launching ops, from ``launch_stacks_by_name`` of a run
    launched kernel by kernel) stand in for the launch stacks that kernels replayed from a
    CUDA graph do not have (they share their ``cudaGraphLaunch``'s correlation). ``clock``: the
    worker's own reading of each iteration (its window's figure); the policy judges by it too.
    Raises ``TraceError`` when the trace holds no iteration markers.
    """
    markers = find_markers(trace)
    on_host = backend(graph.device).timeline == HOST
    if on_host:
        per_iter = cpu_kernel_events(trace, markers)
        stacks: dict[int, tuple[str, ...]] = {}
    else:
        require_device_activity(trace, module)
        per_iter = device_kernel_events(trace, markers)
        stacks = launch_stacks(trace)
        if stack_hints:
            for evs in per_iter:
                for i, ev in evs:
                    if not stacks.get(i) and ev.name in stack_hints:
                        stacks[i] = stack_hints[ev.name]
    kernels = _gather(per_iter, module, stacks, len(markers))
    stats = [_to_stat(k, len(markers), kernel_files or {}) for k in kernels.values()]
    graph.iterations = len(markers)
    graph.wall_samples_ms = [m.dur / US_PER_MS for m in markers]
    graph.busy_samples_ms = [b / US_PER_MS for b in _busy_us(per_iter, markers, per_device=not on_host)]
    graph.clock_samples_ms = list(clock) if len(clock) == len(markers) else []
    graph.kernels, graph.sites = stats, []  # its call sites are attribution's, made from this trace
    return settle(graph)


def settle(graph: GraphResult) -> GraphResult:
    """Decide ``graph``'s steady iterations by the parts its result holds (``core/parts.py``:
    its kernels, its call sites, its idle time; and the worker's clock) and make every figure
    the mean over them: wall, busy, each kernel and call site, the categories, the kernel total.
    The analysis settles a graph once its kernels are measured and again once attribution has
    split them into their call sites: the saved parts are those it was judged by."""
    kept = judge(graph)
    graph.left_out, graph.limit_ms = list(kept.left_out), kept.limit
    for k in graph.kernels:
        k.ms = kept.mean(k.samples_ms)
    graph.kernels.sort(key=lambda k: (-k.ms, k.name))
    for s in graph.sites:
        s.ms = kept.mean(s.samples_ms)
    graph.wall_ms = kept.mean(graph.wall_samples_ms)
    graph.busy_ms = kept.mean(graph.busy_samples_ms)
    graph.categories = summarize_categories(graph.kernels)
    graph.kernel_ms = math.fsum(graph.categories.values())
    return graph


def launch_stacks_by_name(trace: Trace) -> dict[str, tuple[str, ...]]:
    """Device event name -> the ops around its launch (innermost first), from a trace whose
    kernels were launched one by one; the first launch seen of each name."""
    out: dict[str, tuple[str, ...]] = {}
    for i, stack in sorted(launch_stacks(trace).items()):
        out.setdefault(trace.events[i].name, stack)
    return out


def summarize_categories(kernels: Iterable[KernelStat]) -> dict[str, float]:
    """Category -> ms per iteration, in report order (categories with no kernel left out)."""
    out: dict[str, list[float]] = {}
    for k in kernels:
        out.setdefault(k.category, []).append(k.ms)
    return {c: math.fsum(out[c]) for c in sorted(out, key=categories.order)}


# -- aggregation ---------------------------------------------------------------------------


def _gather(
    per_iter: list[list[tuple[int, Event]]],
    module: ModuleInfo | None,
    stacks: dict[int, tuple[str, ...]],
    iterations: int,
) -> dict[str, _Kernel]:
    externs = extern_origins(module)
    resolved: dict[str, tuple[str, KernelInfo | None]] = {}
    categorized: dict[tuple[str, tuple[str, ...]], str] = {}
    kernels: dict[str, _Kernel] = {}
    for it, evs in enumerate(per_iter):
        for i, ev in evs:
            if ev.name not in resolved:
                resolved[ev.name] = _resolve(ev.name, module)
            name, info = resolved[ev.name]
            k = kernels.get(name)
            if k is None:
                k = kernels[name] = _Kernel(name, info, [0.0] * iterations)
            k.samples_us[it] += ev.dur
            k.count += 1
            if info is None:
                stack = stacks.get(i, ())
                _note_extern(k, ev.name, stack, externs)
                key = (ev.name, stack)
                if key not in categorized:
                    categorized[key] = classify(ev.name, None, ops=stack)
                cat = categorized[key]
                k.by_category_us[cat] = k.by_category_us.get(cat, 0.0) + ev.dur
    return kernels


def _resolve(raw: str, module: ModuleInfo | None) -> tuple[str, KernelInfo | None]:
    info = module.kernel_for_record(raw) if module is not None else None
    return (info.name, info) if info is not None else (raw, None)


def _note_extern(
    k: _Kernel,
    raw: str,
    stack: tuple[str, ...],
    externs: dict[str, tuple[list[str], list[str]]],
) -> None:
    """Launcher and origin of an extern kernel: on CPU the op is the event itself, on
    CUDA the ops around its launch (innermost first) are tried in turn. (Its category
    comes from the same stack: ``classify`` takes the innermost op it recognises.)"""
    if stack and stack[0] != raw and stack[0] not in k.launchers:
        k.launchers.append(stack[0])
    if k.origin is None:
        for op in (raw, *stack):
            if op in externs:
                k.origin = externs[op]
                break


def extern_origins(module: ModuleInfo | None) -> dict[str, tuple[list[str], list[str]]]:
    """Profiler op name -> (aten_ops, source_nodes) of the module's extern calls with it
    (e.g. ``extern_kernels.addmm`` -> ``aten::addmm``), merged over repeated calls."""
    out: dict[str, tuple[list[str], list[str]]] = {}
    for call in module.externs if module is not None else []:
        op = op_name(call.callee)
        if op is None:
            continue
        aten, nodes = out.setdefault(op, ([], []))
        aten.extend(a for a in own_aten_ops(op, call.aten_ops) if a not in aten)
        nodes.extend(n for n in call.source_nodes if n not in nodes)
    return out


def own_aten_ops(op: str, aten_ops: list[str]) -> list[str]:
    """An extern call's own ATen ops: Inductor's ``Original ATen:`` comment above it lists those
    of the nodes it was lowered with (torch 2.13: ``aten.native_layer_norm, aten.view, aten.t,
    aten.addmm, aten.gelu`` above one GEMM, the layer norm and the GELU being other kernels), so
    where the op it calls is among them, that op alone; else (a oneDNN op that fuses its
    neighbours, ``mkldnn::_linear_pointwise``) all of them."""
    own = op.replace("::", ".")
    mine = [a for a in aten_ops if a == own or a.startswith(own + ".")]
    return mine or list(aten_ops)


def op_name(callee: str) -> str | None:
    """The profiler name of an extern call: ``extern_kernels.mm`` -> ``aten::mm``,
    ``aten.convolution_backward.default`` -> ``aten::convolution_backward``,
    ``torch.ops.mkldnn._linear_pointwise.default`` -> ``mkldnn::_linear_pointwise``."""
    if shim_op(callee) is not None:  # a C++ wrapper's C shim records under its own name
        return callee
    m = _CALLEE.match(callee)
    if m is None:
        return None
    if m.group("ns"):
        return f"{m.group('ns')}::{m.group('op')}"
    return f"aten::{m.group('ext') or m.group('aten')}"


def _to_stat(k: _Kernel, iterations: int, kernel_files: dict[str, str]) -> KernelStat:
    samples_ms = [s / US_PER_MS for s in k.samples_us]
    if k.info is not None:
        aten_ops, nodes = list(k.info.aten_ops), list(k.info.source_nodes)
    else:
        aten_ops, nodes = (list(k.origin[0]), list(k.origin[1])) if k.origin else ([], [])
    return KernelStat(
        name=k.name,
        category=_category(k),
        calls=k.count / iterations,
        ms=0.0,  # the mean over the graph's steady iterations, set by analyze_graph
        samples_ms=samples_ms,
        aten_ops=aten_ops,
        source_nodes=nodes,
        file=kernel_files.get(k.name),
        launched_by=", ".join(k.launchers) or None,
    )


def _category(k: _Kernel) -> str:
    """A graph kernel's category from its source or name; an extern kernel's from the ops
    that launched it, launch by launch: one kernel (``volta_sgemm_128x32_nt``) can be
    launched by ``aten::mm`` and by ``aten::convolution_backward``, and the category with
    the most time wins (the first seen on a tie)."""
    if k.info is not None or not k.by_category_us:
        return classify(k.name, k.info)
    return max(k.by_category_us, key=lambda c: k.by_category_us[c])


def _busy_us(
    per_iter: list[list[tuple[int, Event]]], markers: list[Event], *, per_device: bool
) -> list[float]:
    """Per iteration: the union of its kernel intervals, at most the marker's span; with
    ``per_device`` (device timelines) per device, taking the busiest device. On the host the
    intervals are clipped to the marker window; device intervals are not placed against it
    (their clock's offset from the host's is not to be trusted, ``device_kernel_events``),
    only their union capped by the marker's duration: every one of them ran between the
    iteration's first launch and its synchronize, both inside the marker."""
    out = []
    for m, evs in zip(markers, per_iter, strict=True):
        by_device: dict[object, list[tuple[float, float]]] = {}
        for _, ev in evs:
            key = ev.pid if per_device else None
            # relative to the marker: absolute µs timestamps (~1e12) leave few digits
            start = ev.ts - m.ts
            span = (start, start + ev.dur) if per_device else (max(start, 0.0), min(start + ev.dur, m.dur))
            by_device.setdefault(key, []).append(span)
        busy = max((union_length(iv) for iv in by_device.values()), default=0.0)
        out.append(min(busy, m.dur))
    return out
