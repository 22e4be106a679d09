"""The top kernels (on a CPU-only trace, ops) in the typical step; pure, no torch.

Each row's figures are the mean over the same steady steps as the category table's
(``analyze_result.steady_indices``), so the rows of a device and category add up to that table's
figure; a kernel that ran only in steps left out of the mean is in no row, but named apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from .steady import mean


class StepKernel(Protocol):
    """A kernel's figures in every step (``analyze_result.TraceKernel``)."""

    device: str
    name: str
    category: str
    per_step_ms: list[float]
    per_step_calls: list[int]
    launched_by: str | None
    launchers: list[str]


@dataclass
class TypicalKernel:
    """One kernel (device, name, category) in the typical step: calls and ms, the means over
    the steady steps (0 in a step it did not run in)."""

    device: str
    name: str
    category: str
    calls: float
    ms: float
    launched_by: str | None = None
    launchers: list[str] = field(default_factory=list)


def typical_kernels(kernels: list[StepKernel], kept: list[int]) -> list[TypicalKernel]:
    """Each kernel that ran in a step of ``kept``, its figures the mean over them, the most
    time first."""
    rows = [TypicalKernel(k.device, k.name, k.category, mean([k.per_step_calls[i] for i in kept]),
                          mean([k.per_step_ms[i] for i in kept]), k.launched_by, k.launchers)
            for k in kernels]
    return sorted((r for r in rows if r.calls), key=lambda r: (-r.ms, r.device, r.name, r.category))


def device_kernel_ms(rows: list[TypicalKernel]) -> dict[str, float]:
    """Each device's (a CPU-only trace's: each host thread's) kernel time in the typical step:
    the sum of its rows, its category table's total, the base of a row's share (a share of
    every device's time together read a kernel that took all of its own GPU's time as 50% on
    two GPUs)."""
    totals: dict[str, float] = {}
    for r in rows:
        totals[r.device] = totals.get(r.device, 0.0) + r.ms
    return totals


def kernels_left_out(kernels: list[StepKernel], kept: list[int],
                     steps: list[str]) -> list[tuple[str, list[str]]]:
    """The kernels that ran only in steps left out of the typical step, with those steps (of
    ``steps``, every step's name), the most time first."""
    out = set(kept)
    only = [k for k in kernels if any(k.per_step_calls) and not any(k.per_step_calls[i] for i in out)]
    only.sort(key=lambda k: -sum(k.per_step_ms))
    return [(k.name, [steps[i] for i, n in enumerate(k.per_step_calls) if n]) for k in only]
