"""The checks of ``scripts/gpu_validate.py``, one function per check, and the independent
measurements they compare the tool with.

A check function takes the driver's context and one breakdown run (``Run``: its label, run
directory and ``breakdown.json`` as a plain dict) and returns ``Check`` records: PASS or FAIL
with the numbers, or SKIPPED with the reason. To add a check, write one such function and
name it in the driver's ``STEPS`` and give it a cap in a part
(``scripts/gpu_validate_parts.py``).

The measurements run in their own processes, as ``python scripts/gpu_validate_checks.py
MEASUREMENT ... --out FILE.json``, and never import ``inductor_bench``: they load what the
tool wrote (a compiled module, a kernel file, the model file) with plain torch and triton,
and measure it their own way:

- ``graph-time``: the compiled module's ``get_args()`` / ``call()`` under a plain
  ``torch.profiler`` session, the durations of the device events summed per call
  (on CPU, for the dry run only: the top-level CPU ops, as tests/test_e2e_breakdown.py does);
- ``do-bench``: ``triton.testing.do_bench`` of a kernel file's own ``call(get_args())``;
- ``step-time``: the model file's ``make_workload()``, compiled, one step (inference, or
  forward + backward of the sum of the outputs) timed with CUDA events.

This file imports nothing outside the standard library at module level.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PASS, FAIL, SKIPPED = "PASS", "FAIL", "SKIPPED"


@dataclass(frozen=True)
class Tolerance:
    """``|tool - reference| <= rel * reference + abs_ms``."""

    rel: float
    abs_ms: float

    def allows(self, tool: float, ref: float) -> bool:
        return abs(tool - ref) <= self.rel * abs(ref) + self.abs_ms

    def __str__(self) -> str:
        return f"±{self.rel * 100:g}% + {self.abs_ms * 1e3:g} µs"


# Why each tolerance is what it is (docs/gpu-validation-method.md says the same at length):
# Graph kernel time, tool vs a plain profiler session: both sum CUPTI kernel durations of
# the same compiled module, with the same cached kernels and configs, in two processes; what
# differs is GPU clocks and run-to-run spread. 10%, as tests/test_gpu_breakdown.py.
GRAPH_TIME = Tolerance(0.10, 0.005)
# A kernel's time in the breakdown (CUPTI duration inside its graph, the data often still in
# L2) vs do_bench (CUDA events around one launch after a 256 MB L2 flush): the events add
# one to three microseconds of gap around a launch, and cold L2 slows memory-bound kernels.
# The top kernels of the small example models run for microseconds, so an absolute term.
KERNEL_IN_GRAPH = Tolerance(0.20, 0.003)
# `inductor-bench kernel` times the same way as do_bench (L2 flush, CUDA events around each
# call, median): only run-to-run spread and the config each autotuner picked differ.
KERNEL_COMMAND = Tolerance(0.10, 0.001)
# The tool's step samples are host time around one step plus a synchronize (compile worker);
# CUDA events around the same step exclude the synchronize's return (~10-30 µs) and run in
# another process. 15% + 50 µs.
STEP_TIME = Tolerance(0.15, 0.05)
BUSY_MAX_PCT = 100.0 + 1e-6  # busy = union of intervals / wall: never above 100%

# Triton categories whose kernel files carry a get_args()/call() harness.
HARNESS_CATEGORIES = (
    "triton_pointwise",
    "triton_reduction",
    "triton_persistent_reduction",
    "triton_split_scan",
    "triton_template",
)


@dataclass
class Check:
    name: str
    status: str  # PASS | FAIL | SKIPPED
    numbers: str
    data: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        return f"{self.status} {self.name}: {self.numbers}"


@dataclass
class Run:
    """One breakdown (or compare) run of the validation."""

    label: str  # e.g. mlp-train-default
    model: Path
    train: bool
    mode: str
    dir: Path
    rc: int | None = None
    seconds: float = 0.0
    bd: dict[str, Any] | None = None  # breakdown.json, read as plain JSON
    cli_error: str = ""  # the CLI's last stderr line when it failed
    cmd: list[str] = field(default_factory=list)  # the command line, for the report


class MeasureError(Exception):
    """An independent measurement failed (its log says why)."""


# -- reading breakdown.json defensively ---------------------------------------------------


def num(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def graphs(bd: dict[str, Any] | None) -> list[dict[str, Any]]:
    gs = (bd or {}).get("graphs")
    return [g for g in gs if isinstance(g, dict)] if isinstance(gs, list) else []


def step_samples(bd: dict[str, Any] | None) -> list[float]:
    bd = bd or {}
    for holder in (bd.get("extras"), bd):
        if isinstance(holder, dict) and isinstance(holder.get("step_samples_ms"), list):
            return [v for v in holder["step_samples_ms"] if num(v) is not None]
    return []


def column_samples(m: dict[str, Any]) -> list[float]:
    """A compare column's step samples: the interleaved ones (``paired_ms``, blocks) when it
    has them, else its compile worker's."""
    blocks = m.get("paired_ms")
    if isinstance(blocks, list) and any(isinstance(b, list) and b for b in blocks):
        return [v for b in blocks if isinstance(b, list) for v in b if num(v) is not None]
    return [v for v in m.get("step_samples_ms") or [] if num(v) is not None]


def torch_setting(bd: dict[str, Any] | None, key: str) -> Any:
    ts = ((bd or {}).get("extras") or {}).get("torch_settings") or {}
    vals = ts.get("values") if isinstance(ts, dict) else None
    return vals.get(key) if isinstance(vals, dict) else None


def pct(busy: float | None, wall: float | None) -> float | None:
    return 100.0 * busy / wall if busy is not None and wall else None


def triton_kernels(bd: dict[str, Any] | None) -> list[tuple[str, dict[str, Any]]]:
    """(graph id, kernel) of every Triton kernel with a file and a harness, slowest first."""
    out = []
    for g in graphs(bd):
        if g.get("status", "ok") != "ok":
            continue
        for k in g.get("kernels") or []:
            if isinstance(k, dict) and k.get("file") and k.get("category") in HARNESS_CATEGORIES:
                out.append((str(g.get("id")), k))
    return sorted(out, key=lambda gk: -(num(gk[1].get("ms")) or 0.0))


def _fmt(x: float | None, unit: str = " ms", digits: int = 4) -> str:
    return "n/a" if x is None else f"{x:.{digits}g}{unit}"


def _delta(tool: float, ref: float) -> str:
    return f"{100.0 * (tool - ref) / ref:+.1f}%" if ref else "n/a"


def verdict(ok: bool) -> str:
    return PASS if ok else FAIL


# -- checks: pure ---------------------------------------------------------------------------


def check_run_ok(ctx: Any, run: Run) -> list[Check]:
    """The breakdown command exited 0 and saved a complete result."""
    status = (run.bd or {}).get("status")
    ok = run.rc == 0 and status == "ok"
    detail = f"exit {run.rc}, status {status}, {run.seconds:.0f} s"
    if run.cli_error and not ok:
        detail += f": {run.cli_error}"
    failed = [str(g.get("id")) for g in graphs(run.bd) if g.get("status", "ok") != "ok"]
    if failed:
        detail += f"; graphs not measured: {', '.join(failed)}"
    return [Check(f"run {run.label}", verdict(ok), detail)]


def check_busy(ctx: Any, run: Run) -> list[Check]:
    """Busy <= 100% for every graph, synchronous and (where measured) pipelined."""
    parts, bad = [], []
    for g in graphs(run.bd):
        gid = str(g.get("id"))
        b = pct(num(g.get("busy_ms")), num(g.get("wall_ms")))
        pipe = g.get("pipelined") if isinstance(g.get("pipelined"), dict) else {}
        pb = pct(num(pipe.get("busy_ms")), num(pipe.get("wall_ms")))
        text = f"{gid} {_fmt(b, '%', 3)}" + (f" (pipelined {_fmt(pb, '%', 3)})" if pb is not None else "")
        parts.append(text)
        if any(v is not None and v > BUSY_MAX_PCT for v in (b, pb)):
            bad.append(gid)
        kernel, busy = num(g.get("kernel_ms")), num(g.get("busy_ms"))
        if b is None and g.get("status", "ok") == "ok":
            bad.append(f"{gid} (no busy_ms/wall_ms)")
        elif kernel is not None and busy is not None and busy > kernel * (1 + 1e-6) + 1e-6:
            bad.append(f"{gid} (busy {busy:.4g} > kernel sum {kernel:.4g} ms: a union never exceeds the sum)")
    if not parts:
        return [Check(f"busy<=100% {run.label}", SKIPPED, "no graphs in breakdown.json")]
    numbers = ", ".join(parts) + (f"; over the limit: {', '.join(bad)}" if bad else "")
    return [Check(f"busy<=100% {run.label}", verdict(not bad), numbers)]


# The unprofiled pipelined run against the profiled one: the profiler only adds cost, so the
# plain wall and launch time per iteration must not exceed the profiled ones beyond the spread
# of two runs (10%) and a few microseconds of clock reads.
PLAIN_SLOWER_MAX = Tolerance(0.10, 0.005)
LAUNCH_BOUND_IDLE = 0.20  # core/pipelined.py


def check_pipelined_plain(ctx: Any, run: Run) -> list[Check]:
    """Each graph's pipelined run timed without the profiler (``plain_wall_ms``,
    ``plain_launch_ms``) against the profiled one; the launch-bound verdict by each wall."""
    name = f"unprofiled pipelined {run.label}"
    parts, bad = [], []
    for g in graphs(run.bd):
        pipe = g.get("pipelined") if isinstance(g.get("pipelined"), dict) else {}
        wall, plain = num(pipe.get("wall_ms")), num(pipe.get("plain_wall_ms"))
        busy, launch, plain_launch = (num(pipe.get(k)) for k in ("busy_ms", "launch_ms", "plain_launch_ms"))
        if wall is None or plain is None or busy is None:
            continue
        idle = [max(0.0, 1 - busy / w) if w else 0.0 for w in (wall, plain)]
        bound = ["launch-bound" if x > LAUNCH_BOUND_IDLE else "device-bound" for x in idle]
        parts.append(f"{g.get('id')}: wall {wall:.4g} ms profiled, {plain:.4g} plain "
                     f"({bound[0]} -> {bound[1]})"
                     + (f", launch {launch:.4g} -> {plain_launch:.4g} ms" if launch and plain_launch else ""))
        over = [(p, q) for p, q in ((plain, wall), (plain_launch, launch)) if p is not None and q is not None
                and p > q and not PLAIN_SLOWER_MAX.allows(p, q)]
        if over:
            bad.append(str(g.get("id")))
    if not parts:
        if ctx.device != "cuda":
            return [Check(name, SKIPPED, "no pipelined run (the host)")]
        return [Check(name, FAIL, "no graph has an unprofiled pipelined time")]
    tail = f"; slower without the profiler than with it: {', '.join(bad)}" if bad else ""
    return [Check(name, verdict(not bad), "; ".join(parts) + tail)]


def kept_loads(bd: dict[str, Any] | None) -> list[tuple[str, dict[str, Any]]]:
    """(graph id, load) of the window each measured graph reports (``window_load[window]``)."""
    out = []
    for g in graphs(bd):
        loads, w = g.get("window_load"), g.get("window")
        ok = isinstance(loads, list) and isinstance(w, int) and 0 <= w < len(loads)
        if ok and isinstance(loads[w], dict):
            out.append((str(g.get("id")), loads[w]))
    return out


def _load_text(load: dict[str, Any]) -> str:
    parts = [f"others {_fmt(num(load.get('others_cores')), ' cores', 2)}",
             f"steal {_fmt(num(load.get('steal_pct')), '%', 2)}"]
    if "gpu_others" in load:
        parts.append(f"gpu_others {load.get('gpu_others')}")
    if load.get("gpu_slowdown"):
        parts.append(f"slowdown {load['gpu_slowdown']}")
    return ", ".join(parts)


def _gpu_not_read(ctx: Any) -> bool:
    """The probe could read the GPU neither through NVML nor nvidia-smi: the tool cannot either."""
    info = getattr(ctx, "info", None) or {}
    nvml_ok = isinstance(info.get("nvml"), dict) and "error" not in info["nvml"]
    return not nvml_ok and str(info.get("nvidia_smi", "")).startswith("not available")


def processes_hidden(ctx: Any) -> str:
    """Why a count of other GPU processes proves nothing here ("" when it does): NVML showed the
    probe no compute process at all, not even its own, which held a CUDA context (a container
    that hides them). The report says what NVML showed either way."""
    nv = (getattr(ctx, "info", None) or {}).get("nvml")
    if isinstance(nv, dict) and nv.get("pids") == []:
        return "NVML lists no compute process here, not even the probe's own: this container hides them"
    return ""


def check_quiet(ctx: Any, run: Run) -> list[Check]:
    """A run with nothing else on the machine is not called disturbed: on a GPU, the reading of
    each graph's reported window says 0 other processes (the run's own workers, such as the
    profiling worker started during the compile, are not others)."""
    name = f"quiet load {run.label}"
    loads = kept_loads(run.bd)
    if not loads:
        return [Check(name, FAIL, "no graph has a load recorded for its reported window")]
    numbers = "; ".join(f"{gid}: {_load_text(x)}" for gid, x in loads)
    if ctx.device != "cuda":
        return [Check(name, SKIPPED, f"needs a GPU (the host's own load is the machine's): {numbers}")]
    if processes_hidden(ctx):
        return [Check(name, SKIPPED, f"{processes_hidden(ctx)}: {numbers}")]
    unread = [gid for gid, x in loads if x.get("gpu_others") is None]
    if unread:
        if _gpu_not_read(ctx):
            return [Check(name, SKIPPED, f"neither NVML nor nvidia-smi answers here: {numbers}")]
        return [Check(name, FAIL, f"the GPU was not read for {', '.join(unread)}: {numbers}")]
    seen = [gid for gid, x in loads if x["gpu_others"]]
    why = f"; other GPU processes counted for {', '.join(seen)} while this run ran alone" if seen else ""
    return [Check(name, verdict(not seen), numbers + why)]


def check_disturbed(ctx: Any, run: Run, cli_text: str) -> list[Check]:
    """A run measured while another process kept the device busy says so, per graph in
    breakdown.json and in the printed report: on a GPU another compute process on it; on the
    host (dry run) a process spinning on one core."""
    name = f"disturbed load {run.label}"
    loads = kept_loads(run.bd)
    if not loads:
        return [Check(name, FAIL, "no graph has a load recorded for its reported window")]
    numbers = "; ".join(f"{gid}: {_load_text(x)}" for gid, x in loads)
    if ctx.device == "cuda":
        if processes_hidden(ctx):
            return [Check(name, SKIPPED, f"{processes_hidden(ctx)}: {numbers}")]
        if any(x.get("gpu_others") is None for _, x in loads) and _gpu_not_read(ctx):
            return [Check(name, SKIPPED, f"neither NVML nor nvidia-smi answers here: {numbers}")]
        missed = [gid for gid, x in loads if not x.get("gpu_others")]
        phrase = "used the GPU"
    else:
        missed = [gid for gid, x in loads if (num(x.get("others_cores")) or 0.0) < 0.5]
        phrase = "other processes kept"
    bad = []
    if missed:
        bad.append(f"not seen for {', '.join(missed)}")
    if phrase not in cli_text:
        bad.append(f"the report does not say '{phrase}'")
    return [Check(name, verdict(not bad), numbers + (f"; {'; '.join(bad)}" if bad else ""))]


def check_compare_quiet(ctx: Any, compare: dict[str, Any]) -> list[Check]:
    """compare on a quiet GPU: the interleaved timing and every column's step timing (taken
    while that column's profiling worker waited on standby) saw no other GPU process."""
    name = "quiet load compare"
    found: list[tuple[str, dict[str, Any]]] = []
    inter = compare.get("interleaved")
    if isinstance(inter, dict) and isinstance(inter.get("load"), dict):
        found.append(("interleaved", inter["load"]))
    for m in compare.get("modes") or []:
        if isinstance(m, dict) and isinstance(m.get("step_load"), dict):
            found.append((str(m.get("label") or m.get("mode")), m["step_load"]))
    if not found:
        return [Check(name, FAIL, "compare.json has no load reading")]
    numbers = "; ".join(f"{k}: {_load_text(x)}" for k, x in found)
    if ctx.device != "cuda":
        return [Check(name, SKIPPED, f"needs a GPU: {numbers}")]
    if processes_hidden(ctx):
        return [Check(name, SKIPPED, f"{processes_hidden(ctx)}: {numbers}")]
    if any(x.get("gpu_others") is None for _, x in found):
        return [Check(name, SKIPPED if _gpu_not_read(ctx) else FAIL, f"the GPU was not read: {numbers}")]
    seen = [k for k, x in found if x["gpu_others"]]
    why = f"; others counted for {', '.join(seen)}" if seen else ""
    return [Check(name, verdict(not seen), numbers + why)]


def check_kernel_configs(name: str, d: dict[str, Any]) -> Check:
    """``kernel --max-autotune``: the config counts of the baseline and max-autotune spaces."""
    runs = [r for r in d.get("runs") or [] if isinstance(r, dict)]
    base = next((r for r in runs if r.get("mode") == "baseline"), runs[0] if runs else None)
    tuned = next((r for r in runs if r.get("mode") == "max-autotune"), None)
    if base is None:
        return Check(f"max-autotune configs {name}", FAIL, "no runs in the kernel JSON")

    def desc(r: dict[str, Any]) -> str:
        return (
            f"{r.get('space_size', '?')} candidate(s), {r.get('tried', '?')} tried, {_fmt(num(r.get('ms')))}"
        )

    if tuned is None:
        notes = " ".join(str(n) for n in d.get("notes") or [])
        is_template = "template" in notes or d.get("kernel", {}).get("heuristic") == "template"
        return Check(
            f"max-autotune configs {name}",
            verdict(is_template),
            f"baseline only ({desc(base)}); " + (notes[:160] or "no max-autotune run"),
        )
    cmp = d.get("comparison") or {}
    speed = num(cmp.get("speedup"))
    numbers = f"baseline {desc(base)} -> max-autotune {desc(tuned)}; verdict {cmp.get('verdict', '?')}" + (
        f", {speed:.3g}x" if speed else ""
    )
    ok = (num(tuned.get("space_size")) or 0) >= (num(base.get("space_size")) or 0) and (
        num(tuned.get("tried")) or 0
    ) >= (num(base.get("tried")) or 0)
    return Check(
        f"max-autotune configs {name}",
        verdict(ok),
        numbers,
        {
            "base": {k: base.get(k) for k in ("space_size", "tried", "ms", "config")},
            "tuned": {k: tuned.get(k) for k in ("space_size", "tried", "ms", "config")},
        },
    )


def check_autotune_patch(name: str, d: dict[str, Any], table: dict[str, Any] | None) -> Check:
    """``kernel --max-autotune``'s patch against the installed torch's own mode table
    (``torch._inductor.list_mode_options("max-autotune")``, read by the probe): every option
    the mode sets is either applied to the kernel or named as ignored, and nothing else."""
    patch = d.get("max_autotune_patch")
    if not isinstance(table, dict):
        return Check(f"max-autotune patch {name}", SKIPPED, "the probe could not read torch's mode table")
    if not isinstance(patch, dict):
        return Check(f"max-autotune patch {name}", SKIPPED, "no max_autotune_patch in the kernel JSON")
    applied, ignored = set(patch.get("applied") or []), set(patch.get("ignored") or [])
    mode = set(table)
    ok = applied | ignored == mode and not applied & ignored
    return Check(
        f"max-autotune patch {name}",
        verdict(ok),
        f"torch {patch.get('torch_version')} mode table {sorted(mode)}; tool applied {sorted(applied)}, "
        f"ignored {sorted(ignored)}",
    )


# -- checks: independent measurements ------------------------------------------------------


def check_graph_kernel_time(ctx: Any, run: Run) -> list[Check]:
    """Each graph's kernel time per call against a separate plain torch.profiler run of its
    compiled module (device event durations summed); one process measures every graph of a run."""
    out, todo = [], []
    for g in graphs(run.bd):
        gid, module = str(g.get("id")), g.get("module")
        name = f"graph kernel time {run.label}/{gid}"
        if g.get("status", "ok") != "ok" or num(g.get("kernel_ms")) is None or not module:
            out.append(Check(name, SKIPPED, f"graph not measured ({g.get('status')})"))
        elif g.get("device", ctx.device) != ctx.device:
            out.append(Check(name, SKIPPED, f"a {g.get('device')} graph"))
        else:
            todo.append(g)
    if not todo:
        return out or [Check(f"graph kernel time {run.label}", SKIPPED, "no graphs")]
    wall = max(num(g.get("wall_ms")) or 1.0 for g in todo)
    calls = int(max(5, min(100, 300.0 / max(wall, 1e-3))))
    args = ["--cache", str(run.dir / "cache"), "--device", ctx.device, "--calls", str(calls),
            "--sessions", "3"]
    for g in todo:
        args += ["--module", str(run.dir / g["module"])]
    prec = torch_setting(run.bd, "float32_matmul_precision")
    if isinstance(prec, str):
        args += ["--precision", prec]
    try:
        measured = ctx.measure("graph-time", args, cap=90, label=f"graph-time-{run.label}")["graphs"]
    except MeasureError as e:
        return out + [Check(f"graph kernel time {run.label}/{g.get('id')}", FAIL,
                            f"independent profiler run failed: {e}") for g in todo]
    for g, m in zip(todo, measured, strict=True):
        out.append(_graph_time_check(ctx, run, g, m, calls))
    return out


def _graph_time_check(ctx: Any, run: Run, g: dict[str, Any], m: dict[str, Any], calls: int) -> Check:
    name = f"graph kernel time {run.label}/{g.get('id')}"
    tool = num(g.get("kernel_ms")) or 0.0
    ref = statistics.median(m["ms"])
    launches = sum(num(k.get("calls")) or 0 for k in g.get("kernels") or [] if isinstance(k, dict))
    numbers = (
        f"tool {tool:.4g} ms vs plain profiler {ref:.4g} ms ({_delta(tool, ref)}, tol {GRAPH_TIME}); "
        f"device events per call: tool {launches:g}, profiler {statistics.median(m['events']):g}"
        + ("; tool replayed a CUDA graph" if g.get("replayed") else "")
    )
    data = {"tool_ms": tool, "ref_ms": m["ms"], "events": m["events"], "calls": calls}
    if ctx.device != "cuda":
        return Check(name, SKIPPED, f"needs CUDA for a verdict (dry run on {ctx.device}: {numbers})", data)
    return Check(name, verdict(GRAPH_TIME.allows(tool, ref)), numbers, data)


def check_do_bench(ctx: Any, run: Run) -> list[Check]:
    """The top Triton kernels: the breakdown's time per launch, and ``inductor-bench kernel``'s
    median, against ``triton.testing.do_bench`` of the kernel file's own call."""
    if ctx.device != "cuda":
        return [
            Check(
                f"kernel vs do_bench {run.label}",
                SKIPPED,
                f"needs CUDA: a {ctx.device} breakdown has no Triton kernel files",
            )
        ]
    picks = ctx.kernel_picks(run)
    if not picks:
        return [
            Check(
                f"kernel vs do_bench {run.label}",
                SKIPPED,
                "no Triton kernel with a file and a harness in the breakdown",
            )
        ]
    args = []
    for gid, k in picks:
        args += ["--kernel", str(run.dir / k["file"]),
                 "--module", str(run.dir / "graphs" / gid / "module.py")]
    try:
        measured = ctx.measure("do-bench", args, cap=60, label=f"do-bench-{run.label}")["kernels"]
    except MeasureError as e:
        return [Check(f"kernel vs do_bench {gid}/{k['name']}", FAIL, f"do_bench run failed: {e}")
                for gid, k in picks]
    out = []
    for (gid, k), m in zip(picks, measured, strict=True):
        name = f"{gid}/{k['name']}"
        ref = m["ms"]
        calls = num(k.get("calls")) or 1.0
        per_launch = (num(k.get("ms")) or 0.0) / calls
        src = (
            "the file Inductor wrote, its tuned config pinned" if m.get("pinned") else "a copy, re-autotuned"
        )
        out.append(
            Check(
                f"kernel vs do_bench {name}",
                verdict(KERNEL_IN_GRAPH.allows(per_launch, ref)),
                f"breakdown {per_launch * 1e3:.2f} µs/launch ({calls:g} launch(es)/iteration) vs do_bench "
                f"{ref * 1e3:.2f} µs ({_delta(per_launch, ref)}, tol {KERNEL_IN_GRAPH}); do_bench ran {src}, "
                f"config {m.get('config')}",
                {
                    "tool_ms": per_launch,
                    "do_bench_ms": ref,
                    "config": m.get("config"),
                    "pinned": m.get("pinned"),
                },
            )
        )
        kd = ctx.kernel_results.get(name)
        runs = [r for r in (kd or {}).get("runs") or [] if isinstance(r, dict)]
        base = next((r for r in runs if r.get("mode") == "baseline"), None)
        if base is None or num(base.get("ms")) is None:
            out.append(Check(f"kernel cmd vs do_bench {name}", SKIPPED, "no `inductor-bench kernel` result"))
            continue
        cmd_ms = num(base["ms"])
        same = str(base.get("config")) == str(m.get("config"))
        out.append(
            Check(
                f"kernel cmd vs do_bench {name}",
                verdict(KERNEL_COMMAND.allows(cmd_ms, ref)),
                f"`kernel` {cmd_ms * 1e3:.2f} µs vs do_bench {ref * 1e3:.2f} µs ({_delta(cmd_ms, ref)}, "
                f"tol {KERNEL_COMMAND}); configs "
                + ("the same" if same else f"differ: `kernel` ran {base.get('config')}"),
                {"kernel_ms": cmd_ms, "do_bench_ms": ref, "same_config": same},
            )
        )
    return out


def check_step_time(ctx: Any, run: Run) -> list[Check]:
    """The tool's median step time against CUDA events around the model's step, in a separate
    process that compiles the model file itself."""
    name = f"step time {run.label}"
    tool = step_samples(run.bd)
    if not tool:
        return [Check(name, SKIPPED, "no step samples in breakdown.json (a script, or the run failed)")]
    args = [
        "--model",
        str(run.model),
        "--device",
        ctx.device,
        "--mode",
        run.mode,
        # the run's own Inductor cache: this side compiles the model itself (dynamo and the FX graph
        # cache), to the same kernels and configs the tool timed, in seconds rather than a cold compile
        "--cache",
        str(run.dir / "cache"),
        "--steps",
        "50" if ctx.device == "cuda" else "5",
        "--warmup",
        "5" if ctx.device == "cuda" else "1",
    ]
    bs = (run.bd or {}).get("batch_size")
    if isinstance(bs, int):
        args += ["--batch-size", str(bs)]
    if run.train:
        args.append("--train")
    try:
        m = ctx.measure("step-time", args, cap=150, label=f"step-time-{run.label}")
    except MeasureError as e:
        return [Check(name, FAIL, f"independent step timing failed: {e}")]
    t = statistics.median(tool)
    host = statistics.median(m["host_ms"])
    data = {
        "tool_ms": tool,
        "events_ms": m.get("events_ms"),
        "host_ms": m["host_ms"],
        "compile_s": m.get("compile_s"),
    }
    if not m.get("events_ms"):
        return [
            Check(
                name,
                SKIPPED,
                f"needs CUDA events (dry run on {ctx.device}: tool median {t:.4g} ms, "
                f"host clock + sync here {host:.4g} ms)",
                data,
            )
        ]
    ev = statistics.median(m["events_ms"])
    numbers = (
        f"tool median {t:.4g} ms ({len(tool)} steps) vs CUDA events {ev:.4g} ms ({_delta(t, ev)}, "
        f"tol {STEP_TIME}); host clock + sync in the same process {host:.4g} ms"
    )
    return [Check(name, verdict(STEP_TIME.allows(t, ev)), numbers, data)]


# -- the measurements (run in their own processes) -------------------------------------------


def _load(path: str, name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def measure_graph_time(a: argparse.Namespace) -> dict[str, Any]:
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = a.cache
    import torch

    if a.precision:
        torch.set_float32_matmul_precision(a.precision)
    return {"graphs": [_graph_time(a, path, i) for i, path in enumerate(a.module)]}


def _graph_time(a: argparse.Namespace, path: str, index: int) -> dict[str, Any]:
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    cuda = a.device == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    m = _load(path, f"gpu_validate_graph_{index}")
    args = m.get_args()
    for _ in range(5):
        m.call(list(args))
    sync()
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    ms, events = [], []
    for _ in range(a.sessions):
        with profile(activities=acts) as p:
            for _ in range(a.calls):
                m.call(list(args))
            sync()
        evs = p.events()
        if cuda:  # kernels, memcpy, memset: device events that are not annotation spans
            dev = [
                e
                for e in evs
                if e.device_type == DeviceType.CUDA and not getattr(e, "is_user_annotation", False)
            ]
            total_us = sum(e.time_range.elapsed_us() for e in dev)
        else:  # dry run: the top-level ops of each call, as tests/test_e2e_breakdown.py
            dev = [e for e in evs if e.cpu_parent is None]
            total_us = sum(e.cpu_time_total for e in dev)
        ms.append(total_us / a.calls / 1e3)
        events.append(len(dev) / a.calls)
    return {"module": path, "ms": ms, "events": events, "calls": a.calls, "sessions": a.sessions}


_KERNEL_PATH = re.compile(r"^# kernel path: (\S+)\s*$", re.M)


def _original_kernel_file(copy: Path, module: Path) -> Path | None:
    """The file Inductor wrote (in the run's cache, a ``.best_config`` beside it) whose text is
    the copy's: named by a ``# kernel path:`` comment of the compiled module."""
    if not module.exists():
        return None
    text = copy.read_text()
    for p in _KERNEL_PATH.findall(module.read_text()):
        q = Path(p)
        if q.exists() and q.read_text() == text:
            return q
    return None


def measure_do_bench(a: argparse.Namespace) -> dict[str, Any]:
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = a.scratch
    if len(a.kernel) != len(a.module):
        raise SystemExit("do-bench: one --module (the graph's) per --kernel")
    return {"kernels": [_do_bench(k, m, i) for i, (k, m) in enumerate(zip(a.kernel, a.module, strict=True))]}


def _do_bench(kernel: str, module: str, index: int) -> dict[str, Any]:
    import torch
    import triton

    copy = Path(kernel)
    original = _original_kernel_file(copy, Path(module))
    path = original or copy
    pinned = original is not None and path.with_suffix(".best_config").exists()
    mod = _load(str(path), f"gpu_validate_kernel_{index}")
    args = mod.get_args()
    mod.call(args)
    torch.cuda.synchronize()
    bench = triton.testing.do_bench
    try:
        ms = bench(lambda: mod.call(args), warmup=25, rep=200, return_mode="median")
    except TypeError:  # older triton: no return_mode
        ms = bench(lambda: mod.call(args), warmup=25, rep=200, quantiles=[0.5])
        ms = ms[0] if isinstance(ms, (list, tuple)) else ms
    tuners = [v for v in vars(mod).values() if hasattr(v, "launchers") and hasattr(v, "configs")]
    config = None
    with contextlib.suppress(Exception):  # the autotuner's internals vary between versions
        config = str(tuners[0].launchers[0].config)
    return {
        "ms": float(ms),
        "path": str(path),
        "pinned": pinned,
        "config": config,
        "candidates": len(tuners[0].configs) if tuners else None,
    }


def _floating_sum(out: Any):
    import torch

    stack, tensors = [out], []
    while stack:
        x = stack.pop()
        if isinstance(x, torch.Tensor):
            if x.is_floating_point() and x.requires_grad:
                tensors.append(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        elif hasattr(x, "to_tuple"):
            stack.extend(x.to_tuple())
    if not tensors:
        raise SystemExit("--train: the model's output has no floating tensor that requires grad")
    return sum(t.float().sum() for t in tensors)


def measure_step_time(a: argparse.Namespace) -> dict[str, Any]:
    import inspect
    import runpy
    import time

    os.environ["TORCHINDUCTOR_CACHE_DIR"] = a.cache
    import torch

    factory = runpy.run_path(a.model, run_name="gpu_validate_model")["make_workload"]
    params = inspect.signature(factory).parameters
    offered = {"device": a.device, "dtype": torch.float32, "batch_size": a.batch_size}
    made = factory(**{k: v for k, v in offered.items() if k in params and v is not None})
    model, args = made[0], made[1]
    kwargs = made[2] if len(made) == 3 else {}
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    model.train(a.train)
    compiled = torch.compile(model, mode=None if a.mode == "default" else a.mode)
    cuda = a.device == "cuda"
    cudagraph_modes = ("reduce-overhead", "max-autotune")  # the modes that turn triton.cudagraphs on
    mark = getattr(torch.compiler, "cudagraph_mark_step_begin", None) if a.mode in cudagraph_modes else None

    def step() -> None:
        if a.train:
            _floating_sum(compiled(*args, **kwargs)).backward()
            model.zero_grad(set_to_none=True)
        else:
            with torch.no_grad():
                compiled(*args, **kwargs)

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    t0 = time.perf_counter()
    step()
    sync()
    compile_s = time.perf_counter() - t0
    for _ in range(a.warmup):
        if mark:
            mark()
        step()
    sync()
    events, host = [], []
    for _ in range(a.steps):
        if mark:
            mark()
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            t0 = time.perf_counter()
            start.record()
            step()
            end.record()
            torch.cuda.synchronize()
            host.append((time.perf_counter() - t0) * 1e3)
            events.append(start.elapsed_time(end))
        else:
            t0 = time.perf_counter()
            step()
            host.append((time.perf_counter() - t0) * 1e3)
    return {"events_ms": events, "host_ms": host, "compile_s": compile_s}


# -- the roofline's ceilings: the run's peaks.json against do_bench ----------------------------

PEAKS_REL = 0.10  # measured ceilings and do_bench's best agree within 10%
PEAKS_COPY_BYTES = 512 * 1024**2  # as the tool's device copy
PEAKS_MATMUL_N = 8192


def check_peaks(ctx: Any, run: Run) -> list[Check]:
    """The ceilings the breakdown measured (``peaks.json``: device-to-device copy GB/s, fp32 and
    fp16/bf16 matmul TFLOP/s) against ``triton.testing.do_bench`` of a copy of the same size and
    of 8192 x 8192 matmuls, in a process of their own."""
    if ctx.device != "cuda":
        return [Check(f"peaks vs do_bench {run.label}", SKIPPED, f"needs CUDA, not {ctx.device}")]
    peaks = read_peaks(run.dir / "peaks.json")
    if peaks is None:
        return [Check(f"peaks vs do_bench {run.label}", SKIPPED, "no measured ceilings in peaks.json")]
    try:
        ref = ctx.measure("peaks", ["--device", ctx.device], cap=60, label=f"peaks-{run.label}")
    except MeasureError as e:
        return [Check(f"peaks vs do_bench {run.label}", FAIL, f"do_bench run failed: {e}")]
    pairs = [("bandwidth GB/s", num(peaks.get("gbps")), num(ref.get("gbps")))]
    for kind in ("fp32", "fp16/bf16"):
        pairs.append((f"{kind} TFLOP/s", num((peaks.get("tflops") or {}).get(kind)),
                      num((ref.get("tflops") or {}).get(kind))))
    out = []
    for what, tool, other in pairs:
        name = f"peaks vs do_bench {run.label} {what}"
        if tool is None or other is None:
            out.append(Check(name, SKIPPED, f"tool {tool}, do_bench {other}"))
            continue
        ok = abs(tool - other) <= PEAKS_REL * other
        out.append(Check(name, verdict(ok), f"tool {tool:.4g} vs do_bench {other:.4g} (tol {PEAKS_REL:.0%})"))
    return out


def read_peaks(path: Path) -> dict[str, Any] | None:
    try:
        measured = json.loads(path.read_text()).get("measured")
    except (OSError, ValueError, AttributeError):
        return None
    return measured if isinstance(measured, dict) else None


def measure_peaks(a: argparse.Namespace) -> dict[str, Any]:
    """A device copy and fp32 (TF32 off) and bf16 matmuls, each the best of do_bench's runs."""
    import torch
    import triton.testing

    def best_ms(fn: Any) -> float:
        try:
            return float(triton.testing.do_bench(fn, return_mode="min"))
        except TypeError:  # a triton without return_mode: the 0th quantile is the minimum
            return float(triton.testing.do_bench(fn, quantiles=[0.0, 0.5])[0])

    src = torch.empty(PEAKS_COPY_BYTES, dtype=torch.uint8, device=a.device)
    dst = torch.empty_like(src)
    gbps = 2 * PEAKS_COPY_BYTES / best_ms(lambda: dst.copy_(src)) / 1e6
    torch.backends.cuda.matmul.allow_tf32 = False
    n, tflops = PEAKS_MATMUL_N, {}
    for kind, dtype in (("fp32", torch.float32), ("fp16/bf16", torch.bfloat16)):
        x = torch.randn(n, n, device=a.device, dtype=dtype)
        y = torch.randn(n, n, device=a.device, dtype=dtype)
        tflops[kind] = 2.0 * n**3 / best_ms(lambda x=x, y=y: x @ y) / 1e9
    return {"gbps": gbps, "tflops": tflops}


MEASUREMENTS = {
    "graph-time": measure_graph_time,
    "do-bench": measure_do_bench,
    "step-time": measure_step_time,
    "peaks": measure_peaks,
}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Independent measurements for scripts/gpu_validate.py.")
    ap.add_argument("what", choices=sorted(MEASUREMENTS))
    ap.add_argument("--out", required=True, help="write the result JSON here")
    ap.add_argument("--module", action="append", default=[],
                    help="compiled module (graph-time), or the graph module of each --kernel (do-bench)")
    ap.add_argument("--kernel", action="append", default=[], help="kernel file (do-bench)")
    ap.add_argument("--model", help="model file (step-time)")
    ap.add_argument("--cache", default="", help="TORCHINDUCTOR_CACHE_DIR")
    ap.add_argument("--scratch", default="", help="a fresh TORCHINDUCTOR_CACHE_DIR (do-bench)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--mode", default="default")
    ap.add_argument("--train", action="store_true")
    ap.add_argument("--batch-size", type=int, default=None)
    ap.add_argument("--precision", default=None)
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--sessions", type=int, default=3)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    a = ap.parse_args(argv)
    result = MEASUREMENTS[a.what](a)
    Path(a.out).write_text(json.dumps(result))
    print(json.dumps(result)[:2000])


if __name__ == "__main__":
    sys.exit(main())
