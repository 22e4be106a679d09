"""One graph profiled in several worker processes: how its windows are shared among them,
and their answers made into one.

A whole process can run slower than the next, every window of it alike: on a shared 2-core VM
about one fresh process in five to ten ran 10-25% slower for its whole life, with nothing in
its own windows to tell (``docs/statistics.md``). The windows of a graph are therefore shared
among fresh processes, one after the other (never at once: they would disturb each other), and
the fastest window of all of them is reported, as the fastest window of one process always was.
Each process keeps and exports its own fastest window; the fastest of all is one of those.

Pure; no torch.
"""

from __future__ import annotations

from typing import Any

# The fields that hold one entry per window, in window order.
PER_WINDOW = ("windows_ms", "window_samples_ms", "window_faults", "window_load", "window_probe_s")


def share_windows(windows: int, processes: int) -> list[int]:
    """Windows per process, the first ones taking the remainder: 5 in 2 -> [3, 2]. Never more
    processes than windows (a process has one window at least); one process at least."""
    windows = max(1, windows)
    processes = max(1, min(processes, windows))
    base, extra = divmod(windows, processes)
    return [base + (1 if i < extra else 0) for i in range(processes)]


def merge_responses(responses: list[dict[str, Any]]) -> tuple[dict[str, Any], int]:
    """The answers of the processes that profiled one graph, as one answer, and the index of
    the process whose window it keeps (the fastest window of all; the first on a tie). The
    per-window fields are joined in process order and ``window_process`` says which process
    each window ran in; every other field (iterations, replay, the pipelined run) is the
    keeping process's own, since its trace files are the ones kept."""
    if not responses:
        raise ValueError("no responses to merge")
    merged: dict[str, Any] = {name: [] for name in PER_WINDOW}
    merged["window_process"] = []
    kept = (float("inf"), 0, 0)  # (window time, process, window index in the merged lists)
    for p, r in enumerate(responses):
        times = list(r.get("windows_ms") or [])
        offset = len(merged["windows_ms"])
        for name in PER_WINDOW:
            values = list(r.get(name) or [])
            merged[name].extend(values + [None] * (len(times) - len(values)))
        merged["window_process"].extend([p] * len(times))
        own = r.get("window")
        if own is not None and own < len(times) and times[own] < kept[0]:
            kept = (times[own], p, offset + own)
    _, process, window = kept
    out = {k: v for k, v in responses[process].items() if k not in PER_WINDOW}
    out.update(merged, window=window, processes=len(responses))
    refs = [r["speed_reference_s"] for r in responses if r.get("speed_reference_s")]
    if refs:  # the fastest reading of all the processes: every window's speed against it
        out["speed_reference_s"] = min(refs)
    out["speed_waited_s"] = sum(float(r.get("speed_waited_s") or 0.0) for r in responses)
    return out, process


def lost_windows(graphs: list[Any], processes: int) -> str | None:
    """The line a run stopped while its later processes were measuring its graphs again keeps
    in its errors: each graph measured whose windows ran in fewer of the ``processes`` planned
    (``0-forward (windows of 1 of 2 processes)``), its figures those of the windows it has;
    None where every graph measured had all of them (or one process was planned)."""
    short = [(g.id, n) for g in graphs if g.ok and (n := len(set(g.window_process) or {0})) < processes]
    if not short:
        return None
    each = ", ".join(f"{gid} (windows of {n} of {processes} processes)" for gid, n in short)
    return f"{LOST_WINDOWS}{each}: the later processes' windows lost to the stop, its figures of those it has"


# the start of ``lost_windows``' line
LOST_WINDOWS = "stopped before every process measured: "
