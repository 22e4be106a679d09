"""Any kineto trace -> an Inductor-aware breakdown per profiler step; pure, no torch.

``torch.profiler`` traces of a user's own training loop (pipelined steps, CUDA graphs, data
loading, optimizer steps) are read as they are:

- **Steps** are the ``ProfilerStep#N`` ranges on the CPU; without them the iterations a
  breakdown's profile marked (``inductor_bench::iteration``); without either the whole trace
  (the span of its CPU ops, ``record_function`` ranges, runtime calls and device events) is
  one window. A device event belongs to the step during which the CPU *launched* it (its ``cuda_runtime`` /
  ``cuda_driver`` call with the same correlation; its own start when no launch is
  recorded), so work that runs late still counts for the step that issued it.
- A step's **window** runs from the step's start to whichever ends later, the step on the
  CPU or the last device event it launched; its **wall** is that length.
- **Busy**, per device: the union of its events' intervals in the window (never above the
  wall). **Kernel time** sums durations (concurrent streams can exceed busy).
- **Idle** = wall − busy. Where the device ran work other steps launched (a pipelined loop's
  previous step still running) it is **other steps' work**; elsewhere it is split by what
  the device was waiting for at each gap: the next event's launch had not been issued yet
  (**waiting on the CPU**), it had been issued but had not started (**queued**: launch
  latency, a stream or event dependency, a CUDA-graph replay's earlier nodes), or the step
  launched nothing more (**nothing launched**).
- **Categories** come from ``classify``: a library kernel by the op that launched it, then
  by its name; Triton kernels by Inductor's name prefixes.
- **CPU-only traces** (no device events): each CPU thread is a row ("CPU thread 1234"), its
  events the top-level ``cpu_op`` events that start in the step (as ``breakdown`` measures
  the host); busy = their union; idle is the gaps between them (waiting on CPU: Python,
  the framework, data loading) and after the last one (nothing launched); queued is 0.
"""


from __future__ import annotations

from pathlib import Path
from typing import Any

from . import host_python
from .analyze_result import AnalyzeResult, DeviceStep, StepResult, TraceKernel
from .columns import STEP_NAME, TraceColumns, columns_of_events, load_columns
from .errors import TimesLost
from .graph_replays import graph_replays
from .memory import step_memory
from .merged_trace import require_one_process
from .recording import latest_end
from .regions import regions
from .shaped_ops import shaped_ops, unrecorded_calls
from .steps import (
    HOST_THREAD,
    US_PER_MS,
    WHOLE_TRACE,
    StepEvents,
    recorded_step_end,
    split_steps,
    step_devices,
)
from .trace import Trace

__all__ = ["STEP_NAME", "WHOLE_TRACE", "HOST_THREAD", "analyze_file", "analyze_trace", "split_steps"]


def analyze_trace(trace: Trace) -> AnalyzeResult:
    """The breakdown of a loaded ``trace`` (as ``load_for_analysis`` reads it): a ``Trace``
    holds complete events only, so profile_memory's figures come from ``analyze_file`` alone.
    Its steps stop at the recording's end as ``analyze_file``'s do (``Trace.recorded_end``)."""
    cols = columns_of_events(trace.events, trace.path)
    cols.device_properties = trace.device_properties
    cols.recorded_end = latest_end(cols.recorded_end, trace.recorded_end)
    return analyze_columns(cols)


def analyze_file(path: str | Path) -> AnalyzeResult:
    """The breakdown of the trace at ``path``, read into columns (``columns.py``): the
    memory it takes follows the events the analysis reads, about 40 bytes each."""
    return analyze_columns(load_columns(path))


def analyze_columns(c: TraceColumns) -> AnalyzeResult:
    """Per device, or per CPU thread for a trace with no device activity. TraceError when
    it holds neither, or the events of several processes (a merged trace)."""
    require_times(c)
    require_one_process(c)
    split = split_steps(c)
    thread, python = host_python.trace_python(c, split.windows)
    return AnalyzeResult(
        trace=c.path,
        steps=[step_result(split, k) for k in range(len(split.windows))],
        kernels=_kernels(split),
        device_names=_device_names(c.device_properties),
        outside_steps=split.outside,
        regions=regions(c, split),
        memory=step_memory(c.memory, split.windows),
        shaped_ops=shaped_ops(c, split),
        shapes_not_recorded=unrecorded_calls(c),
        host_python=python,
        host_python_thread=thread,
        restarted_ranges=c.restarted_ranges,
        unfinished=dict(c.unfinished),
        untimed=dict(c.untimed),
        no_dur=dict(c.no_dur),
        launches=len(c.launch),
        graph_replays=graph_replays(c, split),
    )


def require_times(c: TraceColumns) -> None:
    """TimesLost for a trace whose device events all carry no time: at ts 0 with dur 0, or
    with no dur written (core/left_out.py)."""
    no_dur = sum(c.no_dur.values())
    if len(c.device) or not (c.untimed_device or no_dur):
        return
    events = "device events (kernel, memcpy, memset)"
    one = "device event (kernel, memcpy, memset)"  # the trace's only one
    if c.untimed_device == 1 and not no_dur:
        raise TimesLost(f"{c.path}: its one {one} carries no time (ts 0, dur 0): the profiler lost it "
                        "(a session exported after another had started)")
    if not no_dur:
        raise TimesLost(
            f"{c.path}: its {c.untimed_device} {events} all carry no times (ts 0, dur 0): the "
            "profiler lost them (a session exported after another had started)")
    if no_dur == 1 and not c.untimed_device:
        raise TimesLost(f"{c.path}: its one {one} writes no dur: its time is not known",
                        f"its one {one} writes no dur: its time is not known")
    why = (f"its {no_dur} {events} all write no dur: their times are not known" if not c.untimed_device
           else f"its {no_dur + c.untimed_device} {events} all carry no times: {c.untimed_device} at ts 0 "
           f"with dur 0 (the profiler lost them), {no_dur} with no dur written")
    raise TimesLost(f"{c.path}: {why}", why)


def step_result(split: StepEvents, k: int) -> StepResult:
    name, start, _ = split.windows[k]
    end, past = recorded_step_end(split, k)
    devices = [
        DeviceStep(
            device=f.device,
            busy_ms=f.busy / US_PER_MS,
            kernel_ms=f.kernel_ms,
            waiting_on_cpu_ms=f.waiting_on_cpu / US_PER_MS,
            queued_ms=f.queued / US_PER_MS,
            nothing_launched_ms=f.nothing_launched / US_PER_MS,
            other_work_ms=f.other_work / US_PER_MS,
            events=f.events,
            categories=f.categories,
        )
        for f in step_devices(split, k, end)
    ]
    return StepResult(name, (end - start) / US_PER_MS, devices, past / US_PER_MS)


def is_host(device: str) -> bool:
    return device.startswith(HOST_THREAD)


def _kernels(split: StepEvents) -> list[TraceKernel]:
    """Per (device, kernel name, category): calls and time in every step, and every op that
    launched it, the most time first (a kernel some launches of which classify apart, a GEMM
    both ``aten::mm``'s and a convolution's backward's, is one row per category: the rows add
    up to the category table)."""
    names, name, row, rows = split.names, split.events.name, split.row, split.rows
    kind, kinds = split.kind, split.kinds
    found: dict[tuple[int, int, str], TraceKernel] = {}
    launchers: dict[tuple[int, int, str], dict[str, float]] = {}
    n_steps = len(split.per_step)
    for k in range(n_steps):
        for j, us in split.timed(k):
            category, launched_by = kinds[kind[j]]
            key = (row[j], name[j], category)
            kern = found.get(key)
            if kern is None:
                kern = found[key] = TraceKernel(
                    device=rows[key[0]], name=names[key[1]], category=category, calls=0,
                    total_ms=0.0, per_step_ms=[0.0] * n_steps, per_step_calls=[0] * n_steps,
                )
                launchers[key] = {}
            ms = us / US_PER_MS
            kern.calls += 1
            kern.total_ms += ms
            kern.per_step_ms[k] += ms
            kern.per_step_calls[k] += 1
            if launched_by is not None:
                by = launchers[key]
                by[launched_by] = by.get(launched_by, 0.0) + ms
    for key, kern in found.items():
        by = launchers[key]
        kern.launchers = sorted(by, key=lambda op: (-by[op], op))
        kern.launched_by = split.contexts.get(key[1], ", ".join(kern.launchers) or None)
    return sorted(found.values(), key=lambda x: (-x.total_ms, x.device, x.name, x.category))


def _device_names(properties: list[dict[str, Any]]) -> dict[str, str]:
    out = {}
    for p in properties:
        if "id" in p and p.get("name"):
            out[str(p["id"])] = str(p["name"])
    return out
