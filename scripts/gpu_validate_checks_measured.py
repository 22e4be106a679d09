"""The checks against independent measurements, each run by ``ctx.measure`` in a process of its
own (``gpu_validate_measure``): graph kernel time, do_bench, step time, the measured ceilings.

This file imports nothing outside the standard library."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from gpu_validate_records import (
    FAIL,
    GRAPH_TIME,
    KERNEL_COMMAND,
    KERNEL_IN_GRAPH,
    SKIPPED,
    STEP_TIME,
    Check,
    MeasureError,
    Run,
    _delta,
    graphs,
    num,
    step_samples,
    torch_setting,
    verdict,
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
        same = base.get("config") == m.get("config")  # both {block sizes..., num_warps, num_stages}
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
# -- the roofline's ceilings: the run's peaks.json against do_bench ----------------------------

PEAKS_REL = 0.10  # measured ceilings and do_bench's best agree within 10%



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
    for kind in ("fp32", "fp16/bf16", "int8"):
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
