"""A graph's kernels' bytes and FLOPs per iteration, counted from its compiled module and the
Triton kernel files saved beside it, each extern call's work given to the kernel it launched
(pure; no torch)."""

from __future__ import annotations

from pathlib import Path

from .breakdown import op_name
from .buffers import CallArgs
from .call_groups import op_owners, set_beside
from .cpp_buffers import cpp_module_calls
from .cppwrapper import is_cpp_wrapper
from .device_calls import call_launches
from .devices import HOST, backend
from .extern_work import extern_work, onednn_output
from .kernel_space import reach
from .kernelfile import read_kernel_file
from .loop_work import count_loops, with_trips
from .modparse import ModuleInfo
from .module_calls import module_calls
from .results import GraphResult, KernelStat
from .trace import Trace
from .work import FROM_INDUCTOR, Work, draws_random, generated_work, kernel_params, kernel_values, noted


def count_work(graph: GraphResult, module: ModuleInfo, text: str, run_dir: Path,
               fixed: dict[str, int] | None = None, unbacked: dict[str, int] | None = None,
               blocks: dict[str, list[int | None]] | None = None, trace: Trace | None = None,
               one_call: bool = False) -> GraphResult:
    """Fill ``bytes`` / ``flops`` / ``compute`` / ``work_from`` of the graph's kernels from its
    compiled module (and the Triton kernel files saved beside it, whose own counts are at the
    harness's sizes: not used where ``fixed`` gives other sizes, ``breakdown --size``, nor where
    ``unbacked`` gives the data-dependent sizes of the call profiled, which they hold at a guess;
    ``blocks``: a masked flex attention's blocks in each call, ``runner/flex_blocks.py``). On a
    device timeline, ``trace`` says which kernel did each extern call's work: the graph's, or
    with ``one_call`` the one call launched kernel by kernel beside its CUDA-graph replays."""
    per_kernel: dict[str, Work] = {}
    per_op: dict[str, Work] = {}
    calls: list[tuple[str, Work]] = []  # each extern call's profiler op and work, in call() order
    graph.site_counts = []
    at = {**(fixed or {}), **(unbacked or {})}
    for call, work in with_trips(call_work(module, text, at or None, blocks), graph, module, text):
        if call.extern:
            graph.site_counts.append([work.bytes, work.flops])
            calls.append((_profiler_op(call.name), work))
        else:
            per_kernel[call.name] = per_kernel[call.name].plus(work) if call.name in per_kernel else work
    on_host = backend(graph.device).timeline == HOST
    launches = {} if on_host or trace is None else call_launches(trace, [op for op, _ in calls], one_call)
    followed = {i: c.main for i, c in launches.items()}
    rows = {k.name for k in graph.kernels}  # an op any of whose calls ran a kernel not measured: as one
    strays = {calls[i][0] for i, name in followed.items() if name not in rows}
    followed = {i: name for i, name in followed.items() if calls[i][0] not in strays}
    by_kernel: dict[str, list[Work]] = {}
    for i, (op, work) in enumerate(calls):
        if i in followed:
            by_kernel.setdefault(followed[i], []).append(work)
        else:
            per_op[op] = per_op[op].plus(work) if op in per_op else work
    owners = {} if on_host else op_owners(graph.kernels, set(per_op))
    for k in graph.kernels:
        work = per_kernel.get(k.name)
        if work is not None:
            work = work if at else _from_kernel_file(k, work, run_dir)
        elif on_host:
            work = per_op.get(k.name)
        else:
            work = _sum(by_kernel.get(k.name, []) + [per_op[op] for op in owners.get(k.name, [])])
        if work is not None:
            k.bytes, k.flops, k.compute, k.work_from = work.bytes, work.flops, work.compute, work.source
    if not on_host:  # the other kernels each followed call launched: its main kernel's
        set_beside(graph, {i: launches[i] for i in followed}, trace, one_call)
    return count_loops(graph, module, text)


def _profiler_op(callee: str) -> str:
    return op_name(callee) or callee


def _sum(works: list[Work]) -> Work | None:
    if not works:
        return None
    total = works[0]
    for w in works[1:]:
        total = total.plus(w)
    return total


def _from_kernel_file(k: KernelStat, work: Work, run_dir: Path) -> Work:
    """A Triton kernel's count from Inductor's own ``kernel_num_gb`` where its saved file has
    it (per launch, times the launches per iteration), else ``work`` (from its buffers)."""
    if not k.file or not k.file.endswith(".py"):
        return work
    try:
        kf = read_kernel_file(run_dir / k.file)
    except Exception:  # a file that is not a kernel file: the buffers' count stands
        return work
    if kf.num_gb is None:
        return work
    launches = max(round(k.calls), 1)
    flops = float(kf.flop) * launches if kf.flop else work.flops
    source = noted(FROM_INDUCTOR, draws_random(work.source))
    return Work(kf.num_gb * 1e9 * launches, flops, kf.compute_type or work.compute, source)


def call_work(module: ModuleInfo, text: str, fixed: dict[str, int] | None = None,
              blocks: dict[str, list[int | None]] | None = None) -> list[tuple[CallArgs, Work]]:
    """Every call of ``call()`` with what it moves and computes (at ``fixed``'s sizes where
    given; a masked flex attention's calls at ``blocks``, kernel -> the blocks of each of its
    calls in order, ``runner/flex_blocks.py``)."""
    out = []
    met: dict[str, int] = {}  # calls of each kernel so far
    reached: dict[tuple, tuple[int | None, dict[str, int]]] = {}  # per kernel and sizes, however often called
    read = cpp_module_calls if is_cpp_wrapper(text) else module_calls
    calls = read(text, module, result_shape=onednn_output, fixed=fixed)
    for c in calls:
        if c.extern:
            out.append((c, extern_work(c)))
            continue
        k = module.kernels[c.name]
        params = kernel_params(k)
        values = kernel_values(params, c)
        key = (c.name, *sorted(values.items()))
        if key not in reached:
            reached[key] = reach(k.source, k.kind, values)
        nth = met[c.name] = met.get(c.name, -1) + 1
        of_kernel = (blocks or {}).get(c.name) or []
        mask = of_kernel[nth] if nth < len(of_kernel) else None
        out.append((c, generated_work(k, c, params, reached[key], mask)))
    return out
