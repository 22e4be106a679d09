"""Each device event of a trace's columns -> its launch on the CPU: when the launch was
issued and the ``cpu_op`` events open around it, innermost first; pure, no torch.

The rules of ``timeline.launch_stacks`` and of the analysis' launch times, over columns:
the launch is the ``cuda_runtime`` / ``cuda_driver`` event with the same correlation (the
last one in the file when several share it); a sweep over each thread's ops, sorted by
start (longest first), keeps the stack of open ops at each launch whose correlation a
device event has (the other runtime calls are passed over); a device event whose
correlation no launch has takes the ``cpu_op`` with its ``External id`` as a one-op stack,
and its own start as its launch time. A launch no op encloses (an extension's kernel called
from Python through its own bindings, as apex's fused optimizers are) is placed by the
innermost ``record_function`` range open around it on its thread (``Launches.around``).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import compress, islice
from operator import eq
from typing import Any

from .columns import ITERATION_MARKER, MISSING, Events, Table, TraceColumns

NO_STACK = ()
LAUNCHED_BEFORE = float("-inf")  # the launch time of work launched before the trace began


@dataclass
class Launches:
    """Per device event (by its index in ``TraceColumns.device``)."""

    issued: array  # when its launch was issued (its own start when none is recorded)
    stack: array  # index in ``stacks``
    stacks: Table  # tuple of op names, innermost first -> index; () for none
    # its launch's index in ``TraceColumns.launch`` (-1: none); kept only for a trace with
    # recorded shapes (``core/shaped_ops.py`` finds the op the launch was made in)
    launch: array | None = None
    # a device event whose launch no op encloses -> the name id of the innermost
    # record_function range open around that launch on its thread (none: absent)
    around: dict[int, int] = field(default_factory=dict)


def link_launches(c: TraceColumns) -> Launches:
    dev, launch = c.device, c.launch
    stacks = Table()
    _ = stacks[NO_STACK]  # index 0
    at = launch.corr.index()  # correlation -> its (last) launch
    keys = dev.corr.keys(None) if None in at else dev.corr.keys()  # null: absent ones find it
    found = list(map(at.get, keys))
    todo, unique = _launches_of_device_events(launch, at, found, keys)
    del at  # room for the sweep's sorting
    lts = launch.ts
    issued = array("d", [t if i is None else lts[i] for i, t in zip(found, dev.ts, strict=True)])
    _before_the_trace(issued, found, dev.corr.ids, launch.corr.ids)
    launch_of = array("q", [-1 if i is None else i for i in found]) if c.shape_args else None
    per_launch, swept = _sweep(c, stacks, todo)
    if unique:
        # every correlation launched once: a device event's stack is its launch's
        sids = [None if i is None else per_launch[i] for i in found]
    else:  # the last launch swept wins, as in a dict filled thread by thread
        launch_keys = launch.corr.keys()
        by_corr = {launch_keys[i]: per_launch[i] for i in swept}
        sids = list(map(by_corr.get, keys))
    bare = {j: i for j, (i, s) in enumerate(zip(found, sids, strict=True)) if i is not None and not s}
    around = _ranges_around(c, bare)
    del found, swept
    if None in sids:
        sids = _by_external_id(c, sids, stacks)
    return Launches(issued=issued, stack=array("i", sids), stacks=stacks, launch=launch_of, around=around)


def _ranges_around(c: TraceColumns, bare: dict[int, int]) -> dict[int, int]:
    """For each device event of ``bare`` (-> its launch, which no op encloses): the name id
    of the latest-opened ``record_function`` range still open at the launch on the launch's
    thread (``Optimizer.step#FusedAdam.step`` around apex's ``multi_tensor_apply_kernel``);
    not the iteration marker, which only says which step it is."""
    if not bare or not c.regions:
        return {}
    marker = c.names.get(ITERATION_MARKER)
    ranges: dict[int, list[tuple[float, float, int]]] = {}
    for name, start, end, thread in c.regions:
        if name != marker:
            ranges.setdefault(thread, []).append((start, -end, name))
    lts, lwhere = c.launch.ts, c.launch.where
    out: dict[int, int] = {}
    by_thread: dict[int, list[tuple[float, int]]] = {}
    for j, i in bare.items():
        by_thread.setdefault(lwhere[i], []).append((lts[i], j))
    for thread, launches in by_thread.items():
        spans = sorted(ranges.get(thread, ()))
        open_: list[tuple[float, int]] = []  # (end, name id), the latest opened last
        p = 0
        for t, j in sorted(launches):
            while p < len(spans) and spans[p][0] <= t:
                open_.append((-spans[p][1], spans[p][2]))
                p += 1
            open_ = [r for r in open_ if r[0] >= t]
            if open_:
                out[j] = open_[-1][1]
    return out


def _before_the_trace(issued: array, found: list[int | None], dev_ids: array, launch_ids: array) -> None:
    """Device events without a launch whose correlation is below every recorded launch's
    (correlations count up in a process) were launched before the profiler started: their
    launch is set before every step (``LAUNCHED_BEFORE``), so that the step they run in counts
    them as other work, not as its own."""
    if None not in found:  # every device event's launch is in the trace
        return
    first = min((v for v in launch_ids if v > 0), default=None)
    if first is None:
        return
    for j, i in enumerate(found):
        if i is None and 0 < dev_ids[j] < first:
            issued[j] = LAUNCHED_BEFORE


def _by_external_id(c: TraceColumns, sids: list[int | None], stacks: Table) -> list[int]:
    """Device events without a launch: the ``cpu_op`` with the same External id (the last
    one in the file) as a one-op stack, else no stack."""
    ops = c.op.ext.index()
    keys = c.device.ext.keys(None) if None in ops else c.device.ext.keys()
    names, op_name = c.names.values, c.op.name
    out = []
    for sid, key in zip(sids, keys, strict=True):
        if sid is None:
            op = ops.get(key)
            sid = stacks[(names[op_name[op]],)] if op is not None else 0
        out.append(sid)
    return out


def _launches_of_device_events(launch: Events, at: dict[Any, int], found: list[int | None],
                               keys: Sequence[Any]) -> tuple[list[int], bool]:
    """The launches whose correlation a device event has (the others, most runtime calls
    such as ``cudaGetDevice``, launch nothing the analysis reads), and whether each of their
    correlations is launched once."""
    corr = launch.corr
    if len(at) == len(corr.ids) - corr.ids.count(MISSING) + len(corr.odd):
        # every correlation launched once (as many as launches have): the device events' own
        mark = bytearray(len(launch))
        for i in found:
            if i is not None:
                mark[i] = 1
        return list(compress(range(len(launch)), mark)), True
    wanted = at.keys() & set(keys)
    values = corr.keys()
    todo = [j for j in corr.present() if values[j] in wanted]
    return todo, len(todo) == len(wanted)


def _sweep(c: TraceColumns, stacks: Table, l_order: list[int]) -> tuple[array, list[int]]:
    """The stack index of each launch of ``l_order`` (-1 for the others), and those launches
    in sweep order (``l_order`` sorted): thread by thread (in the order threads first appear),
    by start."""
    op, launch = c.op, c.launch
    o_order = _by_thread_and_start(op)
    l_order.sort(key=launch.ts.__getitem__)
    l_order.sort(key=launch.where.__getitem__)
    o_ts, o_dur, o_name = op.ts, op.dur, op.name
    sorted_threads = array("i", map(op.where.__getitem__, o_order))
    l_thread, l_ts = launch.where, launch.ts
    names, steps = c.names.values, c.names.steps
    out = array("i", [-1]) * len(launch)
    # the open ops as the stack index of each depth: an op opening on stack P is the stack
    # (its name, *P's names), found through ``child`` without building the tuple again
    child: dict[tuple[int, int], int] = {}
    values = stacks.values
    p, n_ops = 0, len(o_order)
    thread = None
    ends: list[float] = []
    open_sids: list[int] = []
    for j in l_order:
        t = l_ts[j]
        if l_thread[j] != thread:
            thread = l_thread[j]
            ends, open_sids = [], []
            p = bisect_left(sorted_threads, thread, lo=p)  # the thread's first op
        # ops that start at or before the launch (at its ts too) enclose it, nested
        while p < n_ops and sorted_threads[p] == thread and o_ts[k := o_order[p]] <= t:
            p += 1
            if o_name[k] in steps:  # a ProfilerStep#N written as a cpu_op is the step, no op
                continue
            s = o_ts[k]
            while ends and ends[-1] <= s:
                ends.pop()
                open_sids.pop()
            parent = open_sids[-1] if open_sids else 0
            key = (parent, o_name[k])
            sid = child.get(key)
            if sid is None:
                sid = child[key] = stacks[(names[o_name[k]], *values[parent])]
            ends.append(s + o_dur[k])
            open_sids.append(sid)
        while ends and ends[-1] <= t:
            ends.pop()
            open_sids.pop()
        out[j] = open_sids[-1] if open_sids else 0
    return out, l_order


def _by_thread_and_start(op: Events) -> list[int]:
    """Op indices by thread, then by start, the longer first at one start, then file order
    (stable sorts, one key list at a time: no tuple per op). The ops that start together are
    few: the sort by start alone, then each run of equal starts by length."""
    ts, dur = op.ts, op.dur
    order = sorted(range(len(op)), key=ts.__getitem__)
    starts = array("d", map(ts.__getitem__, order))
    ties = list(compress(range(1, len(order)), map(eq, starts, islice(starts, 1, None))))
    del starts
    for a, b in _runs(ties):
        order[a:b] = sorted(order[a:b], key=dur.__getitem__, reverse=True)
    order.sort(key=op.where.__getitem__)
    return order


def _runs(ties: list[int]) -> list[tuple[int, int]]:
    """[start, end) of each run of positions equal to the one before (``ties``: those
    positions, ascending), its first member included."""
    runs: list[tuple[int, int]] = []
    for i in ties:
        if runs and runs[-1][1] == i:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i - 1, i + 1))
    return runs
