"""The facts at the head of an analyze report: its steps and devices, the events left out and
why, its CUDA-graph replays, and the traces skipped."""

from __future__ import annotations

from pathlib import Path

from ..core.analyze import WHOLE_TRACE
from ..core.analyze_result import AnalyzeResult, empty_steps, steady_indices
from ..core.columns import ITERATION_MARKER
from ..core.steady import mean
from ..core.steps import ITERATION_STEP
from ..core.typical_step import steady_step
from . import format as fmt
from .analyze_top import NAME_CHARS, listed, step_code
from .doc import Doc
from .host_words import on_host

SKIPPED_WHY = (
    "nothing profiled in it (no device activity, no CPU op): a profiler cycle that stopped "
    "before its active steps, as tensorboard_trace_handler writes one when the profiler exits"
)
NOT_A_TRACE = "not a profiler trace (no traceEvents)"
TIMES_LOST = ("its device events all carry no times (ts 0, dur 0): the profiler lost them, as when a "
              "session is exported after another has started")


def skipped_facts(doc: Doc, skipped: list[str], not_traces: list[str], times_lost: list[str] | None = None,
                  times_lost_why: dict[str, str] | None = None, *,
                  cut_short: dict[str, str] | None = None) -> list[str]:
    """The traces with nothing profiled, a directory's JSON files that are no trace, the
    traces cut short as they were written, and the cycles whose device events lost their
    times (why, where it is not the profiler's loss: no dur written): each named, as code,
    with why it was left out."""
    why = times_lost_why or {}

    def name(s: str) -> str:
        return doc.code(Path(s).name)

    return ([f"{name(s)}: skipped, {SKIPPED_WHY}" for s in skipped]
            + [f"{name(s)}: skipped, {NOT_A_TRACE}" for s in not_traces]
            + [f"{name(s)}: left out, {cut}" for s, cut in (cut_short or {}).items()]
            + [f"{name(s)}: skipped, {why.get(s, TIMES_LOST)}" for s in times_lost or []])


def device_label(result: AnalyzeResult, device: str) -> str:
    name = result.device_names.get(device)
    return f"{device} ({name})" if name else device


def which_step(doc: Doc, r: AnalyzeResult) -> str:
    """The step the typical figures are of: the steady mean, or the only step."""
    return "steady mean step" if len(r.steps) > 1 else step_code(doc, r.steps[0].name)


def _steps_fact(r: AnalyzeResult) -> str:
    if r.steps[0].name == WHOLE_TRACE:
        return ("no ProfilerStep# markers: the whole trace is one window (torch.profiler writes them at "
                "prof.step() only under a schedule: profile(schedule=torch.profiler.schedule(...)))")
    if r.steps[0].name.startswith(f"{ITERATION_STEP} "):
        return (f"{len(r.steps)} iterations inductor-bench profiled (its {ITERATION_MARKER} ranges; "
                "no ProfilerStep# markers): a run directory's graph trace, each iteration a step; the "
                "steady mean here leaves out slow walls alone, where the breakdown's (report) also leaves "
                "out an iteration with a slow kernel, idle gap or clock reading (docs/statistics.md)")
    return f"{len(r.steps)} profiler step{'' if len(r.steps) == 1 else 's'} (ProfilerStep#)"


# how a trace wrote the ranges restored (core/range_starts.py)
CLOSED = "with the start of the Python call that closed them"
NOTHING_IN_STEPS = "none: no op, runtime call or device event is inside a step"


def unfinished_fact(unfinished: dict[str, int]) -> str:
    """The fact line of the events left out for a negative duration."""
    n = sum(unfinished.values())
    named = listed([f"{name} x{k}" if k > 1 else name for name, k in unfinished.items()])
    return (f"{n} event(s) with a negative duration were left out (unfinished when the profiler "
            f"stopped: their end is not known): {named}")


def untimed_fact(doc: Doc, untimed: dict[str, int]) -> str:
    """The fact line of the device events and launches left out for carrying no time."""
    named = listed([doc.kernel_label(name, NAME_CHARS) + (f" x{k}" if k > 1 else "")
                    for name, k in untimed.items()])
    return (f"{sum(untimed.values())} device event(s) and launch(es) at ts 0 with dur 0 were left out (the "
            f"profiler lost their times; at ts 0 they would stretch the window back to 1970): {named}")


def no_dur_fact(doc: Doc, no_dur: dict[str, int]) -> str:
    """The fact line of the device events left out for writing no dur."""
    named = listed([doc.kernel_label(name, NAME_CHARS) + (f" x{k}" if k > 1 else "")
                    for name, k in no_dur.items()])
    n = sum(no_dur.values())
    return (f"{n:,} device event{'' if n == 1 else 's'} (kernel, memcpy, memset) with no dur "
            f"{'is' if n == 1 else 'are'} left out of every time figure (the time is not known): {named}")


NO_LAUNCHES = (
    "no launch records (cuda_runtime / cuda_driver events): each device event counts for the step it "
    "starts in, and the split of the device's idle time between waiting on CPU and queued is unknown "
    "(every gap is counted as waiting on CPU)")


def _replays(doc: Doc, r: AnalyzeResult) -> list[str]:
    """A fact line per device that replayed CUDA graphs in the steady steps: the typical step's
    graph launches, the device events they replayed and those events' time."""
    kept, out, which = steady_indices(r), [], which_step(doc, r)
    for g in r.graph_replays:
        launches, events, ms = (mean([v[i] for i in kept]) for v in (g.launches, g.events, g.ms))
        typical = steady_step(r, g.device)
        if not launches or typical is None:
            continue
        out.append(replays_line(g.device, which, (launches, events, ms), typical.kernel_ms)
                   + " (the op around a graph launch is its replayed kernels' launching op)")
    return out


def replays_line(device: str, which: str, typical: tuple[float, float, float],
                 kernel_ms: float | None) -> str:
    """One device's CUDA-graph replays in its typical step ``which``: ``typical`` its graph
    launches, the device events they replayed and those events' ms (``core/graph_replays.py``),
    with their share of the device's ``kernel_ms`` where it is known."""
    launches, events, ms = typical
    share = f", {fmt.pct(fmt.share(ms, kernel_ms))} of its kernel time" if kernel_ms is not None else ""
    return (f"CUDA-graph replays on device {device} ({which}): {fmt.count(round(launches, 2))} graph "
            f"launches replaying {fmt.count(round(events, 2))} device events, {fmt.ms(ms)} ms{share}")


def no_device_events(launches: int) -> str:
    """The fact line of a trace whose CPU called the CUDA runtime but whose device side is absent."""
    return (f"{launches:,} CUDA runtime / driver calls (launches among them) but no kernel, memcpy or memset "
            "event: the device's side was not recorded (CUPTI's range-profiler mode writes its kernels as "
            "cuda_profiler_range events, counters without times, and replays each one inside its launch "
            "call), so the rows are the CPU threads and their times the host's, launch calls included")


def _restarted(names: list[str]) -> str:
    """The fact line of the ranges whose start was restored (``core/range_starts.py``)."""
    return (f"{len(names)} ranges were written {CLOSED} (torch 2.5's Python tracer): {listed(names)}; "
            "each starts here where the call that opened it began")


def trace_facts(doc: Doc, r: AnalyzeResult, notes: list[str] | None = None) -> list[str]:
    """The lines at the head of one trace's report: its steps and devices, the events left out
    and why, its CUDA-graph replays, and ``notes``."""
    steps = _steps_fact(r)
    which = "CPU threads (no device activity): " if on_host(r) else "devices: "
    seen = ", ".join(device_label(r, d) for d in r.devices) or NOTHING_IN_STEPS
    facts = [steps, which + seen]
    if r.outside_steps:
        one = r.outside_steps == 1
        facts.append(f"{r.outside_steps:,} device event{'' if one else 's'} launched outside every step (or "
                     f"before the profiler started) {'is' if one else 'are'} no step's own work: in a step "
                     f"{'it' if one else 'they'} ran in, {'it is' if one else 'they are'} other steps' work")
    if r.restarted_ranges:
        facts.append(_restarted(r.restarted_ranges))
    if r.unfinished:
        facts.append(unfinished_fact(r.unfinished))
    if r.untimed:
        facts.append(untimed_fact(doc, r.untimed))
    if r.no_dur:
        facts.append(no_dur_fact(doc, r.no_dur))
    if not r.launches and r.devices and not on_host(r):
        facts.append(NO_LAUNCHES)
    if r.launches and on_host(r):
        facts.append(no_device_events(r.launches))
    facts += _replays(doc, r)
    if held_nothing := empty_steps(r):
        named = listed([step_code(doc, s) for s in held_nothing])
        facts.append(f"{named} held nothing of its own (no device event, or on a CPU-only trace no op; as "
                     "the step a profiler stops in): left out of the steady mean")
    facts += (notes or []) + skipped_facts(doc, [], r.not_traces, cut_short=r.cut_short)
    return facts
