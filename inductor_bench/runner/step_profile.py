"""The compile worker's steps: how long the steady state is timed (``StepTiming``), then a few
more steps profiled on the host: the trace that ``core/outside.py`` splits into the ops that
ran outside the compiled graphs.

Only the host's ops are recorded (no device activity: the question is which eager code
between the graphs takes the step's time); each step is a ``ProfilerStep#N`` range. The
profiler adds its own cost to every op, so these steps run slower than the timed ones; the
report shows the split as such, beside the step timed without it. A few more steps are
then profiled with Python's calls recorded (``with_stack``), for whose Python the time
between ops is (``core/host_python.py``): the tracer's cost per call would weigh on the ops'
split, so it has steps of its own, each the ``python_function`` event of ``_profiled_step``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.rundir import STEP_PYTHON_TRACE_FILE as PYTHON_TRACE_FILE
from .trace_export import export_trace


@dataclass(frozen=True)
class StepTiming:
    """How long the steady state is timed: ``steps`` calls at most, stopping once
    ``budget_s`` has passed (None: all ``steps``) but never before ``min_steps``."""

    steps: int
    budget_s: float | None = None
    min_steps: int = 1
    trace: str = ""  # where a few more steps, profiled, are written (runner/step_profile.py)

    @classmethod
    def from_request(cls, request: dict[str, Any]) -> StepTiming:
        budget = request.get("step_budget_s")
        return cls(
            steps=int(request.get("steps", 5)),
            budget_s=float(budget) if budget is not None else None,
            min_steps=int(request.get("min_steps", 1)),
            trace=str(request.get("step_trace") or ""),
        )

    def run(self, one: Callable[[], float]) -> list[float]:
        samples: list[float] = []
        start = time.perf_counter()
        while len(samples) < self.steps:
            if (
                self.budget_s is not None
                and len(samples) >= self.min_steps
                and time.perf_counter() - start >= self.budget_s
            ):
                break
            samples.append(one())
        return samples


STEPS = 3  # profiled steps, at most
BUDGET_S = 5.0  # no more steps than fit in this time at the timed steps' pace (one at least)


PYTHON_BUDGET_S = 1.0  # the same for the steps with Python's calls (an event per call: a long
# step of eager Python makes a trace of millions)


def profiled_steps(per_step_ms: float, budget_s: float = BUDGET_S) -> int:
    """How many steps are profiled: up to ``STEPS``, those that fit in ``budget_s`` at the
    unprofiled ``per_step_ms``, one at least."""
    return max(1, min(STEPS, int(budget_s * 1e3 / max(per_step_ms, 1e-3))))


def profile_steps(one: Callable[[], float], trace: Path, steps: int, python_steps: int) -> dict[str, Any]:
    """Profile ``steps`` calls of ``one`` (a timed step) into ``trace`` (``.json.gz``), then
    ``python_steps`` more with Python's calls recorded into ``python_trace_of(trace)``. Returns
    what the result keeps of it: the traces' paths and the steps, or the errors that stopped
    them."""
    t0 = time.perf_counter()
    try:
        _profile(one, trace, steps, with_stack=False)
    except Exception as e:  # evidence only: the breakdown goes on without it
        return {"error": f"{type(e).__name__}: {e}"}
    out: dict[str, Any] = {"trace": str(trace), "steps": steps}
    python_trace = python_trace_of(trace)
    try:
        _profile(one, python_trace, python_steps, with_stack=True)
        out["python_trace"] = str(python_trace)
    except Exception as e:  # the split of the Python time only
        out["python_error"] = f"{type(e).__name__}: {e}"
    return {**out, "s": time.perf_counter() - t0}


def python_trace_of(trace: Path) -> Path:
    """Where the steps profiled with Python's calls go, beside ``trace``."""
    return trace.with_name(PYTHON_TRACE_FILE)


def _profile(one: Callable[[], float], trace: Path, steps: int, *, with_stack: bool) -> None:
    from torch.profiler import ProfilerActivity, profile, record_function

    trace.parent.mkdir(parents=True, exist_ok=True)
    with profile(activities=[ProfilerActivity.CPU], with_stack=with_stack) as prof:
        for i in range(steps):
            with record_function(f"ProfilerStep#{i}"):
                _profiled_step(one)
    export_trace(prof, trace)


def _profiled_step(one: Callable[[], float]) -> None:
    """One profiled step: its ``python_function`` event is the step's window (the name
    ``core/host_python.py`` looks for: under the Python tracer torch 2.5 writes the
    ``ProfilerStep#N`` range at the step's end, not around it)."""
    one()
