"""The checks on what a run saved and printed, with no measurement of their own: exit status,
busy, the pipelined and plain walls, the load readings, kernel --max-autotune's configs and
its patch against torch's mode table.

This file imports nothing outside the standard library."""

from __future__ import annotations

from typing import Any

from gpu_validate_records import (
    BUSY_MAX_PCT,
    FAIL,
    SKIPPED,
    Check,
    Run,
    Tolerance,
    _fmt,
    graphs,
    num,
    pct,
    verdict,
)

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


def check_outside_python(ctx: Any, run: Run) -> list[Check]:
    """The profiled steps' time in no op, split by whose Python it is (core/host_python.py):
    the layers add up to it; on a GPU the harness's synchronize (``torch.cuda``) is among
    them: the step waits there for the device."""
    name = f"python between ops {run.label}"
    outside = ((run.bd or {}).get("extras") or {}).get("outside")
    if not isinstance(outside, dict) or outside.get("error"):
        why = outside.get("error") if isinstance(outside, dict) else "no extras.outside in breakdown.json"
        return [Check(name, SKIPPED, f"no profiled steps: {why}")]
    layers = [x for x in outside.get("python") or [] if isinstance(x, dict)]
    total, in_no_op = sum(num(x.get("ms")) or 0.0 for x in layers), num(outside.get("uncovered_ms")) or 0.0
    bad = [outside["python_error"]] if outside.get("python_error") else []
    if not layers:
        bad.append("no layers")
    elif abs(total - in_no_op) > 1e-6 + 1e-9 * in_no_op:
        bad.append(f"the layers sum to {total:.6g} ms, not {in_no_op:.6g}")
    cuda = [x for x in layers if str(x.get("name", "")).startswith("torch.cuda")]
    if (run.bd or {}).get("device", "").startswith("cuda") and not cuda:
        bad.append("no torch.cuda layer (the harness's synchronize) on a GPU run")
    top = ", ".join(f"{x.get('name')} {_fmt(num(x.get('ms')))}" for x in layers[:4])
    numbers = f"{_fmt(in_no_op)} in no op: {top}" + (f"; {'; '.join(bad)}" if bad else "")
    return [Check(name, verdict(not bad), numbers)]


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
