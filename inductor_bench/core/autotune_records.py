"""The records ``--autotune-top`` adds to a breakdown: Triton kernels re-tuned from their
files on a GPU (``KernelRetuning``), or the model recompiled with max-autotune on CPU and its
kernels matched (``Recompile``). Saved under the breakdown's ``extras.autotune``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from .stats import Change, judge_paired
from .vocab import AutotuneRoute


def _known(cls: type, d: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in d.items() if k in names}


@dataclass
class RetunedKernel:
    """``--autotune-top`` on a GPU: one Triton kernel re-tuned from its file."""

    graph: str
    kernel: str
    category: str
    share: float  # of step wall time, 0..1
    model_ms: float  # its time in the breakdown
    base_ms: float | None = None  # re-benchmarked: baseline config
    tuned_ms: float | None = None  # re-benchmarked: after max-autotune
    error: str | None = None  # why it could not be re-benchmarked
    skipped: str | None = None  # why it was not tried (its file cannot launch it)
    configs_base: int | None = None  # configs tried by each (None: it did not run)
    configs_tuned: int | None = None
    config: str | None = None  # the config max-autotune picked
    verdict: str | None = None
    speedup: float | None = None  # base / tuned
    bound: float = 0.0  # share of step time it can save at most (Amdahl)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if self.configs_base is None:  # a failed kernel has no measured fields
            for k in ("configs_base", "configs_tuned", "config", "verdict"):
                del d[k]
        if self.skipped is None:
            del d["skipped"]
        return d


@dataclass
class KernelMatch:
    """``--autotune-top`` on CPU: a kernel of the default run against max-autotune's."""

    graph: str
    base_name: str | None  # None: added by max-autotune
    tuned_name: str | None  # None: removed by max-autotune
    base_category: str | None
    tuned_category: str | None
    aten_ops: list[str]
    base_ms: float
    tuned_ms: float
    delta_ms: float  # tuned - base
    matched_by: str | None  # the matching stage (core/match.py), None when unmatched
    change: str  # what changed: renamed / category / added / removed / same kernel
    verdict: str


@dataclass
class KernelRetuning:
    """``--autotune-top N`` on a GPU: the N most expensive Triton kernels re-tuned."""

    n: int
    rows: list[RetunedKernel]
    total_bound: float  # sum of the rows' bounds
    route: str = AutotuneRoute.KERNELS

    def to_dict(self) -> dict[str, Any]:
        rows = [r.to_dict() for r in self.rows]
        return {"route": self.route, "n": self.n, "rows": rows, "total_bound": self.total_bound}


@dataclass
class Recompile:
    """``--autotune-top N`` on CPU: the model recompiled with mode max-autotune."""

    n: int
    tuned_run: str  # its run directory
    tuned_status: str
    base_step_ms: float  # the real step, both models timed interleaved in one process
    tuned_step_ms: float
    base_kernel_ms: float
    tuned_kernel_ms: float
    rows: list[KernelMatch]
    route: str = AutotuneRoute.RECOMPILE
    # the interleaved timing's blocks, base_paired_ms[round] (the headline's verdict); empty
    # where it could not run: the steps are then the two runs' graph walls added up
    base_paired_ms: list[list[float]] = field(default_factory=list)
    tuned_paired_ms: list[list[float]] = field(default_factory=list)
    step_note: str | None = None  # why the steps are not interleaved ones
    min_rel: float = 0.10  # the device's floor for a significant change (Backend.min_rel_change)
    # the interleaved timing's load (core/load.py's saved Load; None: not read, not timed)
    step_load: dict[str, Any] | None = None
    # why each side's interleaved timing stopped, [base, tuned] (runner/rounds.py's Stop; None:
    # the rounds ran out first); empty where not saved
    step_stopped: list[str | None] = field(default_factory=list)

    def step_change(self) -> Change | None:
        """Base -> max-autotune step time, judged round by round; None without the rounds."""
        if not (self.base_paired_ms and self.tuned_paired_ms):
            return None
        return judge_paired(self.base_paired_ms, self.tuned_paired_ms, min_rel=self.min_rel)

    def to_dict(self) -> dict[str, Any]:
        unsaved_when_empty = ("step_load", "step_stopped")
        d = {k: v for k, v in asdict(self).items() if k != "route" and (k not in unsaved_when_empty or v)}
        return {"route": self.route, **d}


Autotune = KernelRetuning | Recompile


def autotune_from_dict(d: dict[str, Any] | None) -> Autotune | None:
    if not d:
        return None
    body = {k: v for k, v in d.items() if k != "route"}
    if d.get("route") == AutotuneRoute.KERNELS:
        body["rows"] = [RetunedKernel(**_known(RetunedKernel, r)) for r in body.get("rows", [])]
        return KernelRetuning(**_known(KernelRetuning, body))
    body["rows"] = [KernelMatch(**_known(KernelMatch, r)) for r in body.get("rows", [])]
    return Recompile(**_known(Recompile, body))
