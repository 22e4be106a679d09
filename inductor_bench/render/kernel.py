"""Kernel reports as text (terminal) or markdown: one kernel, the --autotune-top table, and
the kernel-by-kernel matching of a default and a max-autotune breakdown. Return strings."""

from __future__ import annotations

from typing import Any

from ..autotune import KernelReport, Timing, config_label, verdict_sentence
from ..categories import label
from .common import heading, table

DASH = "-"


def _table(rows: list[list[str]], headers: list[str], markdown: bool) -> str:
    return table(rows, headers, markdown=markdown)


def _heading(s: str, markdown: bool) -> str:
    return heading(s, markdown=markdown)


def _num(v: float | None, fmt: str) -> str:
    return DASH if v is None else format(v, fmt)


def _opt(v: int | None) -> str:
    return DASH if v is None else str(v)


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


def _header(r: KernelReport, markdown: bool) -> list[str]:
    k, code = r.kernel, (lambda s: f"`{s}`" if markdown else s)
    dev = r.device.get("name") or "unknown device"
    cap = r.device.get("capability")
    versions = " · ".join(f"{n} {v}" for n, v in r.versions.items())
    peak = (f"{_num(r.peak.gbps, '.0f')} GB/s, {_num(r.peak.tflops, '.0f')} TFLOP/s dense "
            f"bf16/fp16 ({r.peak.source})")
    flop = f"{k.flop:,} FLOP per launch" if k.flop else "no FLOP count"
    lines = [
        f"{code(k.name)}: {label(k.category)} (@{k.heuristic})",
        f"file: {code(k.path)}",
        f"device: {dev}" + (f" (sm {cap[0]}.{cap[1]})" if cap else "")
        + (f" · {versions}" if versions else ""),
        (f"size hints: {_sizes(k.size_hints)} · moves {_bytes(k.num_gb)} per launch "
         f"(Inductor's estimate) · {flop}"),
        f"peak: {peak}",
    ]
    return [ln + "  " if markdown else ln for ln in lines]  # markdown line breaks


def fmt_time(ms: float) -> str:
    """Kernel times span microseconds to milliseconds: 4 significant digits either way."""
    return f"{ms * 1e3:.4g} µs" if ms < 1 else f"{ms:.4g} ms"


def _config(r: KernelReport, t: Timing) -> str:
    return config_label(r.kernel.compile_config) if r.kernel.is_template else config_label(t.config)


def _throughput_headers(r: KernelReport) -> list[str]:
    heads = ["GB/s", "% peak BW"] if r.kernel.num_gb else []
    return heads + (["TFLOP/s", "% peak FLOP/s"] if r.kernel.flop else [])


def _throughput(r: KernelReport, t: Timing) -> list[str]:
    cells = [_num(r.gbps(t), ".1f"), _num(r.pct_of_peak_bw(t), ".1f")] if r.kernel.num_gb else []
    if r.kernel.flop:
        cells += [_num(r.tflops(t), ".2f"), _num(r.pct_of_peak_flops(t), ".1f")]
    return cells


def _resources(t: Timing) -> list[str]:
    return [_opt(t.regs), _opt(t.spills), _opt(t.shared)]


RESOURCE_HEADERS = ["regs", "spills", "shared B"]


def _runs(r: KernelReport, markdown: bool) -> str:
    rows = [[run.mode, str(len(run.space)), str(run.tried), fmt_time(run.timing.ms),
             _spread(run.timing), *_throughput(r, run.timing), *_resources(run.timing)]
            for run in r.runs]
    headers = ["mode", "candidates", "tried", "time (median)", "spread",
               *_throughput_headers(r), *RESOURCE_HEADERS]
    configs = [f"{run.mode} config: {_config(r, run.timing)}" for run in r.runs]
    return _table(rows, headers, markdown) + "\n\n" + "\n".join(configs)


def _all_configs(r: KernelReport, markdown: bool) -> list[str]:
    if not r.all_configs:
        return []
    ran = r.run(r.all_configs_mode or "")
    chosen = config_label(ran.timing.config) if ran else None
    fastest = min(r.all_configs, key=lambda t: t.ms)
    rows = []
    for t in sorted(r.all_configs, key=lambda t: t.ms):
        marks = (("fastest", t is fastest), ("autotuner's pick", config_label(t.config) == chosen))
        rows.append([config_label(t.config), fmt_time(t.ms), _spread(t), *_throughput(r, t),
                     *_resources(t), ", ".join(m for m, on in marks if on)])
    title = (f"Every candidate config ({r.all_configs_mode} space, {len(rows)} compiled, "
             "each timed alone, no coordinate descent)")
    headers = ["config", "time (median)", "spread", *_throughput_headers(r), *RESOURCE_HEADERS, ""]
    return [_heading(title, markdown), _table(rows, headers, markdown)]


def render_kernel(r: KernelReport, *, markdown: bool = False) -> str:
    """The report of one kernel: header, a row per mode, the verdict, every config, notes."""
    reps = r.runs[0].timing.summary.n
    foot = [(f"times: median of {reps} repetitions, each after an L2 flush (CUDA events); "
             "spread: robust sigma (1.4826 x MAD) in % of the median")]
    ch = r.comparison()
    if ch is not None:
        foot.insert(0, verdict_sentence(ch))
    parts = ["\n".join(_header(r, markdown)), _runs(r, markdown), "\n".join(foot)]
    parts += _all_configs(r, markdown)
    if r.notes:
        parts.append("\n".join(f"note: {n}" for n in r.notes))
    return "\n\n".join(parts) + "\n"


# --- breakdown --autotune-top (CUDA) ------------------------------------------------------


def render_autotune_top(rows: list[dict[str, Any]], total: float, *,
                        markdown: bool = False) -> str:
    """Rows from ``kernelbench.autotune_top_cuda``; ``total`` from ``autotune.amdahl_rows``."""
    title = f"Max-autotune re-benchmark of the {len(rows)} most expensive Triton kernels"
    if not rows:
        return _heading(title, markdown) + "\n\nno re-tunable Triton kernel with a file\n"
    table = []
    for r in rows:
        err = r.get("error")
        speedup = r.get("speedup")
        table.append([
            r["graph"], r["kernel"], f"{100 * r['share']:.1f}%",
            fmt_time(r["base_ms"]) if r.get("base_ms") is not None else DASH,
            fmt_time(r["tuned_ms"]) if r.get("tuned_ms") is not None else DASH,
            DASH if speedup is None else f"{speedup:.2f}x",
            f"{r['configs_base']} -> {r['configs_tuned']}" if "configs_base" in r else DASH,
            f"failed: {err}" if err else r.get("verdict", DASH),
            f"{100 * r['bound']:.2f}%",
        ])
    headers = ["graph", "kernel", "share of model", "baseline", "max-autotune", "speedup",
               "configs tried", "verdict", "model time saved at most"]
    footer = (f"Together at most {100 * total:.2f}% of model time (Amdahl: share x "
              "(1 - 1/speedup) per kernel, 0 where max-autotune is not faster).")
    return "\n\n".join([_heading(title, markdown), _table(table, headers, markdown), footer]) + "\n"


# --- CPU route: default vs max-autotune breakdown, kernel by kernel ----------------------


def render_matches(rows: list[dict[str, Any]], *, markdown: bool = False,
                   top: int | None = None) -> str:
    """Rows from ``autotune.match_kernels``: the biggest changes first."""
    title = "Default vs max-autotune, kernel by kernel"
    shown = rows[:top] if top is not None else rows
    table = [[r["graph"], r["base_name"] or DASH, r["tuned_name"] or DASH, r["change"],
              fmt_time(r["base_ms"]) if r["base_name"] else DASH,
              fmt_time(r["tuned_ms"]) if r["tuned_name"] else DASH,
              f"{r['delta_ms']:+.4f}", r["verdict"]] for r in shown]
    headers = ["graph", "default kernel", "max-autotune kernel", "what changed", "default",
               "max-autotune", "delta ms", "verdict"]
    parts = [_heading(title, markdown), _table(table, headers, markdown)]
    if len(shown) < len(rows):
        parts.append(f"({len(rows) - len(shown)} more not shown: smaller changes)")
    return "\n\n".join(parts) + "\n"
