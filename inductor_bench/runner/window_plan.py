"""How a graph's profile is planned: how many iterations, how many profiler windows, the
untimed calls before each, when the windows agree enough to stop, which one is kept, and when
a first window shows the plan rested on stalled calls. Pure scheduling (``runner/profile.py``
runs it); no torch."""

from __future__ import annotations

import math

# Auto iteration count: aim for this much profiled time per module, within these bounds.
# 20 iterations give the policy (core/steady.py) a median and a spread to find disturbed
# iterations by; past 100 the trace grows with little gain.
TARGET_PROFILED_S = 0.25
MIN_ITERATIONS = 20
MAX_ITERATIONS = 100
# Profiler windows per graph; fewer when they would take longer than MAX_WINDOWS_S in all.
DEFAULT_WINDOWS = 5
MAX_WINDOWS_S = 30.0
# ... and fewer when the first AGREE_WINDOWS agree: their times within AGREE_REL of each
# other. A slow session (about one in three on CPU, see docs/breakdown.md) stands out by far
# more than that, and then every window asked for runs.
AGREE_WINDOWS = 3
AGREE_REL = 0.03
# Untimed calls before each window, after the waits between windows (the speed watch's polls,
# the load reading's idle): measured here after an 80 ms idle, the first call of a window ran
# 25-70% slower and the second up to 15%, from the third on as a loop that never paused; a
# 20-iteration window read 8% slow. A model's own loop does not pause between iterations.
# Fewer for a slow graph: as many as take REWARM_S (one at least; the slowdown was over within
# 4 ms of the wake).
REWARM_CALLS = 5
REWARM_S = 0.02


def auto_iterations(per_call_s: float) -> int:
    if per_call_s <= 0:
        return MAX_ITERATIONS
    return max(MIN_ITERATIONS, min(MAX_ITERATIONS, math.ceil(TARGET_PROFILED_S / per_call_s)))


def plan_windows(requested: int, iterations: int, per_call_s: float, budget_s: float = MAX_WINDOWS_S) -> int:
    """Windows to profile: as requested, but no more than fit in ``budget_s`` (one at least)."""
    requested = max(1, requested)
    per_window = iterations * max(per_call_s, 0.0)
    if per_window <= 0:
        return requested
    return max(1, min(requested, int(budget_s // per_window)))


def windows_agree(times: list[float]) -> bool:
    """At least AGREE_WINDOWS windows, all within AGREE_REL of the fastest: more would
    change nothing."""
    if len(times) < AGREE_WINDOWS or min(times) <= 0:
        return False
    return max(times) / min(times) - 1.0 <= AGREE_REL


def fastest_window(times: list[float]) -> int:
    """Index of the window with the lowest time (the first on a tie)."""
    if not times:
        raise ValueError("no windows")
    return min(range(len(times)), key=lambda i: (times[i], i))


def rewarm_calls(per_call_s: float) -> int:
    """Untimed calls before a window: REWARM_CALLS, or as many as take REWARM_S (one at least)."""
    if per_call_s <= 0:
        return REWARM_CALLS
    return max(1, min(REWARM_CALLS, math.ceil(REWARM_S / per_call_s)))


def replanned(n: int, times_s: list[float], fixed: bool) -> int | None:
    """A new iteration count after a first window whose fastest iteration shows that the count
    was planned on stalled calls (the fastest of three warm-up calls at 103.9 ms for a 0.43 ms
    graph, on a loaded machine: 20 iterations, not 100): ``auto_iterations`` of that iteration,
    where it is at least twice ``n``; None otherwise, and for a count the user fixed."""
    if fixed or not times_s:
        return None
    better = auto_iterations(min(times_s))
    return better if better >= 2 * n else None
