"""Two results of other workloads: the options that set the work a step does (its batch size,
its dtype, autocast) differ between base and head. Their times are of other work, so a diff
shows the two sides' figures side by side and judges none of them: no faster or slower, no
regression; the gate of ``diff`` and of ``sweep --baseline`` fails as not comparable. Pure; no
torch."""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from .diff_records import ADDED, REMOVED, CategoryDiff, SectionDiff
from .stats import Change
from .vocab import Verdict


class Workload(Protocol):
    """What a breakdown's and a compare's result both record of the workload they ran."""

    dtype: str
    autocast: bool
    batch_size: int | None


def other_workload(base: Workload, head: Workload) -> list[str]:
    """Each workload option base ran otherwise than head, as ``batch size 8 -> 16``; empty for
    the same workload. A batch size not recorded on a side (a script's, or a run saved before
    the factory's default was recorded) is not known to differ."""
    out = []
    if base.dtype != head.dtype:
        out.append(f"dtype {base.dtype} -> {head.dtype}")
    if base.autocast != head.autocast:
        out.append(f"autocast {_on(base.autocast)} -> {_on(head.autocast)}")
    if None not in (base.batch_size, head.batch_size) and base.batch_size != head.batch_size:
        out.append(f"batch size {base.batch_size} -> {head.batch_size}")
    return out


def _on(flag: bool) -> str:
    return "on" if flag else "off"


def unjudged(s: SectionDiff, changes: list[str]) -> SectionDiff:
    """A section of two workloads: each figure kept, every verdict (the step, the kernel time,
    each category, each paired kernel) ``other workload``; kernels on one side only stay added
    or removed, which is what they are."""
    s.other_workload, s.same_code = list(changes), False
    s.step = _unjudged(s.step)
    s.kernel_time = _unjudged(s.kernel_time) if s.kernel_time is not None else None
    s.categories = [CategoryDiff(c.category, _unjudged(c.change)) for c in s.categories]
    s.kernels = [replace(k, status=Verdict.OTHER_WORKLOAD, change=_unjudged(k.change))
                 if k.change is not None and k.status not in (ADDED, REMOVED) else k for k in s.kernels]
    return s


def _unjudged(ch: Change) -> Change:
    return replace(ch, verdict=Verdict.OTHER_WORKLOAD)


def workload_line(changes: list[str]) -> str:
    """The gate's words for it: ``the baseline ran another workload: batch size 8 -> 16``."""
    return "the baseline ran another workload: " + ", ".join(changes)
