"""How a comparison times its steps: the budget of calls, the warm-up its compile workers run
first, and the request of the one timing worker that times every column interleaved."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.compare import ModeResult
from ..core.errors import WorkerTimeout
from ..core.rundir import LOGS_DIR
from .capture import inductor_env
from .settings import RunSettings
from .worker import run_worker

# Steady-state timing per mode when --repeat is not given: for STEP_BUDGET_S seconds, within
# MIN_STEPS..MAX_STEPS calls. A fixed 30 calls (45 ms of a 1.5 ms step) once left a median
# too loose to call a 1.5x slowdown; a second of samples pins the median of a 1 ms step with a
# 15% spread to about 2% (core/stats.py), and costs little next to compiling.
STEP_BUDGET_S = 1.0
MIN_STEPS = 10
MAX_STEPS = 200
DEFAULT_REPEAT = None  # --repeat N: exactly N calls instead of the budget
# Calls after the first (compile) call that are run but not kept: CUDA graph trees warm up
# on the second call and record on the third, and allocator and caches settle meanwhile.
WARMUP_STEPS = 3


TIMER_WORKER = "inductor_bench.runner.timer"


@dataclass
class CompareRun:
    """Settings of one comparison, shared by every mode."""

    repeat: int | None = DEFAULT_REPEAT  # exactly this many timed calls (None: the budget)
    settings: RunSettings = field(default_factory=RunSettings)
    step_budget_s: float = STEP_BUDGET_S
    max_steps: int = MAX_STEPS

    def timing(self) -> RunSettings:
        """The settings of a mode's compile worker: warm-up calls, then as many timed as a
        breakdown times (they set the time outside its graphs). The comparison's step times
        come from the interleaved timing (``timer_request``); these stand in for a column
        when it cannot run, with their unpaired verdicts."""
        if self.repeat is not None:
            return dataclasses.replace(
                self.settings, steps=self.repeat + WARMUP_STEPS, step_budget_s=None, min_steps=1
            )
        return dataclasses.replace(
            self.settings,
            steps=self.settings.steps + WARMUP_STEPS,
            min_steps=self.settings.min_steps + WARMUP_STEPS,
        )

    def time_sides(
        self, sides: list[dict[str, Any]], device: str, run_dir: Path, label: str
    ) -> dict[str, Any]:
        """Every side timed interleaved in one timing worker (``runner/timer.py``), under a
        progress phase named ``label``; its log in ``run_dir``. Raises ``BenchError``."""
        first = sides[0].get("cache_dir")
        with self.settings.progress.phase(label) as ph:
            try:
                data = run_worker(
                    TIMER_WORKER, self.timer_request(sides, device), timeout=self.settings.timeout,
                    env=inductor_env(Path(first)) if first else None, echo=self.settings.echo,
                    log_path=run_dir / LOGS_DIR / "timer.log",
                )
            except WorkerTimeout:
                ph["failed"] = f"ran past --timeout {self.settings.timeout:g}s"
                raise
            ph["done"] = f"{max(len(b) for b in data['blocks'])} rounds"
        return data

    def timer_request(self, sides: list[dict[str, Any]], device: str) -> dict[str, Any]:
        """The request of the timing worker (``runner/timer.py``): every side, the budget
        per side (or exactly ``repeat`` calls each)."""
        exact = self.repeat is not None
        return {
            "sides": sides,
            "device": device,
            "budget_s": None if exact else self.step_budget_s,
            "max_steps": self.repeat if exact else self.max_steps,
            "min_steps": 1 if exact else MIN_STEPS,
            "exact": exact,
        }


def graph_modules(m: ModeResult, side_dir: Path) -> dict[str, str]:
    """Compiled module -> graph id, for a column's measured graphs (the modules' copies in its
    run directory), which the timing worker times in turns with the column's step."""
    graphs = m.breakdown.measured() if m.breakdown is not None else []
    return {str((side_dir / g.module).resolve()): g.id for g in graphs if g.module}
