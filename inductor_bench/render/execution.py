"""How the graphs ran: the model's precision settings, CUDA graphs, the pipelined step on an
accelerator (busy and launch-bound), and the time spent outside the graphs."""

from __future__ import annotations

from ..core import call_sizes, compiles, static_twin, step_totals, views
from ..core.compiled_from import origins_line
from ..core.devices import backend
from ..core.graph_breaks import noted, summary_line
from ..core.pipelined import LAUNCH_BOUND_IDLE
from ..core.results import BreakdownResult, GraphResult
from ..core.stats import TOO_FEW, WITHIN_NOISE
from ..core.step import disturbances, oversubscribed
from ..core.subgraphs import left_out_line
from ..core.symbols import sizes_text
from ..core.vocab import CompileMode, Role
from . import format as fmt
from .doc import Doc
from .outside import render_outside_ops, render_outside_split

LAUNCH_BOUND = "launch-bound"
DEVICE_BOUND = "device-bound"


def render_execution(doc: Doc, r: BreakdownResult) -> None:
    for line in disturbances(r):
        doc.paragraph(doc.alert("warning") + f": {line}")
    hint = oversubscribed(r)
    if hint:
        doc.paragraph(f"hint: {hint}")
    _settings(doc, r)
    for line in (origins_line(r), *compiles.lines(r), recomputed_line(r)):
        if line:
            doc.paragraph(line)
    if r.graph_breaks:
        doc.paragraph(breaks_line(r))
    _dynamic(doc, r)
    _first_call_inputs(doc, r)
    line = calls_line(r)
    if line:
        doc.paragraph(line)
    if r.subgraphs_left_out:
        doc.paragraph(left_out_line(len(r.subgraphs_left_out)))
    _cuda_graphs(doc, r)
    _pipelined(doc, r)
    render_outside_split(doc, r)
    render_outside_ops(doc, r)


def breaks_line(r: BreakdownResult) -> str:
    """The graph breaks' line, each break at ``loss.backward()`` saying which compiled graphs ran
    the backward (compiled autograd's, else AOTAutograd's)."""
    return summary_line(noted(r.graph_breaks, [g.id for g in r.graphs if g.compiled_autograd],
                              [g.id for g in r.graphs if g.role == Role.BACKWARD]))


def recomputed_line(r: BreakdownResult) -> str | None:
    """What the backward graphs do again of the forward's work, where any does."""
    found = views.recomputed(r)
    if not found:
        return None
    each = "; ".join(f"{x.graph.id} {x.count} {'call' if x.count == 1 else 'calls'}, {fmt.ms(x.ms)} ms "
                     f"({fmt.pct(fmt.share(x.ms, x.graph.kernel_ms))} of its kernel time)" for x in found)
    return (f"recomputed in the backward: {each}: kernels and extern calls made only of the "
            "forward's work, done again (activation checkpointing, or ops the partitioner recomputes "
            "rather than saves), marked \"(recomputed)\" in the tables; a kernel that fuses such work "
            "with the backward's is not counted (docs/attribution.md)")


def _settings(doc: Doc, r: BreakdownResult) -> None:
    if r.torch_settings is None:
        return
    shown = r.torch_settings.shown()
    if not shown:
        return
    how = {k: r.torch_settings.origin(k) for k in shown}
    parts = [f"{k} {v}" + (f" ({how[k]})" if how[k] else "") for k, v in shown.items()]
    doc.paragraph(
        "settings (read after the model ran, applied when profiling): " + " · ".join(parts)
    )


def _dynamic(doc: Doc, r: BreakdownResult) -> None:
    dynamic = [g for g in r.graphs if g.sizes]
    chosen = [g for g in dynamic if call_sizes.by_calls(g.sizes, g.size_hints, g.call_sizes)]
    given = [g for g in dynamic if g.size_hints and g not in chosen]
    hinted = [g for g in dynamic if not g.size_hints]
    lines = []
    if chosen:
        lines.append(f"dynamic shapes: profiled {_each(chosen)}: the sizes most of its calls ran at, "
                     "not its harness's (those of the call that compiled it)")
    if given:
        lines.append(f"dynamic shapes: profiled {_each(given)}, as --size asked")
    if hinted:
        lines.append(
            f"dynamic shapes: profiled {_each(hinted)}: the size hints its compiled module's harness "
            "holds (those of the call that first compiled the graph, perhaps in a run that filled the "
            "cache)" + ("" if all(_all_calls_at(g) for g in hinted) else
                        ", not every size the model ran; other sizes run the same kernels on more or "
                        "less data: --size SYMBOL=N profiles at another (docs/breakdown.md)"))
    if data := [g for g in r.graphs if g.unbacked]:
        lines.append("data-dependent sizes, as the call profiled had them on its inputs (its bytes, FLOPs "
                     "and extern calls' inputs are read at them): "
                     + "; ".join(f"{g.id} {sizes_text(g.unbacked)}" for g in data))
    lines += [_twin_line(t) for t in static_twin.twins(r)]
    if several := [g for g in dynamic if len(call_sizes.counts(g.call_sizes)) > 1]:
        lines.append("calls by size: " + "; ".join(f"{g.id} {_by_size(g)}" for g in several))
    many = [g for g in dynamic if step_totals.other_than_once(g.calls) and not _all_calls_at(g)]
    if many and step_totals.counted(r.measured()):
        lines.append(f"{step_totals.ALL_GRAPHS_ROW} counts every call of a dynamic graph at the size "
                     "profiled: "
                     + ", ".join(f"{g.id} {fmt.count(g.calls or 0.0)} calls{_of_them(g)}" for g in many))
    if lines:
        doc.paragraph(*lines)


def _twin_line(t: static_twin.Twin) -> str:
    """The dynamic graph beside the static one compiled for the same input shapes."""
    d, s = t.dynamic, t.static
    line = (f"same shapes, two compiles: {d.id} (dynamic) at {sizes_text(d.sizes)} takes "
            f"{fmt.ms(d.wall_ms)} ms a call, {s.id} (static, compiled for the same input shapes) "
            f"{fmt.ms(s.wall_ms)} ms: {fmt.across_floor(t.ratio, (static_twin.SLOWER,), 2)}x")
    if t.slower:
        return line + (": the code for a symbolic size is slower here; where the model runs few sizes, "
                       "compiling them static keeps the faster code (torch.compile(dynamic=False), or "
                       "a DataLoader with drop_last=True: docs/breakdown.md)")
    if t.change.verdict == WITHIN_NOISE:
        return line + " (within noise)"
    if t.change.verdict == TOO_FEW:
        return line + " (too few iterations to judge)"
    return line + (" (not judged: measured on a busy or slowed machine, see the warnings)"
                   if t.disturbed else "")


def _each(graphs: list[GraphResult]) -> str:
    """``0.1-forward at s77=32 (7 of its 8 calls; its harness's: s77=8)`` for each graph."""
    parts = []
    for g in graphs:
        at, n = call_sizes.calls_at(g.call_sizes, g.sizes)
        notes = [_share_of_calls(at, n)] if n else []
        notes += [f"its harness's: {sizes_text(g.size_hints)}"] if g.size_hints else []
        parts.append(f"{g.id} at {sizes_text(g.sizes)}" + (f" ({'; '.join(notes)})" if notes else ""))
    return "; ".join(parts)


def _share_of_calls(at: int, n: int) -> str:
    if at == n:
        return f"all {n} of its calls"
    return f"none of its {n} calls" if at == 0 else f"{at} of its {n} calls"


SIZES_SHOWN = 5  # sizes a "calls by size" line names, before it sums up the rest


def _by_size(g: GraphResult) -> str:
    """``s77=8 x1, s77=32 x7`` in the order first met; past ``SIZES_SHOWN`` sizes (a decode loop
    whose cache grows by one each call) those of the most calls, then the rest summed up and
    each size symbol's range; symbols equal at every size written once (``s87=s94=9``)."""
    pairs = call_sizes.counts(g.call_sizes)
    shown = pairs if len(pairs) <= SIZES_SHOWN else sorted(pairs, key=lambda p: -p[1])[:SIZES_SHOWN]
    text = ", ".join(f"{_equal_sizes(s)} x{n}" for s, n in shown)
    if len(shown) == len(pairs):
        return text
    rest = len(pairs) - len(shown)
    calls = sum(n for _, n in pairs) - sum(n for _, n in shown)
    return f"{text} and {rest} more sizes ({calls} calls; {len(pairs)} sizes in all: {_ranges(pairs)})"


def _groups(pairs: list[tuple[dict[str, int], int]]) -> dict[tuple[int | None, ...], list[str]]:
    """Each size symbol's values over ``pairs`` (None where a size lacks it) -> the symbols that
    took exactly those values."""
    out: dict[tuple[int | None, ...], list[str]] = {}
    for sym in dict.fromkeys(k for s, _ in pairs for k in s):
        out.setdefault(tuple(s.get(sym) for s, _ in pairs), []).append(sym)
    return out


def _equal_sizes(sizes: dict[str, int]) -> str:
    """``s87=s94=9, s0=4``: one size, its symbols of one value written together."""
    return ", ".join(f"{'='.join(syms)}={vals[0]}" for vals, syms in _groups([(sizes, 1)]).items())


def _ranges(pairs: list[tuple[dict[str, int], int]]) -> str:
    """``s87=s94 from 9 to 22``: each group of size symbols that moved together, its range."""
    parts = []
    for vals, syms in _groups(pairs).items():
        lo, hi = min(v for v in vals if v is not None), max(v for v in vals if v is not None)
        parts.append(f"{'='.join(syms)}={lo}" if lo == hi else f"{'='.join(syms)} from {lo} to {hi}")
    return ", ".join(parts)


def _all_calls_at(g: GraphResult) -> bool:
    at, n = call_sizes.calls_at(g.call_sizes, g.sizes)
    return n > 0 and at == n


def _of_them(g: GraphResult) -> str:
    at, n = call_sizes.calls_at(g.call_sizes, g.sizes)
    return f" ({at} of them at that size)" if n else ""


def calls_line(r: BreakdownResult) -> str | None:
    """How many times the model called each graph and what that weighs: a script's calls of
    each graph and the time they add up to; a factory model's graphs called more or less than
    once per step. None where every graph runs once per step or no call was counted."""
    gs = r.measured()
    if not step_totals.counted(gs):
        return None
    weighed = (f"{step_totals.ALL_GRAPHS_ROW}, the time by category, the top kernels and the "
               "views add each graph's calls; a graph's own table is one call")
    if r.script:
        w = r.weights()
        total = {g.id: w[g.id] * g.wall_ms for g in gs}
        whole = r.totals().wall_ms
        parts = [f"{g.id} {fmt.count(g.calls or 0.0)} x {fmt.ms(g.wall_ms)} ms = {fmt.ms(total[g.id])} ms "
                 f"({fmt.pct(fmt.share(total[g.id], whole))})"
                 for g in sorted(gs, key=lambda g: -total[g.id])]
        until = (f" (in the {r.script_stopped_s:.1f} s before it was stopped)"
                 if r.script_stopped_s is not None else "")
        return (f"calls in the script{until}: {', '.join(parts)}; {fmt.ms(whole)} ms in its compiled graphs "
                f"in all ({weighed})")
    odd = [g for g in gs if step_totals.other_than_once(g.calls)]
    if not odd:
        return None
    each = ", ".join(f"{g.id} {fmt.count(round(g.calls or 0.0, 2))}" for g in odd)
    return f"calls per step: {each} ({weighed})"


def _first_call_inputs(doc: Doc, r: BreakdownResult) -> None:
    # graphs with an input copied (the first count) or scaled (the fourth), or a constant (5th, 7th)
    given = [g for g in r.graphs if any(_counts(g.first_call_inputs, 0, 3, 4, 6))]
    if not given:
        return
    put_back = [g for g in given if g.first_call_inputs[1:] and g.first_call_inputs[1]]
    if all(len(g.first_call_inputs) > 2 for g in given):  # floats recorded too
        line = ("inputs: each graph ran on the values its first call in the model had (weights, "
                "activations, token ids, masks; an input over 64 MiB, or past 256 MiB a graph, on the "
                "harness's seeded random draw brought to the mean and deviation it had), of its tensor "
                "inputs: " + ", ".join(_given(g.id, *_counts(g.first_call_inputs, 0, 2, 3)) for g in given))
    else:  # a run saved when only the integer and boolean inputs were recorded
        line = ("inputs: each graph ran on its harness's seeded random floats and on the integer and "
                "boolean inputs of its first call in the model (token ids, positions, masks): "
                + ", ".join(f"{g.id} {g.first_call_inputs[0]}" for g in given))
    if put_back:
        # a backward writes into the saved activations it is done with (Inductor reuses their buffers)
        reused = ", a saved activation whose buffer a backward reuses" if any(
            g.role == "backward" for g in put_back) else ""
        line += ("; put back before every call, as the graph changes them in place (a cache's position, "
                 f"a counter, a norm's running statistics{reused}): "
                 + ", ".join(f"{g.id} {g.first_call_inputs[1]}" for g in put_back))
    held = [g for g in given if _counts(g.first_call_inputs, 5)[0]]  # the constants it holds
    if held:
        each = (_given(g.id, *_counts(g.first_call_inputs, 4, 5, 6)) for g in held)
        line += ("; of the constants it holds (weights that freezing folded in, tensors the graph made), "
                 "set to the model's: " + ", ".join(each))
    doc.paragraph(line)


def _counts(counts: list[int], *at: int) -> list[int]:
    """The counts at the positions ``at`` of ``first_call_inputs`` (``[inputs copied, put back,
    tensor inputs, scaled, constants copied, constants held, constants scaled]``; a run saved
    before some were counted has fewer: 0 for those)."""
    return [counts[i] if i < len(counts) else 0 for i in at]


def _given(gid: str, copied: int, total: int, scaled: int) -> str:
    """``0-inference 40 of 45 (5 more at their scale)``."""
    return f"{gid} {copied} of {total}" + (f" ({scaled} more at their scale)" if scaled else "")


def _cuda_graphs(doc: Doc, r: BreakdownResult) -> None:
    gs = [g for g in r.graphs if g.cuda_graphs is not None]
    if not gs and r.mode in CompileMode.CUDA_GRAPHS_ONLY and r.graphs and not backend(r.device).cuda_graphs:
        doc.paragraph(f"mode {r.mode} on {backend(r.device).label}: the mode's one option is CUDA graphs, "
                      "which need a CUDA device, so its graphs compiled and ran as mode default's do")
    if not gs:
        return
    replayed = [g.id for g in gs if g.replayed]
    lines = []
    if replayed:
        lines.append(
            f"CUDA graphs: {', '.join(replayed)} profiled as mode {r.mode} runs them, replayed "
            "from a CUDA graph (one launch per iteration)"
        )
    for g in gs:
        if not g.replayed:
            lines.append(f"{g.id}: {g.cuda_graphs_note or 'not replayed from a CUDA graph'}")
    lines += [f"{g.id} as the mode runs it: {g.how_it_ran}" for g in gs if g.how_it_ran]
    doc.paragraph(*lines)


def _pipelined(doc: Doc, r: BreakdownResult) -> None:
    gs = [g for g in r.measured() if g.pipelined is not None]
    if not gs:
        return
    plain = any(g.pipelined is not None and g.pipelined.plain_wall_ms for g in gs)
    rows = []
    for g in gs:
        p = g.pipelined
        assert p is not None
        if plain:  # the verdict's wall is the unprofiled run's; the profiled one beside it
            cost = p.profiler_launch_ms
            busy = fmt.pct(100.0 * (1 - p.idle_share))
            rows.append([g.id, fmt.ms(p.verdict_wall_ms), fmt.ms(p.busy_ms), busy,
                         fmt.ms(p.plain_launch_ms) if p.plain_launch_ms is not None else "-",
                         fmt.ms(p.wall_ms), fmt.ms(cost) if cost is not None else "-", fmt.pct(g.busy_pct),
                         LAUNCH_BOUND if p.launch_bound else DEVICE_BOUND])
            continue
        rows.append(
            [
                g.id,
                fmt.ms(p.wall_ms),
                fmt.ms(p.busy_ms),
                fmt.pct(p.busy_pct),
                fmt.ms(p.launch_ms),
                fmt.pct(g.busy_pct),
                LAUNCH_BOUND if p.launch_bound else DEVICE_BOUND,
            ]
        )
    doc.heading("Pipelined step (iterations launched back to back, one sync at the end)")
    if plain:
        doc.table(
            rows,
            ["graph", "ms / iter", "busy ms", "busy", "launch ms", "profiled ms / iter",
             "profiler's launch ms", "busy (synced)", "verdict"],
            ("left", "right", "right", "right", "right", "right", "right", "right", "left"),
            optional=("profiler's launch ms", "profiled ms / iter", "busy (synced)"),
        )
    else:
        doc.table(
            rows,
            ["graph", "ms / iter", "busy ms", "busy", "launch ms", "busy (synced)", "verdict"],
            ("left", "right", "right", "right", "right", "right", "left"),
        )
    bound = [g.id for g in gs if g.pipelined is not None and g.pipelined.launch_bound]
    text = (
        "busy = the device's busy time in a run of back-to-back iterations, each kernel given to "
        "the iteration that launched it; launch ms = CPU time to launch one iteration; "
        f"{LAUNCH_BOUND} = the device idles more than {100 * LAUNCH_BOUND_IDLE:.0f}% of the run, "
        "waiting on the CPU."
    )
    if plain:
        text += (
            " ms / iter and launch ms are the same iterations timed without the profiler, which adds "
            "its own cost to every launch (profiler's launch ms): the verdict does not count it."
        )
    if bound:
        text += (
            f" {', '.join(bound)}: launch-bound — mode reduce-overhead (CUDA graphs) "
            "or fewer, larger kernels would keep the device busy."
        )
    doc.paragraph(text)
