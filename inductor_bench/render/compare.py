"""A ``CompareResult`` as text or markdown: a verdict line, then one table whose columns are
the modes and whose rows are compile time, step time, speedups, memory, kernels, busy % and
the share of kernel time per category. Returns strings."""

from __future__ import annotations

import math

from tabulate import tabulate

from ..categories import label
from ..categories import order as category_order
from ..compare import DEFAULT, EAGER, CompareResult, ModeResult
from ..stats import Change, compare_samples, default_min_rel
from .diff import fmt_bytes, fmt_ms, fmt_seconds, fmt_spread


def _speedup_cell(result: CompareResult, mode: ModeResult, over: str) -> str:
    ref = result.mode(over)
    if mode.mode == over:
        return "1.00x" if mode.ok else "-"
    if not (ref and ref.ok and mode.ok and ref.step_samples_ms and mode.step_samples_ms):
        return "-"
    ch = _judge(result, ref, mode)
    return f"{ch.speedup:.2f}x ({ch.verdict})" if ch.speedup is not None else "-"


def _judge(result: CompareResult, ref: ModeResult, mode: ModeResult) -> Change:
    """ref -> mode step time, with the significance floor of the result's device."""
    return compare_samples(
        ref.step_samples_ms, mode.step_samples_ms, min_rel=default_min_rel(result.device)
    )


def _step_cell(m: ModeResult) -> str:
    if not m.step_samples_ms:
        return "-"
    s = m.step()
    return f"{fmt_ms(s.median)} {fmt_spread(s.spread_pct)}".strip()


def _categories(result: CompareResult) -> list[str]:
    cats = {c for m in result.modes if m.breakdown for c in m.breakdown.totals().categories}
    return sorted(cats, key=lambda c: (category_order(c), c))


def _share(m: ModeResult, cat: str) -> str:
    if not m.breakdown:
        return "-"
    t = m.breakdown.totals()
    return f"{100 * t.categories.get(cat, 0.0) / t.kernel_ms:.1f}%" if t.kernel_ms > 0 else "-"


def _memory_label(result: CompareResult) -> str:
    kinds = {m.peak_memory_kind for m in result.modes if m.peak_memory_kind}
    return f"peak memory ({', '.join(sorted(kinds))})" if kinds else "peak memory"


def _rows(result: CompareResult) -> list[list[str]]:
    ms = result.modes
    rows = [
        ["status"] + [m.status for m in ms],
        ["compile (first call)"] + [fmt_seconds(m.compile_s) if m.ok else "-" for m in ms],
        ["step time, ms (median ± spread)"] + [_step_cell(m) for m in ms],
        ["samples"] + [str(len(m.step_samples_ms)) if m.ok else "-" for m in ms],
    ]
    if result.mode(EAGER):
        rows.append(["speedup vs eager"] + [_speedup_cell(result, m, EAGER) for m in ms])
    if result.mode(DEFAULT):
        rows.append(["speedup vs default"] + [_speedup_cell(result, m, DEFAULT) for m in ms])
    rows.append([_memory_label(result)] + [fmt_bytes(m.peak_memory_bytes) for m in ms])
    rows.append(["kernels"] + [_opt(m.kernel_count()) for m in ms])
    rows.append(["busy %"] + [_busy(m) for m in ms])
    rows.append(
        ["graphs"] + [_opt(m.breakdown.totals().graphs if m.breakdown else None) for m in ms]
    )
    for cat in _categories(result):
        rows.append([f"% {label(cat)}"] + [_share(m, cat) for m in ms])
    return rows


def _opt(x: int | None) -> str:
    return "-" if x is None else str(x)


def _busy(m: ModeResult) -> str:
    return f"{m.breakdown.totals().busy_pct:.1f}%" if m.breakdown else "-"


# ---- the verdict ----------------------------------------------------------------------------


def _fastest(result: CompareResult) -> ModeResult | None:
    timed = [m for m in result.modes if m.ok and m.step_samples_ms]
    return min(timed, key=lambda m: m.step().median) if timed else None


def _versus(result: CompareResult, best: ModeResult, other: str) -> str | None:
    ref = result.mode(other)
    if ref is None or ref is best or not (ref.ok and ref.step_samples_ms):
        return None
    ch = _judge(result, ref, best)
    text = f"{ch.speedup:.2f}x over {other} ({ch.verdict})"
    payback = _payback_steps(ref, best, ch)
    if payback is not None:
        text += f", its extra compile time pays back after {payback:,} steps"
    return text


def _payback_steps(ref: ModeResult, best: ModeResult, ch: Change) -> int | None:
    if not ch.faster or ref.compile_s is None or best.compile_s is None:
        return None
    extra_ms = 1e3 * (best.compile_s - ref.compile_s)
    saved_ms = -ch.delta_ms
    if extra_ms <= 0 or saved_ms <= 0:
        return None
    return math.ceil(extra_ms / saved_ms)


def verdict_line(result: CompareResult, markdown: bool = False) -> str:
    b = "**" if markdown else ""
    best = _fastest(result)
    if best is None:
        return f"{b}NO MODE RAN{b}: " + "; ".join(result.errors or ["nothing was measured"])
    parts = [_versus(result, best, EAGER), _versus(result, best, DEFAULT)]
    detail = "; ".join(p for p in parts if p)
    head = f"{b}Fastest steady state: {best.mode}{b} {fmt_ms(best.step().median)} ms"
    return head + (f" ({detail})" if detail else "")


# ---- documents ------------------------------------------------------------------------------


def _title(result: CompareResult) -> str:
    step = "train step (forward + backward)" if result.train else "inference"
    dtype = result.dtype + (" autocast" if result.autocast else "")
    batch = f", batch {result.batch_size}" if result.batch_size else ""
    where = result.device_name or result.device
    return f"{result.model}: {step}, {dtype}{batch}, on {where}"


def _notes(result: CompareResult) -> list[str]:
    notes = [f"{m.mode}: {m.status}: {m.reason}" for m in result.modes if m.reason]
    notes += [
        "% rows: share of kernel time per category, from each mode's breakdown",
        (
            "step time = the real model call, first call excluded; spread = robust sigma "
            "(1.4826 x MAD) in % of the median; speedups say whether the difference is "
            f"significant (at least {100 * default_min_rel(result.device):g}% and clear of "
            "the spread) or within noise"
        ),
    ]
    return notes


def render_compare(result: CompareResult, markdown: bool = False) -> str:
    headers = [""] + [m.mode for m in result.modes]
    fmt = "github" if markdown else "simple"
    ran = any(m.ok for m in result.modes)  # with nothing measured the notes say it all
    table = tabulate(_rows(result), headers, tablefmt=fmt, disable_numparse=True) if ran else ""
    if markdown:
        out = [verdict_line(result, True), "", f"`inductor-bench compare` {_title(result)}", ""]
        out += ([table, ""] if ran else []) + [f"<sub>{n}</sub><br>" for n in _notes(result)]
    else:
        out = [verdict_line(result), "", f"inductor-bench compare: {_title(result)}", ""]
        out += ([table, ""] if ran else []) + _notes(result)
    return "\n".join(out) + "\n"
