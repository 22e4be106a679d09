"""What the checks record and read: the verdicts, the tolerances, ``Check`` and ``Run``, and
readers of breakdown.json that take what they find (a missing field is None, not an error).

This file imports nothing outside the standard library."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PASS, FAIL, SKIPPED = "PASS", "FAIL", "SKIPPED"


@dataclass(frozen=True)
class Tolerance:
    """``|tool - reference| <= rel * reference + abs_ms``."""

    rel: float
    abs_ms: float

    def allows(self, tool: float, ref: float) -> bool:
        return abs(tool - ref) <= self.rel * abs(ref) + self.abs_ms

    def __str__(self) -> str:
        return f"±{self.rel * 100:g}% + {self.abs_ms * 1e3:g} µs"


# Why each tolerance is what it is (docs/gpu-validation-method.md says the same at length):
# Graph kernel time, tool vs a plain profiler session: both sum CUPTI kernel durations of
# the same compiled module, with the same cached kernels and configs, in two processes; what
# differs is GPU clocks and run-to-run spread. 10%, as tests/test_gpu_breakdown.py.
GRAPH_TIME = Tolerance(0.10, 0.005)
# A kernel's time in the breakdown (CUPTI duration inside its graph, the data often still in
# L2) vs do_bench (CUDA events around one launch after a 256 MB L2 flush): the events add
# one to three microseconds of gap around a launch, and cold L2 slows memory-bound kernels.
# The top kernels of the small example models run for microseconds, so an absolute term.
KERNEL_IN_GRAPH = Tolerance(0.20, 0.003)
# `inductor-bench kernel` times the same way as do_bench (L2 flush, CUDA events around each
# call, median): only run-to-run spread and the config each autotuner picked differ.
KERNEL_COMMAND = Tolerance(0.10, 0.001)
# The tool's step samples are host time around one step plus a synchronize (compile worker);
# CUDA events around the same step exclude the synchronize's return (~10-30 µs) and run in
# another process. 15% + 50 µs.
STEP_TIME = Tolerance(0.15, 0.05)
BUSY_MAX_PCT = 100.0 + 1e-6  # busy = union of intervals / wall: never above 100%

# Triton categories whose kernel files carry a get_args()/call() harness.
HARNESS_CATEGORIES = (
    "triton_pointwise",
    "triton_reduction",
    "triton_persistent_reduction",
    "triton_split_scan",
    "triton_template",
)


@dataclass
class Check:
    name: str
    status: str  # PASS | FAIL | SKIPPED
    numbers: str
    data: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        return f"{self.status} {self.name}: {self.numbers}"


@dataclass
class Run:
    """One breakdown (or compare) run of the validation."""

    label: str  # e.g. mlp-train-default
    model: Path
    train: bool
    mode: str
    dir: Path
    rc: int | None = None
    seconds: float = 0.0
    bd: dict[str, Any] | None = None  # breakdown.json, read as plain JSON
    cli_error: str = ""  # the CLI's last stderr line when it failed
    cmd: list[str] = field(default_factory=list)  # the command line, for the report


class MeasureError(Exception):
    """An independent measurement failed (its log says why)."""


# -- reading breakdown.json defensively ---------------------------------------------------


def num(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def graphs(bd: dict[str, Any] | None) -> list[dict[str, Any]]:
    gs = (bd or {}).get("graphs")
    return [g for g in gs if isinstance(g, dict)] if isinstance(gs, list) else []


def step_samples(bd: dict[str, Any] | None) -> list[float]:
    bd = bd or {}
    for holder in (bd.get("extras"), bd):
        if isinstance(holder, dict) and isinstance(holder.get("step_samples_ms"), list):
            return [v for v in holder["step_samples_ms"] if num(v) is not None]
    return []


def column_samples(m: dict[str, Any]) -> list[float]:
    """A compare column's step samples: the interleaved ones (``paired_ms``, blocks) when it
    has them, else its compile worker's."""
    blocks = m.get("paired_ms")
    if isinstance(blocks, list) and any(isinstance(b, list) and b for b in blocks):
        return [v for b in blocks if isinstance(b, list) for v in b if num(v) is not None]
    return [v for v in m.get("step_samples_ms") or [] if num(v) is not None]


def torch_setting(bd: dict[str, Any] | None, key: str) -> Any:
    ts = ((bd or {}).get("extras") or {}).get("torch_settings") or {}
    vals = ts.get("values") if isinstance(ts, dict) else None
    return vals.get(key) if isinstance(vals, dict) else None


def pct(busy: float | None, wall: float | None) -> float | None:
    return 100.0 * busy / wall if busy is not None and wall else None


def triton_kernels(bd: dict[str, Any] | None) -> list[tuple[str, dict[str, Any]]]:
    """(graph id, kernel) of every Triton kernel with a file and a harness, slowest first."""
    out = []
    for g in graphs(bd):
        if g.get("status", "ok") != "ok":
            continue
        for k in g.get("kernels") or []:
            if isinstance(k, dict) and k.get("file") and k.get("category") in HARNESS_CATEGORIES:
                out.append((str(g.get("id")), k))
    return sorted(out, key=lambda gk: -(num(gk[1].get("ms")) or 0.0))


def _fmt(x: float | None, unit: str = " ms", digits: int = 4) -> str:
    return "n/a" if x is None else f"{x:.{digits}g}{unit}"


def _delta(tool: float, ref: float) -> str:
    return f"{100.0 * (tool - ref) / ref:+.1f}%" if ref else "n/a"


def verdict(ok: bool) -> str:
    return PASS if ok else FAIL
