"""CUDA-graph replays in a profiler trace, per step and device; pure, no torch.

A replayed graph's kernels, memcpys and memsets are recorded one by one, each with the
correlation of the one ``cudaGraphLaunch`` (``cuGraphLaunch``, ``hipGraphLaunch``) that
replayed them (docs/analyze.md). Per step, the replays are those the step launched (its
device events, ``StepEvents.per_step``, whose correlation a graph launch has), counted on the
device their events ran on; their events and the time of those events.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .columns import MISSING, TraceColumns
from .steps import US_PER_MS, StepEvents, device_order

GRAPH_LAUNCH = re.compile(r"^(?:cuda|cu|hip)GraphLaunch(?:_v\d+)?$")


@dataclass
class GraphReplays:
    """One device's replays, per step (0 where it replayed none). Times in ms."""

    device: str
    launches: list[int]  # graph launches whose work ran on the device
    events: list[int]  # device events they replayed
    ms: list[float]  # the time of those events (summed durations)


def graph_replays(c: TraceColumns, split: StepEvents) -> list[GraphReplays]:
    """Each device that ran a replayed graph's work in a step, devices in report order."""
    names = c.names.values
    launch_names = c.launch.name
    graph = {i for i, n in enumerate(names) if GRAPH_LAUNCH.match(n)}
    if not graph or not len(launch_names) or not len(c.device):
        return []
    keys = c.launch.corr.keys()
    replayed = {keys[i] for i, n in enumerate(launch_names) if n in graph}
    replayed.discard(None)
    replayed.discard(MISSING)
    if not replayed:
        return []
    corr, dur, row = c.device.corr.keys(), split.events.dur, split.row
    n = len(split.per_step)
    found: dict[int, GraphReplays] = {}
    for k, js in enumerate(split.per_step):
        seen: dict[int, set[object]] = {}
        for j in js:
            key = corr[j]
            if key in replayed:
                r = found.get(row[j])
                if r is None:
                    r = found[row[j]] = GraphReplays(split.rows[row[j]], [0] * n, [0] * n, [0.0] * n)
                r.events[k] += 1
                r.ms[k] += dur[j] / US_PER_MS
                seen.setdefault(row[j], set()).add(key)
        for dev, launches in seen.items():
            found[dev].launches[k] = len(launches)
    return [found[r] for r in sorted(found, key=lambda r: device_order(split.rows[r]))]
