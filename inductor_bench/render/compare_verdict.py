"""A comparison's verdict lines: the headline (the fastest column by the rounds' ratios, or that
no mode is faster than the reference beyond noise), the later model files against the first, the
merge gate. Returns strings."""

from __future__ import annotations

from ..core.compare import (
    DEFAULT,
    EAGER,
    CompareResult,
    ModeResult,
    fastest,
    judge,
    payback_steps,
    timed,
    too_disturbed,
    unranked,
)
from ..core.compare_gate import against_first, not_measured, regressions
from ..core.compare_summary import candidates, few_steady, graphs_unmeasured, noise_only, reference
from ..core.stats import MIN_SAMPLES, TOO_FEW, Change
from .doc import Doc
from .format import interval_x, ms_precise, speedup_x


def same_model(result: CompareResult, m: ModeResult, mode: str) -> ModeResult | None:
    """``m``'s model in another mode."""
    return result.mode(f"{m.model}:{mode}" if m.model else mode)


def first_model(result: CompareResult, m: ModeResult) -> ModeResult | None:
    """The first model in ``m``'s mode (the base of a comparison of model files)."""
    return result.mode(f"{result.models[0]}:{m.mode}") if result.models else None


# ---- the verdict ----------------------------------------------------------------------------


def _versus(result: CompareResult, best: ModeResult, ref: ModeResult | None, other: str) -> str | None:
    if ref is None or ref is best or not timed(ref):
        return None
    if gap := graphs_unmeasured(result, ref, best):
        return f"not comparable with {other}: {gap}"
    ch, why = judge(result, ref, best), too_disturbed(result, ref, best)
    if ch.verdict == TOO_FEW or why:  # no figure to head a report with
        return f"no speedup over {other}: {why}" if why else f"too few samples to judge it against {other}"
    ci = interval_x(ch.speedup_ci, ch.min_rel) if min(ch.base.n, ch.head.n) >= MIN_SAMPLES else ""
    if ci and (few := few_steady(result, ref, best)):
        ci = f"[{few}]"
    text = f"{speedup_x(ch)} {ci} over {other} ({ch.verdict})".replace("  ", " ")
    payback = payback_steps(ref, best, ch)
    if payback is not None:
        text += f", its extra compile time pays back after {payback:,} steps"
    return text


def _model_verdict(base: ModeResult, m: ModeResult, ch: Change) -> str:
    """``mlp_slow25 against mlp, default: 0.80x [0.78x-0.81x] (significant, slower)``."""
    ci = interval_x(ch.speedup_ci, ch.min_rel) if ch.verdict != TOO_FEW else ""
    how = ", slower" if ch.slower else ", faster" if ch.faster else ""
    text = f"{m.model} against {base.model}, {m.mode}: {speedup_x(ch)} {ci} ({ch.verdict}{how})"
    return text.replace("  ", " ")


def model_verdicts(result: CompareResult) -> list[str]:
    """With several model files: each later model against the first, mode by mode; the
    columns that cannot be judged say why."""
    judged = [_model_verdict(b, m, ch) for b, m, ch in against_first(result)]
    return judged + [f"not comparable: {u.describe()}" for u in not_measured(result)]


def gate_line(result: CompareResult, threshold_pct: float, doc: Doc) -> str:
    """The merge gate's verdict on the later models against the first."""
    bad = regressions(result, threshold_pct)
    if bad:
        return doc.strong(f"REGRESSION above the {threshold_pct:g}% gate") + ": " + "; ".join(
            _model_verdict(b, m, ch) for b, m, ch in bad
        )
    gaps = not_measured(result)
    if gaps:
        return doc.strong(f"NOT COMPARABLE, so the {threshold_pct:g}% gate fails") + ": " + "; ".join(
            u.describe() for u in gaps
        ) + " - no verdict without them"
    return doc.strong(f"NO REGRESSION above the {threshold_pct:g}% gate")


def verdict_line(result: CompareResult, doc: Doc) -> str:
    """The fastest column by the rounds' ratios and its speedups; led by ``No mode is faster than
    eager beyond noise`` where none is significantly faster than the reference. Where a column not
    ranked (``unranked``) read faster, the headline's is the fastest *ranked* steady state, and
    that column is named after it with why it is not ranked."""
    best = fastest(result)
    if best is None:
        return doc.strong("NO MODE COMPLETED") + ": " + "; ".join(result.errors or ["nothing was measured"])
    base = reference(result)
    refs = [(same_model(result, best, o), o) for o in (EAGER, DEFAULT)]  # and the base model's column:
    refs += [(first_model(result, best), result.models[0])] if len(result.models) > 1 else []
    refs += [(base, base.label)] if base is not None and all(r is not base for r, _ in refs) else []
    detail = "; ".join(p for p in (_versus(result, best, ref, over) for ref, over in refs) if p)
    figure = f" {ms_precise(result.step(best).ms)} ms" + (f" ({detail})" if detail else "")
    faster_unranked = _faster_unranked(result, best)
    rest = "".join(f"; {t}" for t in _read_lower(result, best) + faster_unranked)
    # a column read faster but not ranked: the headline's is the fastest of those ranked, not of all
    fastest_words = "fastest ranked steady state" if faster_unranked else "fastest steady state"
    if base is not None and noise_only(result, best):
        return doc.strong(f"No mode is faster than {base.label} beyond noise") + (
            f": {fastest_words} {best.label}{figure}{rest}")
    return doc.strong(f"{fastest_words.capitalize()}: {best.label}") + figure + rest


def _read_lower(result: CompareResult, best: ModeResult) -> list[str]:
    """The ranked columns whose step time reads lower than the headline's while the rounds'
    ratios put them behind it: named, with the ratio the headline was chosen by."""
    ms, out = result.step(best).ms, []
    for m in candidates(result):
        ch = judge(result, best, m)
        if m is not best and result.step(m).ms < ms and ch.speedup is not None:
            ci = interval_x(ch.speedup_ci, ch.min_rel) if ch.verdict != TOO_FEW else ""
            out.append(f"{m.label} read {ms_precise(result.step(m).ms)} ms but {speedup_x(ch)} {ci} over "
                       f"{best.label} round by round ({ch.verdict})".replace("  ", " "))
    return out


def _faster_unranked(result: CompareResult, best: ModeResult) -> list[str]:
    """The columns read faster than the headline's whose figure is no headline: named, with why."""
    ms = result.step(best).ms
    return [f"{m.label} read {ms_precise(result.step(m).ms)} ms on {why}" for m in result.modes
            if timed(m) and m is not best and result.step(m).ms < ms and (why := unranked(result, m))]
