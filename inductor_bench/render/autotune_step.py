"""The step line of ``breakdown --autotune-top``'s max-autotune recompile (CPU): both real
steps timed interleaved in one process (the timing worker of ``compare``), judged round by
round, and which rounds the verdict rests on."""

from __future__ import annotations

from ..core.load import Load
from ..core.results import Recompile
from ..core.vocab import CompileMode, Verdict
from . import format as fmt
from .format import rounds_run


def step_change(a: Recompile, base_mode: str) -> str:
    """Both real steps timed interleaved in one process, with the verdict on them round by
    round; else the two runs' graph walls, unjudged, and why."""
    base, tuned = a.base_step_ms, a.tuned_step_ms
    ch = a.step_change()
    if ch is None:
        speed = f"{base / tuned:.2f}x" if tuned > 0 else "n/a"
        same = ("; every kernel the same code on both sides: the two processes differ, not the kernels"
                if a.rows and all(r.verdict == Verdict.SAME_CODE for r in a.rows) else "")
        return f"{base:.3f} ms -> {tuned:.3f} ms ({speed}; {a.step_note or 'not timed interleaved'}{same})"
    ci = ch.speedup_ci
    x = fmt.speedup_x(ch) + (f" {fmt.interval_x(ci, ch.min_rel)}" if ci else "") if ch.speedup else "n/a"
    rounds = ch.paired.rounds if ch.paired else 0
    # the two means pool every round; the speedup is the median of the rounds' own ratios, which
    # a drift of the machine between rounds does not move (a 0.567 -> 0.623 ms pair beside 0.97x)
    load = Load.from_dict(a.step_load)
    warn = (f"; WARNING: timed while {load.describe()}: both steps may be inflated, each its own way"
            if load is not None and load.disturbed else "")
    return (f"{base:.3f} ms -> {tuned:.3f} ms (each side's steady mean over all its calls); {x} "
            f"round by round ({ch.verdict}: the median of {rounds} rounds' ratios, both timed "
            f"interleaved in one process{_sat_out(a, base_mode)}{warn})")


def _sat_out(a: Recompile, base_mode: str) -> str:
    """Where one side stopped before the other (its call limit, its budget), the rounds the
    ratios are of, of all the rounds run, and why: the timing's progress line counts them all."""
    sides = [(base_mode, a.base_paired_ms), (CompileMode.MAX_AUTOTUNE, a.tuned_paired_ms)]
    ran = [rounds_run(blocks) for _, blocks in sides]
    both = sum(1 for b, t in zip(a.base_paired_ms, a.tuned_paired_ms, strict=False) if b and t)
    if both >= max(ran):
        return ""
    stopped = list(a.step_stopped) + [None] * len(sides)
    why = "; ".join(f"{label} stopped after {n}{fmt.STOPPED_WORDS.get(stopped[i] or '', '')}"
                    for i, ((label, _), n) in enumerate(zip(sides, ran, strict=True)) if n < max(ran))
    return f"; {both} of {max(ran)} rounds, the ones both sides ran: {why}, and sat out the rest"
