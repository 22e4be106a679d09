"""Speedups lost to disturbed rounds while the timing ran more threads than the free cores
(pure; no torch).

Beside other work, a compare whose timing runs more intra-op threads than the cores others
left free stalls its calls in every parallel region that meets a busy stretch: ``models/mlp.py``
on 2 threads beside a busy loop on a 2-core machine stalled its ~1 ms calls to 100-220 ms, 8-9
of its 10 rounds were disturbed, and every speedup read n/m; the same compare on one thread
gave intervals. Where that happened, the report says so in one line and names the setting to
try, the thread count the rule of ``free_cores.threads_over_free`` accepts (breakdown's hint
follows the same rule).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .compare_summary import summary
from .devices import HOST, backend
from .free_cores import OverFreeCores, threads_over_free


@dataclass(frozen=True)
class ThreadsLost:
    """``lost`` of the ``pairs`` of columns judged against each other read no speedup or no
    interval from disturbed rounds while the timing ran more threads than the free cores
    (``over``). A pair counts once, though the report's table reads it both ways (default in the
    row vs eager, eager in the row vs default)."""

    lost: int
    pairs: int
    over: OverFreeCores

    def line(self) -> str:
        n, o = self.over.fitting_threads(), self.over
        pairs = "pair" if self.pairs == 1 else "pairs"
        return (f"speedups lost to disturbed rounds (n/m, or no interval) in {self.lost} of {self.pairs} "
                f"{pairs} of columns while the timing ran {o.threads} intra-op threads and {o.held()}: "
                f"each parallel region waits for a thread whose core is taken; try OMP_NUM_THREADS={n} "
                f"(or torch.set_num_threads({n}) in the model file) to fit the free cores "
                "(docs/statistics.md)")

    def to_dict(self) -> dict[str, Any]:
        o = self.over
        return {"lost": self.lost, "pairs": self.pairs, "threads": o.threads,
                "free_cores": round(o.free, 2), "cgroup_limit": o.limited,
                "suggested_threads": o.fitting_threads(), "hint": self.line()}


def timing_threads(result: Any) -> int | None:
    """The most intra-op threads a column ran in the interleaved timing; None where the
    timing did not record them (a result saved before it did)."""
    counts = [n for n in ((result.interleaved or {}).get("threads") or {}).values() if isinstance(n, int)]
    return max(counts, default=None)


def threads_lost(result: Any, speedups: list[dict[str, Any]] | None = None) -> ThreadsLost | None:
    """Where speedups (``summary``'s rows, computed here unless given) read no figure
    (``no_speedup``) or no interval (``no_interval``) from disturbed rounds and the host's
    interleaved timing ran more threads than the cores others left (``threads_over_free``):
    in how many pairs of columns, and the threads to try. None elsewhere."""
    load = result.interleaved_load()
    if backend(result.device).timeline != HOST or load is None:
        return None
    over = threads_over_free(timing_threads(result), [load])
    if over is None:
        return None
    rows = summary(result)["speedups"] if speedups is None else speedups
    pairs = {_pair(s) for s in rows}
    lost = {_pair(s) for s in rows if s.get("no_speedup") or s.get("no_interval")}
    return ThreadsLost(len(lost), len(pairs), over) if lost else None


def _pair(speedup: dict[str, Any]) -> frozenset[str]:
    """The two columns a speedup row judges, either way round: default over eager and eager
    over default are one pair (their rounds, and so their disturbed ones, are the same)."""
    return frozenset((speedup["column"], speedup["over"]))
