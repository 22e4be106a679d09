"""The memory section of ``analyze``: what a trace recorded with ``profile_memory=True`` says
per device (``core/memory.py``)."""

from __future__ import annotations

from ..core.analyze_result import AnalyzeResult
from ..core.memory import DeviceMemory, StepMemory
from ..core.ranks import RankResult
from .analyze_top import step_code
from .doc import Doc

MIB = float(1 << 20)
# Held across steps is called out where it grew in every step by at least this much on average.
HELD_MIB = 1.0


def memory_section(doc: Doc, r: AnalyzeResult) -> None:
    """Per device: the allocated total at the first step's start, the highest peak and its step,
    the largest rise within one step, the total at the last step's end and the mean change a step."""
    names = [step_code(doc, s.name) for s in r.steps]
    _section(doc, [([], names, d) for d in r.memory], [], "per device")


def ranks_memory_section(doc: Doc, ranks: list[RankResult]) -> None:
    """The same, one row per rank and device: which rank needs the most memory."""
    found = [([f"rank {rank.rank}"], [step_code(doc, s.step) for s in rank.steps], d)
             for rank in ranks for d in rank.memory]
    _section(doc, found, ["rank"], "per rank")


Found = list[tuple[list[str], list[str], DeviceMemory]]  # (lead cells, step names, a device's memory)


def _section(doc: Doc, found: Found, lead: list[str], what: str) -> None:
    rows, notes = [], []
    for cells, names, d in found:
        steps = [(names[k], s) for k, s in enumerate(d.steps) if s is not None]
        if not steps:
            continue
        rows.append(cells + _row(d.device, steps))
        if (held := _held(steps)) is not None:
            who = " ".join([*cells, d.device])
            notes.append(f"WARNING: {who}: the memory allocated grew in every one of the {len(steps)} "
                         f"steps, {_mib(held, '+')} MiB a step: held across steps (a leak, a cache "
                         "filling, losses or outputs kept with their graphs)")
    if not rows:
        return
    doc.heading(f"Memory (profile_memory: allocated, {what})")
    doc.table(rows, [*lead, "device", "at start MiB", "peak MiB", "peak in", "step's own MiB", "at end MiB",
                     "change a step MiB"], (*("left",) * len(lead), "left", "right", "right", "left",
                                            *("right",) * 3))
    for line in notes:
        doc.paragraph(line)
    doc.fine_print(
        "allocated = the total the profiler's [memory] events give after each allocation and free: "
        "on a GPU the caching allocator's live tensors (memory_allocated(), not what it reserved); on "
        "the CPU only the blocks allocated while the profiler ran. at start: at the first step's start; "
        "peak: the highest in any step, and which; step's own: the most one step rose above its own "
        "start (activations, gradients, temporaries); at end: at the last step's end; change a step: "
        "the mean of each step's end less its start (docs/analyze.md)."
    )


def _row(device: str, steps: list[tuple[str, StepMemory]]) -> list[str]:
    name, top = max(steps, key=lambda ns: ns[1].peak)
    own = max(s.peak - s.start for _, s in steps)
    change = sum(s.end - s.start for _, s in steps) / len(steps)
    return [device, _mib(steps[0][1].start), _mib(top.peak), name, _mib(own), _mib(steps[-1][1].end),
            _mib(change, "+")]


def _mib(n: float, sign: str = "") -> str:
    """MiB to 0.1 from 10 MiB up, else to 3 significant digits (a small model's 4 kB reads 0.00391),
    and under a kB to 3 decimals: a CPU step's 4 bytes left allocated read 0.000, not 3.81e-06."""
    v = n / MIB
    if abs(v) >= 10:
        return f"{v:{sign}.1f}"
    return f"{v:{sign}.3f}" if 0 < abs(v) < 0.001 else f"{v:{sign}.3g}"


def _held(steps: list[tuple[str, StepMemory]]) -> float | None:
    """The mean growth a step where every step of several ended above its start, by enough."""
    growth = [s.end - s.start for _, s in steps]
    mean = sum(growth) / len(growth)
    return mean if len(steps) > 1 and min(growth) > 0 and mean >= HELD_MIB * MIB else None
