"""The verdict of a ``Diff``: its first line (regression, faster, no significant change, the
same code, not comparable: a graph on one side only, or two workloads), and the change and
verdict cells its tables share. Returns strings."""

from __future__ import annotations

from ..core.diff import Diff, KernelDiff, SectionDiff
from ..core.other_workload import workload_line
from ..core.stats import MIN_SAMPLES, Change
from ..core.vocab import Outcome, StepSource, Verdict
from .diff_kernel_labels import DEFAULT_TOP, kernel_change, table_label
from .doc import Doc
from .format import change_pct, interval_pct, ms_precise, rel_change_pct, step_figure
from .format import count as fmt_calls

# Kernels named in the verdict line as responsible for a regression.
VERDICT_KERNELS = 3


def change_cell(ch: Change, s: SectionDiff | None = None) -> str:
    """The change of the times, with the interval it rests on when both sides can be judged
    (not across two workloads: their change is the arithmetic's alone); none where the
    section (``s``) lacks a graph on one side, whose sums are over other graphs (a step read
    slower on a busy machine is not comparable either, but its sums are over the same graphs)."""
    if ch.verdict == Outcome.NOT_COMPARABLE and (s is None or graph_missing(s)):
        return "-"
    if ch.rel_pct is not None:
        judged = min(ch.base.n, ch.head.n) >= MIN_SAMPLES and ch.verdict != Verdict.OTHER_WORKLOAD
        return f"{change_pct(ch)} {interval_pct(ch.ratio_ci, ch.min_rel) if judged else ''}".strip()
    return "new" if ch.head.ms > 0 else "-"


def graph_missing(s: SectionDiff) -> bool:
    """Whether the section lacks a graph (or its whole column) on one side, not only a figure
    read on a busy machine."""
    return any(not u.disturbed for u in s.unmeasured)


# ---- the verdict ----------------------------------------------------------------------------


def _step_times(s: SectionDiff) -> str:
    ch = s.step
    return f"{s.mode}: {step_figure(s.step_source)} {ms_precise(ch.base.ms)} -> {ms_precise(ch.head.ms)} ms"


def gated_phrase(s: SectionDiff) -> str:
    """The gate's figure, the row of the tables it is with its figures, and what its % is of:
    ``default: all graphs 1.162 -> 1.999 ms: +71.9% of the graphs' own calls, not of the whole
    step (its time outside the graphs is not in it)``, or ``default: step time 2.014 -> 2.915
    ms: +44.7% of the step (the real model call)``."""
    return gated_figures(s.mode, s.step_source, s.step.base.ms, s.step.head.ms, s.step)


def gated_figures(label: str, source: str, base_ms: float, head_ms: float, ch: Change) -> str:
    """A gate's line for one row (``gated_phrase``; compare's gate gives its step time row):
    the row's two figures as the table prints them, ``ch``'s % as the tables print it
    (``change_pct``, more decimals beside the floor) and what that % is of; of interleaved
    rounds, that it is their ratios' median, not the change of the two figures."""
    rel = (ch.rel_pct, ch.min_rel)
    return gated_change(label, source, (base_ms, head_ms), rel, paired=ch.paired is not None)


def gated_change(
    label: str, source: str, times_ms: tuple[float, float], rel: tuple[float | None, float | None],
    *, paired: bool = False,
) -> str:
    """``gated_figures`` of a change kept as its figures (a sweep's gate keeps no ``Change``):
    ``times_ms`` base and head, ``rel`` its % and the significance floor (``rel_change_pct``)."""
    of = ("of the graphs' own calls, not of the whole step (its time outside the graphs is not in it)"
          if source == StepSource.HARNESS else "of the step (the real model call)")
    if paired:
        of = of[:-1] + ", the median of the interleaved rounds' ratios)"
    base_ms, head_ms = times_ms
    figures = f"{label}: {step_figure(source)} {ms_precise(base_ms)} -> {ms_precise(head_ms)} ms"
    return f"{figures}: {rel_change_pct(*rel)} {of}"


def _gated_row(diff: Diff) -> str:
    """What a breakdowns' gate's % is of, said once by the verdict, as the gate's line says it
    (``gated_phrase``): their all-graphs row, not the whole step; nothing for compares."""
    if any(s.step_source == StepSource.HARNESS for s in diff.sections):
        return " on the graphs' own calls, not the whole step"
    return ""


def _step_phrase(s: SectionDiff) -> str:
    return f"{_step_times(s)} ({change_cell(s.step, s)}, {verdict_cell(s.step, s)})"


def verdict_cell(ch: Change, s: SectionDiff) -> str:
    """A change's verdict; across two workloads ``not comparable: batch size 8 -> 16``."""
    if ch.verdict == Verdict.OTHER_WORKLOAD:
        return f"not comparable: {', '.join(s.other_workload)}"
    return ch.verdict


def _moved_phrase(s: SectionDiff) -> str:
    """How far the step of the same code moved between two runs: the doing of the processes
    that measured it (a breakdown's graphs' harnesses: its profiling processes; a compare's
    step: the process that timed its columns' steps)."""
    which = "profiling processes" if s.step_source == StepSource.HARNESS else "step-timing processes"
    return f"{_step_times(s)} ({change_cell(s.step, s)}) between the two runs' {which}, the machine's doing"


def _responsible_phrase(s: SectionDiff, doc: Doc, top: int) -> str:
    """The kernels most responsible, by the labels their rows in the tables below show (a
    flash-attention kernel's whole name runs past 200 characters: on hover in HTML, in the JSON)."""
    ks = s.responsible(VERDICT_KERNELS)
    names = ", ".join(f"{doc.named(doc.code(table_label(s, k, doc, top)), k.name)} {kernel_change(k)} ms "
                      f"({_status_words(k)})" for k in ks)
    return (f"; kernels responsible: {names}" if ks else "") + _calls_phrase(s)


def _status_words(k: KernelDiff) -> str:
    """A kernel's status, and where an extern op's calls differ in number, which: an op with two
    more calls reads slower by their time, not because a call it had got slower."""
    more = k.calls_one_side or k.calls_unpaired
    return f"{k.status}: {more}" if more else k.status


def _calls_phrase(s: SectionDiff) -> str:
    """The graphs the model called another number of times (the step moves with their calls),
    and the work that changed (the step's change is partly the model's)."""
    each = ", ".join(f"{g} {fmt_calls(b)} -> {fmt_calls(h)}" for g, b, h in s.calls_changed)
    return (f"; calls changed: {each}" if each else "") + "".join(f"; {w}" for w in work_changed(s))


def work_changed(s: SectionDiff) -> list[str]:
    """``shapes changed, not the same work: 0-forward aten::addmm #1`` (extern calls whose inputs
    changed size), ``not the same work: 0-forward: 2 inputs more in head (512x512, 512)`` (graphs
    given other inputs, as their saved shapes differ); none where the work is the same."""
    shapes = ", ".join(s.shapes_changed())
    graphs = ", ".join(f"{g}: {how}" for g, how in s.graph_inputs.items())
    return ([f"shapes changed, not the same work: {shapes}"] if shapes else []) + (
        [f"not the same work: {graphs}"] if graphs else [])


def _not_comparable_line(diff: Diff, doc: Doc, threshold_pct: float | None) -> str:
    head = "NOT COMPARABLE" + (f", so the {threshold_pct:g}% gate fails" if threshold_pct is not None else "")
    if why := diff.nothing_compared():
        return f"{doc.strong(head)}: nothing could be compared: {why} - no verdict"
    if diff.other_workload:  # the figures side by side, none judged
        return (f"{doc.strong(head)}: {workload_line(diff.other_workload)}: the figures are shown side by "
                "side, none judged faster or slower | " + " | ".join(_step_phrase(s) for s in diff.sections)
                + "".join(f"; {u.describe()}" for u in diff.unmeasured))
    judged = [_step_phrase(s) for s in diff.sections if not s.unmeasured]
    return (
        f"{doc.strong(head)}: " + "; ".join(u.describe() for u in diff.unmeasured)
        + " - no verdict without them"
        + (" | " + " | ".join(judged) if judged else "")
    )


def _disturbed_phrase(diff: Diff) -> str:
    """A verdict's caveat: a side measured on a busy or slow machine (its warnings say how)."""
    if not diff.disturbed:
        return ""
    sides = " and ".join(diff.disturbed)
    return (f" - but {sides} {'was' if len(diff.disturbed) == 1 else 'were'} measured on a busy or "
            "slow machine (warnings below): measure again, or time both sides in one process "
            "(compare)")


def verdict_line(diff: Diff, doc: Doc, threshold_pct: float | None = None, top: int = DEFAULT_TOP) -> str:
    """The diff's first line; ``top``: the rows of its kernel tables, whose labels it names
    kernels by."""
    status = diff.status()
    if status == Outcome.NOT_COMPARABLE:
        return _not_comparable_line(diff, doc, threshold_pct)
    if status == Outcome.REGRESSION:
        gated = diff.regressions(threshold_pct or 0.0)
        parts = [_step_phrase(s) + _responsible_phrase(s, doc, top) for s in diff.regressions(0.0)]
        head = "REGRESSION"
        if threshold_pct is not None:
            gate = f"the {threshold_pct:g}% gate{_gated_row(diff)}"
            head += f" above {gate}" if gated else f" (below {gate})"
        return f"{doc.strong(head)}: " + " | ".join(parts) + _disturbed_phrase(diff)
    if status == Outcome.SAME_CODE:
        return (f"{doc.strong('SAME CODE')}: base and head compiled the same code for every graph, called as "
                "often at the same sizes: nothing of theirs changed, and no change below is significant; "
                + " | ".join(_moved_phrase(s) for s in diff.sections))
    if status == Outcome.FASTER:
        parts = [_step_phrase(s) + _calls_phrase(s) for s in diff.sections if s.step.faster]
        return f"{doc.strong('FASTER')}: " + " | ".join(parts) + _disturbed_phrase(diff)
    if status == Outcome.INCONCLUSIVE:
        return f"{doc.strong('INCONCLUSIVE')}: too few samples to judge (record more with --repeat)"
    parts = [_step_phrase(s) + _calls_phrase(s) for s in diff.sections]  # the work that changed too
    return f"{doc.strong('NO SIGNIFICANT CHANGE')}: " + " | ".join(parts)
