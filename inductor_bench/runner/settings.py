"""How a run measures, and whom it tells along the way: one record handed down from the
command to every worker a run starts (breakdown, each mode of compare, --autotune-top)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.progress import QUIET, Progress
from .rundir import OnSaved
from .worker import DEFAULT_TIMEOUT_S

# Steady-state calls of the real model timed after its first (compile) call, by breakdown:
# for STEP_BUDGET_S seconds, within MIN_STEPS..DEFAULT_STEPS calls (the step time only sets
# the time outside the graphs there; compare measures longer, runner/compare_timer.py).
DEFAULT_STEPS = 100
# Fresh profiling processes a graph's windows are shared among (core/processes.py).
DEFAULT_PROCESSES = 2
MIN_STEPS = 5
STEP_BUDGET_S = 0.5


@dataclass
class RunSettings:
    iterations: int | None = None  # profiled iterations per window (None: auto)
    windows: int | None = None  # profiler sessions per graph, the fastest kept (None: default)
    processes: int = DEFAULT_PROCESSES  # fresh worker processes the windows are shared among
    timeout: float = DEFAULT_TIMEOUT_S  # seconds per worker
    steps: int = DEFAULT_STEPS  # timed steady-state calls of the real model, at most
    step_budget_s: float | None = STEP_BUDGET_S  # stop timing after this long (None: all steps)
    min_steps: int = MIN_STEPS  # ... but never before this many
    fresh_cache: bool = False  # compile cold in a new cache (else the shared one, runner/cache.py)
    # breakdown --size: size symbols of dynamic-shape graphs profiled at these values
    sizes: dict[str, int] = field(default_factory=dict)
    progress: Progress = QUIET
    # the model file a compare of several is running, named in its profiling lines ("" with one)
    model_label: str = ""
    echo: bool = False  # workers print to the terminal instead of their logs
    on_saved: OnSaved | None = None  # called with each result once it is saved
