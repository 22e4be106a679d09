"""An ``AnalyzeResult`` as a document: the facts at its head (``analyze_facts``), the trace's
steps (wall, busy and idle per device), time by category in the typical step (the steady mean),
the top kernels with the op that launched them, and where the trace holds them its memory
(``analyze_memory``) and GEMMs by shape (``analyze_shaped_ops``)."""

from __future__ import annotations

from pathlib import Path

from ..core.analyze import WHOLE_TRACE, is_host
from ..core.analyze_result import AnalyzeResult, DeviceStep, empty_steps, steady_indices, steady_steps
from ..core.categories import label
from ..core.typical_step import regions_left_out, steady_host_python, steady_regions, steady_step, steady_wall
from . import charts
from . import format as fmt
from .analyze_facts import device_label, on_host, trace_facts, which_step
from .analyze_memory import memory_section
from .analyze_shaped_ops import shaped_ops_section
from .analyze_top import NAME_CHARS, left_out_line, listed, step_code, top_section
from .doc import TEXT, Doc, new_doc
from .host_words import host_word
from .outside import python_table
from .past_recording import steps_past_recording

DEFAULT_TOP = 15
STEP_HEADERS = [
    "step",
    "device",
    "wall ms",
    "busy ms",
    "busy",
    "kernel ms",
    "other steps' work",
    "waiting on CPU",
    "queued",
    "nothing launched",
]
STEP_ALIGN = ("left", "left", *("right",) * 8)
# what a terminal too narrow for the step table leaves out, in this order (``table_fit``): busy
# ms reads from wall and busy %, kernel ms from busy where one stream runs, other steps' work is
# the notes' when the loop is pipelined
STEP_OPTIONAL = ("busy ms", "kernel ms", "other steps' work")


KERNEL_MS_HOST = "; ops ms sums them."
HOST_WALL = "wall = the step, extended to the end of the last op that started in it"
# a trace without steps: its window is every event it recorded (docs/analyze.md, Steps)
WHOLE_WALL = ("wall = the whole trace (no ProfilerStep# markers), from its first recorded event to its "
              "last: CPU ops, record_function ranges, runtime calls, device events")
HOST_NOTES = (
    "No device activity in this trace: each CPU thread is a row. " + HOST_WALL + "; busy = union of "
    "the thread's top-level ops (cpu_op "
    "events not inside another)" + KERNEL_MS_HOST + " An op that only wraps others (torch.compile's "
    "CompiledFunction, Torch-Compiled Region; autograd's evaluate_function) gives its time to the "
    "ops inside it and keeps what they leave: a compiled graph's C++ kernels, which are no op here, "
    "are in its CompiledFunction's own time (docs/analyze.md).",
    "idle = wall - busy: other steps' work (an op of another step still running), between ops "
    "(Python, the framework, data loading), after last op (the thread's last op had ended); no "
    "queued column: the host runs its ops as it issues them (the JSON's queued_ms is 0).",
)


def _step_row(step: str, device: str, wall: float, d: DeviceStep) -> list[str]:
    return [
        step,
        device,
        fmt.ms(wall),
        fmt.ms(d.busy_ms),
        fmt.pct(fmt.share(d.busy_ms, wall)),
        fmt.ms(d.kernel_ms),
        fmt.ms(d.other_work_ms),
        fmt.ms(d.waiting_on_cpu_ms),
        fmt.ms(d.queued_ms),
        fmt.ms(d.nothing_launched_ms),
    ]


def _steps(doc: Doc, r: AnalyzeResult, typical: dict[str, DeviceStep]) -> None:
    rows = [_step_row(step_code(doc, s.name), d.device, s.wall_ms, d) for s in r.steps for d in s.devices]
    if len(r.steps) > 1:
        wall = steady_wall(r)
        rows += [_step_row(_typical(r), dev, wall, m) for dev, m in typical.items()]
    if not rows:  # nothing inside a step: the header says so, and no table is empty
        return
    per = "CPU thread" if on_host(r) else "device"  # the host's rows are its threads
    doc.heading(f"Steps (per {per})" if r.steps[0].name != WHOLE_TRACE else f"The whole trace (per {per})")
    if on_host(r):  # the host runs its ops as it issues them: nothing is queued
        q, headers = STEP_HEADERS.index("queued"), [host_word(h, True) for h in STEP_HEADERS]
        optional = tuple(host_word(h, True) for h in STEP_OPTIONAL)  # the thread's words for them
        gone = doc.table([x[:q] + x[q + 1:] for x in rows], headers[:q] + headers[q + 1:],
                         STEP_ALIGN[:q] + STEP_ALIGN[q + 1:], optional=optional)
        ops_gone = host_word("kernel ms", True) in gone
        host = HOST_NOTES[0].replace(KERNEL_MS_HOST, ".") if ops_gone else HOST_NOTES[0]
        host = host.replace(HOST_WALL, WHOLE_WALL) if r.steps[0].name == WHOLE_TRACE else host
        doc.fine_print(host, *HOST_NOTES[1:], *_disturbed(doc, r), *steps_past_recording(doc, r))
        return
    gone = doc.table(rows, STEP_HEADERS, STEP_ALIGN, optional=STEP_OPTIONAL)
    whole = r.steps[0].name == WHOLE_TRACE
    doc.fine_print(  # the notes explain the columns shown
        (WHOLE_WALL if whole else "wall = the step on the CPU, extended to the end of the last device work "
         "it launched") + "; busy = union of the device's kernel, memcpy and memset intervals (never above "
        "wall)"
        + ("." if "kernel ms" in gone else "; kernel ms sums them (concurrent streams can exceed busy)."),
        "idle = wall - busy: other steps' work (the device ran work another step launched: a "
        "pipelined loop's earlier step still running), and where it ran nothing, waiting on CPU (the "
        "next launch was not issued yet), queued (issued, not started: launch latency, stream or event "
        "dependencies, CUDA-graph replays), nothing launched ("
        + ("no more device work was issued)." if whole else "the step issued no more device work)."),
        *_pipelined(doc, r, typical),
        *_disturbed(doc, r),
        *steps_past_recording(doc, r),
    )


def _disturbed(doc: Doc, r: AnalyzeResult) -> list[str]:
    """The line naming the steps left out of the steady mean as disturbed (those that held
    nothing are named in the header)."""
    kept, nothing = set(steady_indices(r)), set(empty_steps(r))  # by index: two steps may share a name
    left = [step_code(doc, s.name) for i, s in enumerate(r.steps) if i not in kept and s.name not in nothing]
    if not left:
        return []
    return [f"steady mean: the mean over {len(kept)} steps; left out as disturbed (slower than the median "
            f"step by over 3.5 robust sigmas and 5%, docs/statistics.md): {listed(left, 8)}"]


PIPELINED_SHARE = 1.0  # % of the wall in other steps' work above which the loop is said pipelined


def _pipelined(doc: Doc, r: AnalyzeResult, typical: dict[str, DeviceStep]) -> list[str]:
    """A line per device whose typical step spends a share of its wall running other steps'
    work: its busy counts the step's own work alone, so say how busy the device was with any."""
    wall, which = steady_wall(r), which_step(doc, r)
    lines = []
    for dev, m in typical.items():
        if not is_host(dev) and fmt.share(m.other_work_ms, wall) > PIPELINED_SHARE:
            lines.append(
                f"device {dev} is pipelined: besides its own {fmt.pct(fmt.share(m.busy_ms, wall))} it ran "
                f"other steps' work {fmt.pct(fmt.share(m.other_work_ms, wall))} of the {which}'s wall, "
                f"busy with any step's work {fmt.pct(fmt.share(m.busy_ms + m.other_work_ms, wall))} (the CPU "
                "runs ahead of the device)."
            )
    return lines


def _typical(r: AnalyzeResult) -> str:
    """The typical step's row name: the mean over the steady steps, and how many were left out."""
    left = len(r.steps) - len(steady_steps(r))
    return "steady mean" + (f" ({left} left out)" if left else "")


def _categories(doc: Doc, r: AnalyzeResult, typical: dict[str, DeviceStep]) -> None:
    which = which_step(doc, r)
    for dev in r.devices:
        m = typical.get(dev)
        if m is None:
            continue
        wall = steady_wall(r)
        total = sum(m.categories.values())
        rows = [
            [label(c), fmt.ms(ms), fmt.pct(fmt.share(ms, total)), fmt.pct(fmt.share(ms, wall))]
            for c, ms in sorted(m.categories.items(), key=lambda kv: -kv[1])
        ]
        rows.append(
            ["total", fmt.ms(total), fmt.pct(100.0 if total else 0.0), fmt.pct(fmt.share(total, wall))]
        )
        doc.heading(f"Time by category, {'' if is_host(dev) else 'device '}{device_label(r, dev)} ({which})")
        share = host_word("% kernel", is_host(dev))  # of the category table's total
        doc.table(rows, ["category", "ms", share, "% wall"], ("left", "right", "right", "right"))
        if total > wall > 0:
            doc.fine_print(f"the categories sum the events' durations, {fmt.ms(total)} ms, more than "
                           f"the {fmt.ms(wall)} ms wall: events on concurrent streams overlap (busy, their "
                           f"union, {fmt.ms(m.busy_ms)} ms, never exceeds the wall)")


def _regions(doc: Doc, r: AnalyzeResult, top: int) -> None:
    """The trace's record_function ranges in the typical step (core/regions.py)."""
    typical, left_out = steady_regions(r), regions_left_out(r)
    if not typical and not left_out:
        return
    if not typical:
        doc.heading(f"Named ranges: record_function ({which_step(doc, r)})")
        doc.fine_print(left_out_line(doc, "ranges", left_out))
        return
    wall, host = steady_wall(r), on_host(r)
    rows = [[doc.code(doc.whole_cell(g.name, NAME_CHARS)), fmt.count(round(g.calls, 2)), fmt.ms(g.wall_ms),
             fmt.pct(fmt.share(g.wall_ms, wall)), fmt.ms(g.work_ms)] for g in typical[:top]]
    which = which_step(doc, r)
    shown = f"top {top} of {len(typical)}, " if len(typical) > top else ""
    doc.heading(f"Named ranges: record_function ({shown}{which})")
    work = "ops ms" if host else "launched ms"
    whole = r.steps[0].name == WHOLE_TRACE  # no steps: a share of the trace's wall
    share = "% trace" if whole else "% step"
    doc.table(rows, ["range", "calls", "wall ms", share, work], ("left", *("right",) * 4))
    doc.fine_print(
        "wall = the union of the range's calls on the CPU; "
        + ("% trace of the whole trace's wall; " if whole else "% step of the step's wall; ") + (
            "ops ms = the time of the top-level ops that started in it (as the steps table gives them), "
            if host else
            "launched ms = the device work (kernels, memcpy, memset) launched while it was open, however "
            "late it ran, "
        ) + "from any thread (autograd runs a backward's ops on its own thread while the loop waits "
        "in its backward range). A range inside another counts in both (docs/analyze.md).",
        *_past_step_lines(doc, r, [g.name for g in typical[:top] if g.wall_ms > wall], work),
        *([left_out_line(doc, "ranges", left_out)] if left_out else []),
    )


def _past_step_lines(doc: Doc, r: AnalyzeResult, names: list[str], work: str) -> list[str]:
    """Ranges whose typical wall exceeds the step's (% step above 100%): calls that ran past the
    end of the step they start in (an "epoch" around several steps), each with its longest such
    call, in the steady step where it ran furthest past."""
    if not names:
        return []
    kept, regions = steady_indices(r), {g.name: g for g in r.regions}
    calls = []
    for name in names:
        g = regions[name]
        k = max(kept, key=lambda i: g.wall_ms[i] - r.steps[i].wall_ms)
        calls.append(f"{doc.code(name)} {fmt.ms(g.wall_ms[k])} ms in {step_code(doc, r.steps[k].name)} "
                     f"of {fmt.ms(r.steps[k].wall_ms)} ms")
    return [f"% step above 100%: a range open past the end of the step it starts in counts its wall "
            f"to its end ({'; '.join(calls)}); its {work} are that step's own"]


def _host_python(doc: Doc, r: AnalyzeResult) -> None:
    """A trace recorded with ``with_stack``: the typical step's host time in no op by whose
    Python it is (core/host_python.py)."""
    layers, total = steady_host_python(r)
    if not layers or total <= 0:
        return
    doc.heading(f"Host Python between ops, by whose it is ({_typical(r)}, {r.host_python_thread})")
    python_table(doc, layers, total)
    doc.paragraph(
        "Recorded with with_stack=True: each moment of a step in which no thread is in an op or a "
        "runtime call goes to the innermost Python frame then running on the loop's thread (the one "
        "with the most calls) with a source file of its own (a built-in or the standard library "
        "counts for the frame that called it), and its file to a layer (docs/analyze.md). The "
        "profiler's Python tracer adds its own cost to every call: the shares are the guide. Dynamo's "
        "frame (Torch-Compiled Region) is no op here, while the steps table counts its own time as an op "
        "(framework time): this total can exceed that table's idle by it."
    )


def render_analyze(r: AnalyzeResult, fmt_name: str = TEXT, *, top: int = DEFAULT_TOP) -> str:
    doc = new_doc(fmt_name)
    analysis(doc, r, top, f"inductor-bench analyze: {Path(r.trace).name}")
    return doc.render()


def analysis(doc: Doc, r: AnalyzeResult, top: int, title: str, notes: list[str] | None = None) -> None:
    """One trace's sections into ``doc`` under ``title``, ``notes`` among its facts."""
    doc.title(title)
    doc.paragraph(*(doc.item(f) for f in trace_facts(doc, r, notes)))
    typical = {dev: m for dev in r.devices if (m := steady_step(r, dev))}
    _steps(doc, r, typical)
    doc.chart(charts.analyze_steps(r))
    _categories(doc, r, typical)
    doc.chart(charts.analyze_categories(r))
    _regions(doc, r, top)
    _host_python(doc, r)
    memory_section(doc, r)
    top_section(doc, r, top, which_step(doc, r), on_host(r))
    shaped_ops_section(doc, r, top)
    doc.links("The trace", [(r.trace, r.trace)], charts.PERFETTO_HOW)
