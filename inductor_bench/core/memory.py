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

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
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


@dataclass
class MemoryColumns:
    """The ``[memory]`` events of a trace, in file order: when, on which device (an index in
    ``devices``), the bytes allocated (negative: freed) and the total allocated after it."""

    devices: list[str] = field(default_factory=list)
    ts: array = field(default_factory=lambda: array("d"))
    device: array = field(default_factory=lambda: array("i"))
    bytes: array = field(default_factory=lambda: array("d"))
    total: array = field(default_factory=lambda: array("d"))

    def __len__(self) -> int:
        return len(self.ts)

    def add(self, ts: Sequence[float], kinds: Sequence[Any], ids: Sequence[Any],
            nbytes: Sequence[Any], totals: Sequence[Any]) -> None:
        """Events as the decoder gives their fields; one whose total is not a number is left out."""
        for t, kind, i, b, total in zip(ts, kinds, ids, nbytes, totals, strict=True):
            if not _number(total) or not _number(t):
                continue
            label = device_label(kind, i)
            if label not in self.devices:
                self.devices.append(label)
            self.ts.append(float(t))
            self.device.append(self.devices.index(label))
            self.bytes.append(float(b) if _number(b) else 0.0)
            self.total.append(float(total))

    def add_raw(self, raw: dict[str, Any]) -> None:
        """One event as ``json.loads`` read it (one the typed decoder refused)."""
        args = raw.get("args") if isinstance(raw.get("args"), dict) else {}
        self.add([raw.get("ts")], [args.get("Device Type")], [args.get("Device Id")],
                 [args.get("Bytes")], [args.get("Total Allocated")])


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and x == x


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
    per_device: list[list[int]] = [[] for _ in m.devices]
    for j, d in enumerate(m.device):
        per_device[d].append(j)
    out = []
    for label, js in zip(m.devices, per_device, strict=True):
        js.sort(key=m.ts.__getitem__)
        ts = [m.ts[j] for j in js]
        totals = [m.total[j] for j in js]
        before = [m.total[j] - m.bytes[j] for j in js]
        out.append(DeviceMemory(label, [_one(ts, totals, before, s, e) for _, s, e in windows]))
    return out


def _one(ts: list[float], totals: list[float], before: list[float], start: float, end: float
         ) -> StepMemory | None:
    a, b = bisect_left(ts, start), bisect_right(ts, end)
    if a == 0 and b == 0:
        return None  # nothing allocated yet
    at_start = totals[a - 1] if a > 0 else before[0]
    at_end = totals[b - 1] if b > 0 else at_start
    return StepMemory(at_start, max([at_start, *totals[a:b]]), at_end)
