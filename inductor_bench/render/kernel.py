"""Kernel reports: one kernel (``inductor-bench kernel``), the ``--autotune-top`` table, and
the kernel-by-kernel matching of a default and a max-autotune breakdown."""

from __future__ import annotations

from typing import Any

from ..core.autotune import config_label, verdict_sentence
from ..core.categories import label
from ..core.kernel_report import KernelReport, Timing
from ..core.results import KernelMatch, RetunedKernel
from ..core.vocab import Verdict
from . import charts_compare as charts
from .doc import TEXT, Doc, new_doc
from .format import DASH, duration, ms_between, ms_precise, number, optional, signed_ms


def _spread(t: Timing) -> str:
    pct = t.summary.spread_pct
    return DASH if pct is None else f"±{pct:.1f}%"


def _bytes(gb: float | None) -> str:
    if not gb:
        return DASH
    return f"{gb * 1e3:.3f} MB" if gb < 1 else f"{gb:.3f} GB"


def _sizes(size_hints: Any) -> str:
    if isinstance(size_hints, dict):
        return ", ".join(f"{k}={v}" for k, v in size_hints.items())
    if isinstance(size_hints, (list, tuple)):
        return " x ".join(str(v) for v in size_hints)
    return DASH


def _header(r: KernelReport, doc: Doc) -> list[str]:
    k, code = r.kernel, doc.code
    dev = r.device.get("name") or "unknown device"
    cap = r.device.get("capability")
    versions = " · ".join(f"{n} {v}" for n, v in r.versions.items())
    flop = f"{k.flop:,} FLOP per launch" if k.flop else "no FLOP count"
    lines = [
        f"{code(k.name)}: {label(k.category)} ({code('@' + k.heuristic)})",
        f"file: {doc.link(code(k.path), k.path)}",
        f"device: {dev}" + (f" (sm {cap[0]}.{cap[1]})" if cap else "")
        + (f" · {versions}" if versions else ""),
        (f"size hints: {_sizes(k.size_hints)} · moves {_bytes(k.num_gb)} per launch "
         f"(Inductor's estimate) · {flop}"),
        f"peak: {_peak(r)}",
    ]
    if r.tuning is not None:
        ignored = r.tuning.ignored
        lines.append(r.tuning.describe()
                     + (f" (not for one kernel: {', '.join(ignored)})" if ignored else ""))
    return lines


def _peak(r: KernelReport) -> str:
    """Bandwidth, and for a kernel that counts its FLOPs the peak of its compute type."""
    text = f"{number(r.peak.gbps, '.0f')} GB/s"
    if r.kernel.flop:
        compute = r.kernel.compute_type
        text += (f", {number(r.peak_tflops, '.1f')} TFLOP/s dense {compute} (the kernel's "
                 "compute type)" if compute else ", no TFLOP/s peak for the kernel's input types")
    return f"{text} ({r.peak.source})"


def _config(r: KernelReport, t: Timing) -> str:
    return config_label(r.kernel.compile_config) if r.kernel.is_template else config_label(t.config)


def _throughput_headers(r: KernelReport) -> list[str]:
    heads = ["GB/s", "% peak BW"] if r.kernel.num_gb else []
    return heads + (["TFLOP/s", "% peak FLOP/s"] if r.kernel.flop else [])


def _throughput(r: KernelReport, t: Timing) -> list[str]:
    cells = [number(r.gbps(t), ".1f"), number(r.pct_of_peak_bw(t), ".1f")] if r.kernel.num_gb else []
    if r.kernel.flop:
        cells += [number(r.tflops(t), ".2f"), number(r.pct_of_peak_flops(t), ".1f")]
    return cells


def _resources(t: Timing) -> list[str]:
    return [optional(t.regs), optional(t.spills), optional(t.shared)]


RESOURCE_HEADERS = ["regs", "spills", "shared B"]


def _runs(r: KernelReport, doc: Doc) -> None:
    rows = [[run.mode, str(len(run.space)), str(run.tried), duration(run.timing.ms),
             _spread(run.timing), *_throughput(r, run.timing), *_resources(run.timing)]
            for run in r.runs]
    headers = ["mode", "candidates", "tried", "time", "spread",
               *_throughput_headers(r), *RESOURCE_HEADERS]
    doc.table(rows, headers)
    doc.paragraph(*(f"{run.mode} config: {_config(r, run.timing)}" for run in r.runs))
    doc.chart(charts.kernel_runs(r))


def _all_configs(r: KernelReport, doc: Doc) -> None:
    if not r.all_configs:
        return
    ran = r.run(r.all_configs_mode or "")
    chosen = config_label(ran.timing.config) if ran else None
    fastest = min(r.all_configs, key=lambda t: t.ms)
    rows = []
    for t in sorted(r.all_configs, key=lambda t: t.ms):
        marks = (("fastest", t is fastest), ("autotuner's pick", config_label(t.config) == chosen))
        rows.append([config_label(t.config), duration(t.ms), _spread(t), *_throughput(r, t),
                     *_resources(t), ", ".join(m for m, on in marks if on)])
    title = (f"Every candidate config ({r.all_configs_mode} space, {len(rows)} compiled, "
             "each timed alone, no coordinate descent)")
    headers = ["config", "time", "spread", *_throughput_headers(r), *RESOURCE_HEADERS, "mark"]
    doc.heading(title)
    # a narrow terminal leaves out the marks (the rows run fastest first; the pick is named above)
    doc.table(rows, headers, optional=("mark", "shared B"))
    lost = [f"{t.summary.left_out} of {config_label(t.config)}'s {len(t.samples_ms)}"
            for t in sorted(r.all_configs, key=lambda t: t.ms) if t.summary.left_out]
    if lost:  # a config's time is the mean of the rest, as each mode's
        doc.paragraph("repetitions left out as disturbed, far slower than the median "
                      f"(docs/statistics.md): {'; '.join(lost)}")
    doc.chart(charts.kernel_configs(r))


def _left_out(r: KernelReport) -> str:
    """How many repetitions of each mode the statistics policy left out: ``none``, ``7``, or
    ``7 of baseline's, none of max-autotune's``."""
    counts = [(run.mode, run.timing.summary.left_out or "none") for run in r.runs]
    if len(counts) == 1 or all(n == "none" for _, n in counts):
        return str(counts[0][1])
    return ", ".join(f"{n} of {mode}'s" for mode, n in counts)


def render_kernel(r: KernelReport, fmt_name: str = TEXT) -> str:
    """The report of one kernel: header, a row per mode, the verdict, every config, notes."""
    doc = new_doc(fmt_name)
    reps = max(len(run.timing.samples_ms) for run in r.runs)  # every repetition run, not the kept
    foot = [(f"times: mean of the steady ones of {reps} repetitions, each after an L2 flush (CUDA "
             "events); left out as disturbed, far slower than the median (docs/statistics.md): "
             f"{_left_out(r)}; spread: robust sigma (1.4826 x MAD; where over half the repetitions "
             "are equal, 1.2533 x their mean absolute deviation from the median) in % of the time")]
    ch = r.comparison()
    if ch is not None:
        foot.insert(0, verdict_sentence(ch, r.same_config()))
    doc.lines(*_header(r, doc))
    _runs(r, doc)
    doc.paragraph(*foot)
    _all_configs(r, doc)
    if r.notes:
        doc.paragraph(*(f"note: {n}" for n in r.notes))
    return doc.render()


# --- breakdown --autotune-top: re-tuned Triton kernels ------------------------------------


def render_retuning(doc: Doc, rows: list[RetunedKernel], total: float) -> None:
    """The rows of ``kernelbench.autotune_top_kernels``; ``total``: the sum of their bounds."""
    tried = sum(1 for r in rows if not r.skipped)
    doc.heading(f"Max-autotune re-benchmark of the {tried} most expensive Triton kernels")
    if not rows:
        doc.paragraph("no re-tunable Triton kernel with a file")
        return
    headers = ["graph", "kernel", "share of model", "baseline ms", "max-autotune ms", "speedup",
               "configs tried", "verdict", "model time saved at most"]
    doc.table([_retuned_row(r) for r in rows], headers,
              optional=("configs tried", "share of model", "speedup"))
    doc.paragraph(f"Together at most {100 * total:.2f}% of model time (Amdahl: share x "
                  "(1 - 1/speedup) per kernel, 0 where max-autotune is not faster).")


def _retuned_row(r: RetunedKernel) -> list[str]:
    return [
        r.graph, r.kernel, f"{100 * r.share:.1f}%",
        ms_precise(r.base_ms), ms_precise(r.tuned_ms),  # ms, as every table of a breakdown
        DASH if r.speedup is None else f"{r.speedup:.2f}x",
        f"{r.configs_base} -> {r.configs_tuned}" if r.configs_base is not None else DASH,
        f"skipped: {r.skipped}" if r.skipped else f"failed: {r.error}" if r.error else (r.verdict or DASH),
        f"{100 * r.bound:.2f}%",
    ]


# --- breakdown --autotune-top on CPU: default vs max-autotune, kernel by kernel ----------


def _delta(r: KernelMatch) -> str:
    """Max-autotune - default as the two figures beside it read; a kernel on one side alone
    (one figure shown), exact."""
    return ms_between(r.base_ms, r.tuned_ms) if r.base_name and r.tuned_name else signed_ms(r.delta_ms)


def render_matches(doc: Doc, rows: list[KernelMatch], *, top: int | None = None) -> None:
    """Rows of ``autotune.match_kernels``: the biggest changes first, then the kernels of one
    code on both sides (their deltas are the two processes'), ``top`` of them shown."""
    rows = ([r for r in rows if r.verdict != Verdict.SAME_CODE]
            + [r for r in rows if r.verdict == Verdict.SAME_CODE])
    shown = rows[:top] if top is not None else rows
    table = [[r.graph, r.base_name or DASH, r.tuned_name or DASH, r.change,
              ms_precise(r.base_ms) if r.base_name else DASH,  # ms, as every table of a breakdown
              ms_precise(r.tuned_ms) if r.tuned_name else DASH,
              _delta(r), r.verdict] for r in shown]
    headers = ["graph", "default kernel", "max-autotune kernel", "what changed", "default ms",
               "max-autotune ms", "delta ms", "verdict"]
    doc.heading("Default vs max-autotune, kernel by kernel")
    doc.table(table, headers, optional=("what changed", "delta ms"))  # delta: max-autotune - default
    hidden = rows[len(shown):]
    if hidden:
        same = sum(1 for r in hidden if r.verdict == Verdict.SAME_CODE)
        changed = len(hidden) - same
        why = "smaller changes" if not same else ", ".join(
            part for n, part in ((changed, f"{changed} smaller change{'s' * (changed > 1)}"),
                                 (same, f"{same} the same code on both sides")) if n)
        doc.paragraph(f"({len(hidden)} more not shown: {why})")
    if any(r.verdict == Verdict.SAME_CODE for r in shown):
        doc.paragraph("same code: the two kernels are one code (one source; an extern op called as often on "
                      "the same bytes and FLOPs), timed in two processes one after the other: what differs "
                      "is the processes, not max-autotune")
