"""Baseline vs max-autotune: the config spaces, the verdict, and what a faster kernel can buy.

Inductor bakes its autotuning switches into each kernel file's ``inductor_meta``, so
``TORCHINDUCTOR_MAX_AUTOTUNE=1 python k.py`` changes nothing. A mode here is the patch the
worker applies to that meta before the heuristic builds the autotuner: the ``baseline``
keeps the file's own switches, ``max-autotune`` turns on what ``mode="max-autotune"`` of the
installed torch turns on (read by the worker from ``list_mode_options``; ``modes.kernel_patch``).
Both switch every autotune cache off, so no ``<hash>.best_config`` pins a config.

The rest is pure arithmetic on measured numbers: the verdict of max-autotune against the
baseline (``stats.judge`` with this module's threshold), the Amdahl bound on what a kernel's
speed-up is worth to the whole model, and kernel matching between a default and a max-autotune
breakdown (the CPU route, where kernels are recompiled, not re-tuned). The kernel report built
from the worker's response is ``kernel_report.py``.

Pure Python; no torch.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .categories import label
from .devices import backend
from .errors import UsageError
from .match import KernelRef
from .match import match_kernels as _match_graph_kernels
from .modes import KernelPatch
from .one_code import RunKernels, one_code
from .results import BreakdownResult, KernelMatch, RetunedKernel
from .stats import Change, compare_samples, interval_x_text, judge
from .vocab import Change as KernelChange
from .vocab import Tuning, Verdict

BASELINE = Tuning.BASELINE
MAX_AUTOTUNE = Tuning.MAX_AUTOTUNE

# No autotune cache may answer for the benchmark: neither the on-disk best config beside
# the kernel file nor a remote cache.
CACHES_OFF: dict[str, Any] = {
    "force_disable_caches": True,
    "autotune_local_cache": False,
    "autotune_remote_cache": False,
}

# Back-to-back timings of one kernel in one process agree to about 1-2 % (clocks, L2 and
# TLB state); a difference below 3 % is not called faster or slower whatever
# the spreads say. Above it, stats.judge also requires the difference to clear the noise.
VERDICT_MIN_REL = 0.03

FASTER = KernelChange.FASTER
SLOWER = KernelChange.SLOWER


def meta_patch(mode: str, tuned: KernelPatch | None = None, *,
               coordinate_descent: bool = True) -> dict[str, Any]:
    """The inductor_meta entries a mode overrides. ``tuned``: what max-autotune sets, from
    the installed torch's mode table (``modes.kernel_patch``); ``coordinate_descent=False``
    for timing each candidate config on its own."""
    if mode == BASELINE:
        patch = dict(CACHES_OFF)
    elif mode == MAX_AUTOTUNE:
        if tuned is None:
            raise UsageError("max-autotune needs the installed torch's mode options "
                             "(torch._inductor.list_mode_options)")
        patch = {**CACHES_OFF, **tuned.meta}
    else:
        raise UsageError(f"unknown autotune mode {mode!r} (known: {', '.join(Tuning.ALL)})")
    if not coordinate_descent:
        patch["coordinate_descent_tuning"] = False
    return patch


def config_label(cfg: dict[str, Any]) -> str:
    """``XBLOCK=1024, num_warps=4, num_stages=1``: block sizes first, as Inductor prints them."""
    if not cfg:
        return "-"
    tail = ("num_warps", "num_stages")
    head = [f"{k}={v}" for k, v in cfg.items() if k not in tail]
    return ", ".join(head + [f"{k}={cfg[k]}" for k in tail if k in cfg])


# --- baseline vs max-autotune ------------------------------------------------------------


def compare_modes(base_samples: list[float], tuned_samples: list[float]) -> Change:
    """Max-autotune (head) against the baseline (base), judged with VERDICT_MIN_REL."""
    return compare_samples(base_samples, tuned_samples, min_rel=VERDICT_MIN_REL)


def verdict(change: Change) -> str:
    """``faster`` / ``slower`` (max-autotune against the baseline) or stats' own verdict."""
    if change.faster:
        return FASTER
    if change.slower:
        return SLOWER
    return change.verdict


def verdict_sentence(change: Change, same: bool = False) -> str:
    """The verdict with the speedup (baseline time / max-autotune time) and the interval it
    rests on, so that a reader sees why; ``same``: max-autotune kept the baseline's config."""
    v = Verdict.SAME_CODE if same else verdict(change)
    pct = abs(change.rel_pct or 0.0)
    ci = change.speedup_ci
    x = f"{change.speedup:.2f}x" + (f" {interval_x_text(ci)}" if ci else "") if change.speedup else ""
    if v == Verdict.SAME_CODE:
        return (f"same code: max-autotune chose the baseline's config, so one kernel was timed twice "
                f"({x} is the two timings', not max-autotune's)")
    if v == FASTER:
        return f"max-autotune is faster: {x} ({pct:.1f}% less time)"
    if v == SLOWER:
        return (f"max-autotune is SLOWER: {x} ({pct:.1f}% more time); the baseline config wins "
                "(autotuning picks by a short benchmark, which can mislead)")
    if v == Verdict.WITHIN_NOISE:
        return (f"no difference: {x}, {pct:.1f}% is within noise (needs {VERDICT_MIN_REL * 100:.0f}% "
                "and the two times' confidence intervals apart)")
    return "too few samples to judge (use more --reps)"


# --- Amdahl ------------------------------------------------------------------------------


def amdahl_bound(share: float, base_ms: float, tuned_ms: float) -> float:
    """The largest fraction of model time that speeding this kernel up can save:
    ``share * (1 - 1/speedup)``, 0 when the tuned kernel is not faster."""
    if base_ms <= 0 or tuned_ms <= 0 or tuned_ms >= base_ms:
        return 0.0
    return share * (1.0 - tuned_ms / base_ms)


def amdahl_rows(rows: list[RetunedKernel]) -> tuple[list[RetunedKernel], float]:
    """The rows with ``speedup`` and ``bound`` filled in, and the sum of the bounds.

    Rows whose tuned time is missing (a failed re-benchmark) get no speedup and bound 0, as do
    rows judged anything but faster: a tuned time 1% lower within noise is no gain to bound.
    """
    out = []
    for r in rows:
        base, tuned = r.base_ms or 0.0, r.tuned_ms or 0.0
        speedup = base / tuned if base > 0 and tuned > 0 else None
        bound = amdahl_bound(r.share, base, tuned) if r.verdict == FASTER else 0.0
        out.append(dataclasses.replace(r, speedup=speedup, bound=bound))
    return out, sum(r.bound for r in out)


# --- CPU route: match kernels of a default and a max-autotune breakdown -----------------


def _what_changed(b_name: str, b_cat: str, t_name: str, t_cat: str) -> str:
    parts = []
    if b_cat != t_cat:  # as the report's tables name them
        parts.append(f"category {label(b_cat)} -> {label(t_cat)}")
    if b_name != t_name:
        parts.append(f"renamed from {b_name}")
    return "; ".join(parts) or KernelChange.SAME_KERNEL


def match_kernels(base: BreakdownResult, tuned: BreakdownResult) -> list[KernelMatch]:
    """Kernel by kernel, a default breakdown (base) against a max-autotune one (tuned).

    Kernels pair up as ``match.match_kernels`` pairs them. Each row says what changed, how
    it was matched, and the noise verdict, judged with the device's floor for a significant
    change (``Backend.min_rel_change``, as ``diff`` judges a kernel of these two runs). Biggest
    absolute change first.
    """
    pairs, removed, added = _match_graph_kernels(base.measured(), tuned.measured())
    min_rel = backend(base.device).min_rel_change
    rows = [_matched(b, t, how, min_rel) for b, t, how in pairs]
    rows += [_unmatched(r, KernelChange.REMOVED) for r in removed]
    rows += [_unmatched(r, KernelChange.ADDED) for r in added]
    rows.sort(key=lambda r: (-abs(r.delta_ms), r.graph, r.base_name or r.tuned_name))
    return rows


def same_code_rows(rows: list[KernelMatch], base: BreakdownResult, tuned: BreakdownResult,
                   base_modules: dict[str, str], tuned_modules: dict[str, str]) -> list[KernelMatch]:
    """The rows whose two kernels are one code (``core/one_code.py``; graph id -> module text),
    judged ``same code`` (``Verdict.SAME_CODE``): their two times come from two processes, one
    after the other, and differ by those alone: neither is faster."""
    b, t = RunKernels(base, base_modules), RunKernels(tuned, tuned_modules)
    return [dataclasses.replace(row, verdict=Verdict.SAME_CODE)
            if row.base_name and row.tuned_name and row.base_category == row.tuned_category
            and one_code(b, (row.graph, row.base_name), t, (row.graph, row.tuned_name)) else row
            for row in rows]


def _matched(b: KernelRef, t: KernelRef, how: str, min_rel: float) -> KernelMatch:
    bk, tk = b.kernel, t.kernel
    ch = judge(b.graph.summary(bk.samples_ms, bk.ms), t.graph.summary(tk.samples_ms, tk.ms), min_rel)
    return KernelMatch(
        graph=t.graph.id, base_name=bk.name, tuned_name=tk.name, base_category=bk.category,
        tuned_category=tk.category, aten_ops=list(tk.aten_ops or bk.aten_ops),
        base_ms=ch.base.ms, tuned_ms=ch.head.ms, delta_ms=ch.delta_ms, matched_by=how,
        change=_what_changed(bk.name, bk.category, tk.name, tk.category), verdict=verdict(ch),
    )


def _unmatched(r: KernelRef, side: str) -> KernelMatch:
    k, removed = r.kernel, side == KernelChange.REMOVED
    ms = r.graph.summary(k.samples_ms, k.ms).ms
    return KernelMatch(
        graph=r.graph.id, base_name=k.name if removed else None,
        tuned_name=None if removed else k.name, base_category=k.category if removed else None,
        tuned_category=None if removed else k.category, aten_ops=list(k.aten_ops),
        base_ms=ms if removed else 0.0, tuned_ms=0.0 if removed else ms,
        delta_ms=-ms if removed else ms, matched_by=None, change=side, verdict=side,
    )
