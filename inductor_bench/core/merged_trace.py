"""A trace holding several processes' events (ranks' traces joined into one file by a tool,
or a DDP run's processes merged for a viewer): refused, naming the processes.

torch.profiler writes one trace per process. Read as one, a merged file's processes would be
one process: their ``ProfilerStep#N`` steps side by side (each step read twice, the other
process's copy empty), their correlation ids (each process counts its own from 1) matching
one process's launches to the other's kernels. A process here is a ``pid`` whose threads ran
CPU ops or runtime calls (launches): the other pids a single trace writes (a device's, the
Python tracer's thread 0 of torch 2.5, a range recorded under another pid) run neither."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .columns import TraceColumns
from .errors import TraceError


def require_one_process(c: TraceColumns) -> None:
    """TraceError where more than one process ran CPU ops or launches in ``c``."""
    pid_of = {index: pid for (pid, _), index in c.threads.items()}
    ops = Counter(pid_of[w] for w in c.op.where)
    launches = Counter(pid_of[w] for w in c.launch.where)
    pids = sorted(set(ops) | set(launches), key=str)
    if len(pids) < 2:
        return
    steps = Counter(pid_of[thread] for *_, thread in c.markers)
    each = [_process(pid, ops[pid], launches[pid], steps[pid]) for pid in pids]
    raise TraceError(
        f"{c.path}: holds the events of {len(pids)} processes ({_first_four(each)}): a merged trace "
        "(several ranks' traces joined into one file), whose steps and correlation ids would be "
        "folded together; give each process's own trace (torch.profiler writes one per process): "
        "inductor-bench analyze rank0.json rank1.json ... reads them as ranks")


def _first_four(each: list[str]) -> str:
    more = len(each) - 4
    return "; ".join(each[:4]) + (f"; and {more} more" if more > 0 else "")


def _process(pid: Any, ops: int, launches: int, steps: int) -> str:
    said = [f"{ops:,} ops"] + ([f"{launches:,} launches"] if launches else []) + \
        ([f"{steps} step{'' if steps == 1 else 's'}"] if steps else [])
    return f"pid {pid}: {', '.join(said)}"
