"""A step called significantly slower on a side measured on a busy or slow machine, where
nothing says the code changed: no verdict. Load from other processes and a slowed machine only
inflate times, so they can make the side they fell on read slower, by an amount no figure of
that side tells; the section is then not comparable (``diff.py``; the gate exits 5, as for a
graph measured on one side only). Where a kernel's code did change (added, removed, or not
shown to compile alike), the verdict stands with its caveat: a real regression measured on a
busy machine still fails the gate. A side that reads faster though disturbed keeps its
verdict: the disturbance worked against it. A compare column's step whose own interleaved rounds
were mostly disturbed is a figure of its quiet moments: whatever its verdict, it is not
comparable (``judged_on_few_rounds``). Pure; no torch."""

from __future__ import annotations

from dataclasses import replace

from .compare import CompareResult, column_disturbances
from .compare_summary import quiet_moments
from .diff_records import ONE_CODE, SectionDiff
from .results import BreakdownResult
from .step import disturbances
from .unmeasured import Unmeasured
from .vocab import Outcome, StepSource, Verdict

Result = BreakdownResult | CompareResult


def code_changed(sections: list[SectionDiff]) -> bool:
    """Whether some kernel of the diff is not shown to be one code on both sides: added,
    removed, or judged on its times (``same code`` and ``calls changed`` are one code)."""
    return any(k.status not in ONE_CODE for s in sections for k in s.kernels)


def code_changed_by_model(sections: list[SectionDiff], head: Result) -> list[bool]:
    """For each section, ``code_changed`` over the sections of its model file: one model's
    compiled columns tell of its eager column too, but in a compare of several model files (the
    merge gate's base and head) one file's new kernels say nothing of another's columns. Two such
    compares beside busy cores had read the unchanged file's column, base:default 9.434 ->
    13.986 ms, as a significant regression, beside the changed file's real one."""
    def model_of(s: SectionDiff) -> str:
        m = head.mode(s.mode) if isinstance(head, CompareResult) else None
        return m.model if m is not None else ""

    models = [model_of(s) for s in sections]
    changed = {name: code_changed([s for s, n in zip(sections, models, strict=True) if n == name])
               for name in set(models)}
    return [changed[name] for name in models]


def slower_where_disturbed(s: SectionDiff, base: Result, head: Result, changed: bool) -> SectionDiff:
    """A step significantly slower on a side whose step figure was measured on a busy or slow
    machine (``step_disturbances_of``), in a diff whose code did not change (``changed``:
    ``code_changed``), is not comparable: load and a slowed machine only inflate times, so they
    can make that side read slower and no figure says by how much. A side that reads faster
    though disturbed keeps its verdict, as does a change of code."""
    if not s.step.significant or changed:
        return s
    side, r = ("head", head) if s.step.slower else ("base", base)
    lines = step_disturbances_of(r, s.mode)
    if not lines:
        return s
    s.step = replace(s.step, verdict=Outcome.NOT_COMPARABLE)
    what = f"the {'step time' if s.step_source == StepSource.MODEL else 'all-graphs time'}"
    s.unmeasured = [*s.unmeasured, Unmeasured(section=s.mode, side=side, what=what, why=lines[0],
                                              disturbed=True)]
    return s


def judged_on_few_rounds(s: SectionDiff, base: Result, head: Result) -> SectionDiff:
    """A compare column's step time where most of its own interleaved rounds were disturbed on
    either side (``compare_summary.quiet_moments``: its blocks' medians above its steady limit)
    is not comparable, whatever its verdict (significant either way, within noise, too few) and
    whatever code changed: the steady rule then keeps that side's quiet moments (the faster
    half's limit), a figure of another kind than the other side's, so neither a change nor the
    absence of one can be read from it. Each such side is named. The sweep's gate judges the
    same pairs so (``sweep_table._mostly_disturbed``): a variant of ``models/mlp.py`` with an
    extra GEMM (0.66x, significant, timed interleaved) read -25.3%, FASTER, against its
    baseline beside 1.8 busy cores, its 15.803 ms the mean of 21 quiet calls with 7 of its 11
    rounds disturbed, where the sweep's gate gave no verdict. Two workloads keep their own
    word (``other workload``): none of their figures is judged anyway."""
    if (s.step.verdict == Verdict.OTHER_WORKLOAD
            or not (isinstance(base, CompareResult) and isinstance(head, CompareResult))):
        return s
    quiet = [(side, why) for side, r in (("base", base), ("head", head))
             if (m := r.mode(s.mode)) is not None and (why := quiet_moments(r, m))]
    if quiet:
        s.step = replace(s.step, verdict=Outcome.NOT_COMPARABLE)
        s.unmeasured = [*s.unmeasured, *(Unmeasured(section=s.mode, side=side, what="a steady step", why=why)
                                         for side, why in quiet)]
    return s


def step_disturbances_of(r: Result, section: str) -> list[str]:
    """What disturbed the measurement a section's step figure comes from on one side: a
    breakdown's graphs; a compare column's interleaved timing, or its own step timing where it
    was not timed interleaved."""
    if not isinstance(r, CompareResult):
        return disturbances(r)
    m = r.mode(section)
    if m is None:
        return []
    if not m.paired_ms:
        return [d for d in column_disturbances(r) if d.startswith(f"{m.label}: ")]
    load = r.interleaved_load()
    return [f"steps timed while {load.describe()}"] if load is not None and load.disturbed else []
