"""What a trace recorded with ``profile_memory=True`` says about memory, per step and device
(pure, no torch).

With ``profile_memory`` the profiler writes an instant event ``[memory]`` at every allocation
and free it sees: ``Bytes`` (negative for a free), ``Total Allocated`` after it, and the device
(``Device Type``: c10's ``DeviceType``, ``Backend.c10_type``; ``Device Id``). On a GPU the total is
the caching allocator's own count of the process's live tensors (``memory_allocated()``); on the
CPU it counts only the blocks allocated while the profiler ran, so it starts near 0.

Per step and device: the total **at its start** (the last event before it, or the first in it
less its bytes), its **peak** (the highest total during the step, its start included) and the
total **at its end**. The peak over the start is the step's transient memory: activations,
gradients, an optimizer's temporaries. A total higher at every step's end than at its start is
memory held across steps.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import compress
from typing import Any

from .devices import BACKENDS, HOST

MEMORY_EVENT = "[memory]"
INSTANT_CATEGORY = "cpu_instant_event"  # the category kineto writes them under
C10_TYPES = {b.c10_type: b for b in BACKENDS if b.c10_type is not None}


def device_label(kind: Any, index: Any) -> str:
    """The host's backend name ("cpu"), a device's with its index ("cuda:0"), or "device type
    9:1" from the event's ``Device Type`` and ``Device Id``."""
    if not isinstance(kind, int):
        return "device ?"
    b = C10_TYPES.get(kind)
    if b is not None and b.timeline == HOST:
        return b.name
    return f"{b.name if b else f'device type {kind}'}:{index}"


class _DeviceIndex(dict):
    """(Device Type, Device Id) -> the index of its label in ``labels`` (a new one appended)."""

    def __init__(self, labels: list[str]) -> None:
        super().__init__()
        self.labels = labels

    def __missing__(self, key: tuple[Any, Any]) -> int:
        label = device_label(*key)
        if label not in self.labels:
            self.labels.append(label)
        self[key] = i = self.labels.index(label)
        return i


@dataclass
class MemoryColumns:
    """The ``[memory]`` events of a trace, in file order: when, on which device (an index in
    ``devices``), the bytes allocated (negative: freed) and the total allocated after it."""

    devices: list[str] = field(default_factory=list)
    ts: array = field(default_factory=lambda: array("d"))
    device: array = field(default_factory=lambda: array("i"))
    bytes: array = field(default_factory=lambda: array("d"))
    total: array = field(default_factory=lambda: array("d"))

    def __post_init__(self) -> None:
        self._index = _DeviceIndex(self.devices)

    def __len__(self) -> int:
        return len(self.ts)

    def add(self, ts: Sequence[Any], kinds: Sequence[Any], ids: Sequence[Any],
            nbytes: Sequence[Any], totals: Sequence[Any], absent: Any = None) -> None:
        """Events as the decoder gives their fields (``absent``: what it gives for an absent
        one); one whose time or total is not a finite number is left out, absent bytes read 0.
        Every column is converted at C level; a run holding anything else (a value that is no
        number, or "inf" or "NaN": a sum tells) is read event by event."""
        try:
            if absent in nbytes or absent in totals or absent in ts:
                raise TypeError
            cols = [array("d", ts), array("d", nbytes), array("d", totals)]
            if not math.isfinite(sum(map(sum, cols))):
                raise TypeError
            where = array("i", map(self._index.__getitem__, zip(kinds, ids, strict=True)))
        except (TypeError, OverflowError):
            for one in zip(ts, kinds, ids, nbytes, totals, strict=True):
                self._add_one(*one)
            return
        for col, values in zip((self.ts, self.bytes, self.total), cols, strict=True):
            col.extend(values)
        self.device.extend(where)

    def add_instants(self, xs: list[Any], absent: Any) -> None:
        """The ``[memory]`` events among a run's instant events (decoded structs with ``ts``,
        ``name`` and ``args.a0`` .. ``a3``: Device Type, Device Id, Bytes, Total Allocated)."""
        xs = [x for x in xs if x.name == MEMORY_EVENT]
        args = [x.args for x in xs]
        self.add([x.ts for x in xs], [a.a0 for a in args], [a.a1 for a in args], [a.a2 for a in args],
                 [a.a3 for a in args], absent=absent)

    def _add_one(self, t: Any, kind: Any, index: Any, nbytes: Any, total: Any) -> None:
        if not _number(total) or not _number(t):
            return
        self.ts.append(float(t))
        self.device.append(self._index[(kind, index) if _hashable(kind, index) else (None, None)])
        self.bytes.append(float(nbytes) if _number(nbytes) else 0.0)
        self.total.append(float(total))

    def add_raw(self, raw: dict[str, Any]) -> None:
        """One event as ``json.loads`` read it (one the typed decoder refused)."""
        args = raw.get("args") if isinstance(raw.get("args"), dict) else {}
        self._add_one(raw.get("ts"), args.get("Device Type"), args.get("Device Id"), args.get("Bytes"),
                      args.get("Total Allocated"))


def _hashable(*xs: Any) -> bool:
    try:
        hash(xs)
    except TypeError:
        return False
    return True


def _number(x: Any) -> bool:
    """A finite number, no bool (an infinite total or time would make every figure of its step
    one; an int past a float's range is none either)."""
    if not isinstance(x, int | float) or isinstance(x, bool):
        return False
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


@dataclass
class StepMemory:
    """One device in one step, in bytes."""

    start: float
    peak: float
    end: float


@dataclass
class DeviceMemory:
    device: str
    steps: list[StepMemory | None]  # per step; None where it has no event before or in it


def step_memory(m: MemoryColumns, windows: Sequence[tuple[str, float, float]]) -> list[DeviceMemory]:
    """Each device's memory in each step window (name, start, end)."""
    order = sorted(range(len(m)), key=m.ts.__getitem__)  # stable: file order at equal times
    devs = list(map(m.device.__getitem__, order))
    out = []
    for d, label in enumerate(m.devices):
        js = order if len(m.devices) == 1 else list(compress(order, map(d.__eq__, devs)))
        ts, totals = list(map(m.ts.__getitem__, js)), list(map(m.total.__getitem__, js))
        first = totals[0] - m.bytes[js[0]]  # before the first event
        out.append(DeviceMemory(label, [_one(ts, totals, first, s, e) for _, s, e in windows]))
    return out


def _one(ts: list[float], totals: list[float], first: float, start: float, end: float) -> StepMemory | None:
    a, b = bisect_left(ts, start), bisect_right(ts, end)
    if a == 0 and b == 0:
        return None  # nothing allocated yet
    at_start = totals[a - 1] if a > 0 else first
    at_end = totals[b - 1] if b > 0 else at_start
    return StepMemory(at_start, max([at_start, *totals[a:b]]), at_end)
