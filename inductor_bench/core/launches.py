"""Each device event of a trace's columns -> its launch on the CPU: when the launch was
issued and the ``cpu_op`` events open around it, innermost first; pure, no torch.

The rules of ``timeline.launch_stacks`` and of the analysis' launch times, over columns:
the launch is the ``cuda_runtime`` / ``cuda_driver`` event with the same correlation (the
last one in the file when several share it); a sweep over each thread's ops, sorted by
start (longest first), keeps the stack of open ops at each launch; a device event whose
correlation no launch has takes the ``cpu_op`` with its ``External id`` as a one-op stack,
and its own start as its launch time.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from dataclasses import dataclass
from itertools import islice
from operator import eq

from .columns import Events, Table, TraceColumns

NO_STACK = ()


@dataclass
class Launches:
    """Per device event (by its index in ``TraceColumns.device``)."""

    issued: array  # when its launch was issued (its own start when none is recorded)
    stack: array  # index in ``stacks``
    stacks: Table  # tuple of op names, innermost first -> index; () for none


def link_launches(c: TraceColumns) -> Launches:
    dev, launch = c.device, c.launch
    stacks = Table()
    _ = stacks[NO_STACK]  # index 0
    at = launch.corr.index()  # correlation -> its (last) launch
    keys = dev.corr.keys(None) if None in at else dev.corr.keys()  # null: absent ones find it
    found = list(map(at.get, keys))
    distinct = len(at)
    del at  # room for the sweep's sorting
    lts = launch.ts
    issued = array("d", [t if i is None else lts[i] for i, t in zip(found, dev.ts, strict=True)])
    per_launch, swept = _sweep(c, stacks)
    if distinct == len(swept):
        # every correlation launched once: a device event's stack is its launch's
        sids = [None if i is None else per_launch[i] for i in found]
    else:  # the last launch swept wins, as in a dict filled thread by thread
        launch_keys = launch.corr.keys()
        by_corr = {launch_keys[i]: per_launch[i] for i in swept}
        sids = list(map(by_corr.get, keys))
    del found, swept
    if None in sids:
        sids = _by_external_id(c, sids, stacks)
    return Launches(issued=issued, stack=array("i", sids), stacks=stacks)


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


def _sweep(c: TraceColumns, stacks: Table) -> tuple[array, list[int]]:
    """The stack index of each launch with a correlation (-1 for the others), and those
    launches in sweep order: thread by thread (in the order threads first appear), by start."""
    op, launch = c.op, c.launch
    o_order = _by_thread_and_start(op)
    l_order = launch.corr.present()
    l_order.sort(key=launch.ts.__getitem__)
    l_order.sort(key=launch.where.__getitem__)
    o_ts, o_dur, o_name = op.ts, op.dur, op.name
    sorted_threads = array("i", map(op.where.__getitem__, o_order))
    l_thread, l_ts = launch.where, launch.ts
    names = c.names.values
    out = array("i", [-1]) * len(launch)
    p, n_ops = 0, len(o_order)
    thread = None
    ends: list[float] = []
    open_names: list[str] = []
    sid = 0
    for j in l_order:
        t = l_ts[j]
        if l_thread[j] != thread:
            thread = l_thread[j]
            ends, open_names, sid = [], [], 0
            p = bisect_left(sorted_threads, thread, lo=p)  # the thread's first op
        changed = False
        # ops that start at or before the launch (at its ts too) enclose it, nested
        while p < n_ops and sorted_threads[p] == thread and o_ts[k := o_order[p]] <= t:
            s = o_ts[k]
            while ends and ends[-1] <= s:
                ends.pop()
                open_names.pop()
            ends.append(s + o_dur[k])
            open_names.append(names[o_name[k]])
            changed = True
            p += 1
        while ends and ends[-1] <= t:
            ends.pop()
            open_names.pop()
            changed = True
        if changed:
            sid = stacks[tuple(reversed(open_names))]
        out[j] = sid
    return out, l_order


def _by_thread_and_start(op: Events) -> list[int]:
    """Op indices by thread, then by start, the longer first at one start, then file order
    (stable sorts, one key list at a time: no tuple per op)."""
    ts = op.ts
    order = sorted(range(len(op)), key=ts.__getitem__)
    starts = array("d", map(ts.__getitem__, order))
    if any(map(eq, starts, islice(starts, 1, None))):  # ops starting together: longest first
        del starts
        order = sorted(range(len(op)), key=op.dur.__getitem__, reverse=True)
        order.sort(key=ts.__getitem__)
    order.sort(key=op.where.__getitem__)
    return order

