"""What each report draws: ``Chart``s built from the core records, for any document
(``Doc.chart``; only HTML draws them). The numbers are the ones the tables beside them print.

Breakdown and analyze here; compare, diff and kernel in ``charts_compare.py``."""

from __future__ import annotations

from ..core.analyze_result import AnalyzeResult
from ..core.categories import label, order
from ..core.results import BreakdownResult, KernelStat
from ..core.step import gain_frame
from ..core.step_totals import ALL_GRAPHS, ALL_GRAPHS_ROW, reweighed
from ..core.top_kernels import TypicalKernel, device_kernel_ms
from ..core.typical_step import steady_step
from ..core.views import Unit, top_step_units
from . import format as fmt
from .chart_model import Bar, Chart, Segment, Series
from .host_words import host_word, on_host

PERFETTO_HOW = (
    'To open a trace: go to https://ui.perfetto.dev, choose "Open trace file" and pick the file '
    "(a .json.gz opens as it is, and stays on your machine; a page cannot hand a local file to "
    "another site, hence the two steps)."
)


def category_segments(cats: dict[str, float], scale: float = 1.0) -> list[Segment]:
    """One segment per category with time, in report order (a category's colour is its key)."""
    return [
        Segment(ms * scale, c, label(c))
        for c, ms in sorted(cats.items(), key=lambda kv: (order(kv[0]), kv[0]))
        if ms > 0
    ]


def graph_labels(labels: list[str], graphs: list[str]) -> list[str]:
    """Bar labels of kernels, those that recur in other graphs named with their graph
    (``1-forward · aten::mm #0``, ``0-backward · aten::cumsum``): the chart has no graph column
    to tell them apart."""
    graphs_of: dict[str, set[str]] = {}
    for x, g in zip(labels, graphs, strict=True):
        graphs_of.setdefault(x, set()).add(g)
    return [f"{g} · {x}" if len(graphs_of[x]) > 1 else x for x, g in zip(labels, graphs, strict=True)]


def _ops(k: KernelStat) -> str:
    return ", ".join(k.aten_ops) or (k.launched_by or "")


# ---- breakdown ------------------------------------------------------------------------------


def breakdown_categories(r: BreakdownResult) -> Chart | None:
    """Kernel time by category: all graphs, then each graph, stacked."""
    gs = r.measured()
    if not gs:
        return None
    t = r.totals()
    bars = [Bar(ALL_GRAPHS, category_segments(t.categories), note=f"{fmt.ms(t.kernel_ms)} ms")]
    if len(gs) > 1:
        bars += [Bar(g.id, category_segments(g.categories), note=f"{fmt.ms(g.kernel_ms)} ms") for g in gs]
    each = ("the whole bar: each graph times its calls; a graph's bar: one call" if reweighed(t.weights)
            else "each graph runs once" + ("" if r.script else " per step"))
    which = " and each graph" if len(gs) > 1 else f" ({gs[0].id})"
    return Chart(f"Kernel time by category: {ALL_GRAPHS}{which}", f"ms (kernel time; {each})", bars)


def _busy_bar(name: str, wall: float, busy: float) -> Bar:
    idle = max(wall - busy, 0.0)
    return Bar(
        name,
        [Segment(min(busy, wall), Series.BUSY, "busy"), Segment(idle, Series.IDLE, "idle")],
        note=f"busy {fmt.pct(fmt.share(busy, wall))}",
        tip=f"wall {fmt.ms(wall)} ms · busy {fmt.ms(busy)} ms · idle {fmt.ms(idle)} ms",
    )


def breakdown_busy(r: BreakdownResult, note: str = "") -> Chart | None:
    """Busy vs idle wall time, per graph and for the step."""
    gs = r.measured()
    if not gs:
        return None
    t = r.totals()
    bars = [_busy_bar(g.id, g.wall_ms, g.busy_ms) for g in gs]
    if len(gs) > 1:
        bars.insert(0, _busy_bar(ALL_GRAPHS, t.wall_ms, t.busy_ms))
    weighed = f" ({ALL_GRAPHS}: each graph times its calls)" if reweighed(t.weights) else ""
    unit = "ms of wall time per call" + weighed
    return Chart("Busy vs idle, per graph", unit, bars, note=note)


def _kernel_bar(u: Unit, name: str, step_wall: float, kernel_total: float) -> Bar:
    """One kernel's bar, or one extern call site's (``u.site``) with its own time; ``name``: its
    kernel's label."""
    k = u.kernel
    return Bar(
        name + u.site_mark,
        [Segment(u.ms, k.category, label(k.category))],
        full=k.name + u.site_mark,
        note=f"max gain {fmt.pct(fmt.share(u.ms, step_wall))}",
        tip=(
            f"graph {u.graph.id} · {fmt.calls(u.calls)} · {fmt.pct(fmt.share(u.ms, kernel_total))} of "
            f"kernel time" + (f"\n{_ops(k)}" if _ops(k) else "")
        ),
    )


def breakdown_top(r: BreakdownResult, top: int) -> Chart | None:
    """The most expensive kernels of the step, with the most each could give back."""
    us = top_step_units(r, split=False)[:top]
    return breakdown_top_units(r, us, "kernels")


def breakdown_top_units(r: BreakdownResult, us: list[Unit], what: str = "kernels and extern calls"
                        ) -> Chart | None:
    """The same for the units view (core/views.py): extern calls one bar per call site."""
    if not us:
        return None
    t = r.totals()
    frame = gain_frame(r)
    labels = graph_labels(fmt.kernel_labels([u.kernel.name for u in us]), [u.graph.id for u in us])
    bars = [_kernel_bar(u, name, frame.wall_ms, t.kernel_ms) for u, name in zip(us, labels, strict=True)]
    outside = (f" and the {fmt.ms(frame.outside_ms)} ms outside the graphs"
               if frame.outside_ms > 0 else "")
    note = (f"max gain: the kernel's share of {ALL_GRAPHS_ROW}'s wall time{outside}, the most the "
            f"{'script' if r.script else 'step'} can gain if it took none.")
    unit = ("ms in the script" if r.script else "ms per step") + (
        " (all its graph's calls)" if reweighed(t.weights) else "")
    return Chart(f"Top {len(us)} {what}", unit, bars, note=note)


def graph_files(r: BreakdownResult) -> list[tuple[str, str]]:
    """(text, path in the run directory) of each graph's trace(s) and compiled module."""
    out = []
    for g in r.graphs:
        for what, path in (
            ("profiler trace", g.trace),
            ("trace of the pipelined step", g.pipelined_trace),
            ("compiled module", g.module),
        ):
            if path:
                out.append((f"{g.id}: {what} ({path})", path))
    return out


# ---- analyze --------------------------------------------------------------------------------

MAX_STEPS = 40  # steps drawn; a longer trace shows the first ones (the table has them all)


def analyze_steps(r: AnalyzeResult) -> Chart | None:
    """Each step on each device (a CPU-only trace's threads): busy, then the idle time split by
    its cause, named as the steps table names it."""
    many, legend = len(r.devices) > 1, _steps_legend(on_host(r))
    bars = []
    for s in r.steps[:MAX_STEPS]:
        for d in s.devices:
            segs = [
                Segment(d.busy_ms, Series.BUSY, legend[Series.BUSY]),
                Segment(d.other_work_ms, Series.OTHER_WORK, legend[Series.OTHER_WORK]),
                Segment(d.waiting_on_cpu_ms, Series.WAITING, legend[Series.WAITING]),
                Segment(d.queued_ms, Series.QUEUED, legend[Series.QUEUED]),
                Segment(d.nothing_launched_ms, Series.NOTHING, legend[Series.NOTHING]),
            ]
            name = f"{s.name} · {d.device}" if many else s.name
            bars.append(Bar(name, segs, note=f"busy {fmt.pct(fmt.share(d.busy_ms, s.wall_ms))}"))
    if not bars:
        return None
    more = f" (the first {MAX_STEPS} of {len(r.steps)})" if len(r.steps) > MAX_STEPS else ""
    return Chart(f"Busy and idle per step{more}", "ms of step wall time", bars, legend=legend)


def _steps_legend(host: bool) -> dict[str, str]:
    """The steps chart's series, in the words of the steps table (a thread's where ``host``)."""
    idle = (Series.WAITING, Series.QUEUED, Series.NOTHING)
    return {Series.BUSY: "busy", Series.OTHER_WORK: "other steps' work",
            **{s: f"idle: {host_word(s, host)}" for s in idle}}


def analyze_categories(r: AnalyzeResult) -> Chart | None:
    """Time by category in the typical step (the steady mean), one bar per device (a CPU-only
    trace's: per thread, its ops' time)."""
    bars, host = [], on_host(r)
    for dev in r.devices:
        m = steady_step(r, dev)
        if m is not None and m.categories:
            note = f"{fmt.ms(sum(m.categories.values()))} ms"
            bars.append(Bar(dev if host else f"device {dev}", category_segments(m.categories), note=note))
    if not bars:
        return None
    which = "the steady mean step" if len(r.steps) > 1 else r.steps[0].name
    return Chart(f"{'Op' if host else 'Kernel'} time by category ({which})", "ms per step", bars)


def analyze_top(kernels: list[TypicalKernel], top: int, host: bool = False) -> Chart | None:
    """The typical step's top kernels (``core/top_kernels.py``); where ``host``, a CPU-only
    trace's top ops."""
    totals = device_kernel_ms(kernels)
    labels = fmt.kernel_labels([k.name for k in kernels[:top]])
    bars = [
        Bar(
            name,
            [Segment(k.ms, k.category, label(k.category))],
            full=k.name,
            note=fmt.pct(fmt.share(k.ms, totals[k.device])),
            tip=_top_tip(k, host),
        )
        for k, name in zip(kernels[:top], labels, strict=True)
    ]
    if not bars:
        return None
    if host:
        return Chart(f"Top {len(bars)} ops", "ms per step", bars,
                     note="at the end of a bar: % of its thread's op time")
    return Chart(f"Top {len(bars)} kernels", "ms per step", bars,
                 note="at the end of a bar: % of its device's kernel time")


def _top_tip(k: TypicalKernel, host: bool) -> str:
    """A top row's hover text: where it ran, its calls, and its launchers (on the host, what a
    compiled graph's call ran as, as the table writes it after the op)."""
    tip = f"{k.device} · {fmt.calls(round(k.calls, 2))} per step"
    if not k.launched_by:
        return tip
    return tip + (f"\n({k.launched_by})" if host else f"\nlaunched by {k.launched_by}")
