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
from operator import neg

from .columns import Table, TraceColumns

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
    keys = dev.corr.keys()
    if None in at:  # a launch whose correlation is null: absent ones look it up
        keys = dev.corr.keys(None)
    found = list(map(at.get, keys))
    lts = launch.ts
    issued = array("d", [t if i is None else lts[i] for i, t in zip(found, dev.ts, strict=True)])
    per_launch = _sweep(c, stacks)
    if len(at) == len(per_launch):
        # every correlation launched once: a device event's stack is its launch's
        sids = [None if i is None else per_launch[i] for i in found]
    else:  # the last launch swept wins, as in a dict filled thread by thread
        launch_keys = launch.corr.keys()
        by_corr = {launch_keys[i]: sid for i, sid in per_launch.items()}
        sids = list(map(by_corr.get, keys))
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


def _sweep(c: TraceColumns, stacks: Table) -> dict[int, int]:
    """launch index -> stack index, for every launch with a correlation, in sweep order:
    thread by thread (in the order threads first appear), launches by start."""
    op, launch = c.op, c.launch
    o_keys = list(zip(op.where, op.ts, map(neg, op.dur), strict=True))
    o_order = sorted(range(len(op)), key=o_keys.__getitem__)
    l_order = sorted(
        launch.corr.present(),
        key=list(zip(launch.where, launch.ts, strict=True)).__getitem__,
    )
    o_thread, o_ts, o_dur, o_name = op.where, op.ts, op.dur, op.name
    sorted_threads = array("i", map(o_thread.__getitem__, o_order))
    l_thread, l_ts = launch.where, launch.ts
    names = c.names.values
    out: dict[int, int] = {}
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
        while p < n_ops and o_thread[k := o_order[p]] == thread and o_ts[k] <= t:
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
    return out

