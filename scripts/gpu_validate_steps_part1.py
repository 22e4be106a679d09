"""The steps of part 1: the main breakdowns, the checks on them (quiet load, graph time, step
time, do_bench, the measured ceilings), kernel --max-autotune, and ``pytest -m gpu``."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gpu_validate_checks as ck
import gpu_validate_report as rep
from gpu_validate_checks import FAIL, PASS, SKIPPED, Check, Run
from gpu_validate_commands import ROOT, Deadline, SkipStep, last_line, read_json, run_cmd
from gpu_validate_context import MAIN_RUNS, MODELS, Ctx, StepRecord, label_of

GPU_TESTS = ["tests/test_gpu_breakdown.py", "tests/test_kernel_gpu.py", "tests/test_call_inputs.py",
             "tests/test_gpu_analyze_shapes.py", "tests/test_gpu_analyze_stack.py"]
# Profiling options per run: (GPU, dry run). The main runs are the reference figures.
PROFILE_MAIN = (["--iterations", "20", "--windows", "3"], ["--iterations", "3", "--windows", "1"])
# The main mlp run profiles in the default two fresh processes (what users get); the other
# three in one, their time cut for the checks after them.
ONE_PROCESS = ["--processes", "1"]

# -- the steps -----------------------------------------------------------------------------


def _model(ctx: Ctx, name: str) -> Path:
    p = MODELS / f"{name}.py"
    if not p.exists():
        raise SkipStep(f"no model file {p.relative_to(ROOT)}")
    return p
def main_label(key: str) -> str:
    """The run label of a main run's key suffix (``mlp-ro`` -> ``mlp-train-reduce-overhead``)."""
    _, model, mode = next(r for r in MAIN_RUNS if r[0] == key)
    return label_of(model, True, mode)


def main_breakdown(key: str) -> Callable[[Ctx, StepRecord, Deadline], None]:
    _, model, mode = next(r for r in MAIN_RUNS if r[0] == key)

    def fn(ctx: Ctx, rec: StepRecord, dl: Deadline) -> None:
        label = label_of(model, True, mode)
        opts = ctx.pick(PROFILE_MAIN) + ([] if key == "mlp" else ONE_PROCESS)
        run = ctx.breakdown(
            label, _model(ctx, model), True, mode, dl, opts, cap=dl.left() - 5
        )  # 5 s kept for re-rendering the result
        rec.figures.append(rep.breakdown_figures(ctx, run))
        for c in ck.check_pipelined_plain(ctx, run):  # the launch-bound verdict's two walls
            ctx.record(c)
        if run.bd is not None and dl.left() > 2:  # the saved result re-rendered (no torch)
            r = run_cmd(
                ctx.tool("report", str(run.dir), "--format", "markdown"),
                timeout=min(60, dl.left()),
                log=ctx.logs / f"report-{label}.log",
                env=ctx.env,
                stdout=ctx.cli / f"report-{label}.md",
            )
            if r.rc != 0:
                ctx.record(
                    Check(f"report {label}", FAIL, f"`inductor-bench report` exit {r.rc}: {last_line(r.log)}")
                )
        if run.rc != 0:
            rec.status, rec.note = "failed", run.cli_error

    return fn


def main_runs(ctx: Ctx, modes: tuple[str, ...] = ("default", "reduce-overhead")) -> list[Run]:
    """The main runs of this part that saved a result, in MAIN_RUNS order."""
    labels = [label_of(model, True, mode) for _, model, mode in MAIN_RUNS if mode in modes]
    return [ctx.runs[x] for x in labels if x in ctx.runs and ctx.runs[x].bd is not None]


def run_checks(
    fn: Callable[[Ctx, Run], list[Check]], modes: tuple[str, ...] = ("default", "reduce-overhead")
) -> Callable[[Ctx, StepRecord, Deadline], None]:
    """A step that runs one check function on every main run (of ``modes``) that saved a result;
    a run left for its last seconds gets a fair share of what remains."""

    def step(ctx: Ctx, rec: StepRecord, dl: Deadline) -> None:
        runs = main_runs(ctx, modes)
        if not runs:
            raise SkipStep("no main breakdown to check (their steps did not complete)")
        try:
            for i, run in enumerate(runs):
                ctx.share = dl.left() / (len(runs) - i)
                for c in fn(ctx, run):
                    ctx.record(c)
        finally:
            ctx.share = None

    return step


def step_quiet(ctx: Ctx, rec: StepRecord, dl: Deadline) -> None:
    run = ctx.runs.get(main_label("mlp"))
    if run is None or run.bd is None:
        raise SkipStep(f"no breakdown of {main_label('mlp')} to check")
    for c in ck.check_quiet(ctx, run):
        ctx.record(c)


def step_peaks(ctx: Ctx, rec: StepRecord, dl: Deadline) -> None:
    """The ceilings the mlp run measured (``peaks.json``; cached per machine, so every run of the
    part holds the same) against do_bench of a copy and matmuls (``check_peaks``)."""
    run = ctx.runs.get(main_label("mlp"))
    if run is None or run.bd is None:
        raise SkipStep(f"no breakdown of {main_label('mlp')} to check")
    ctx.share = dl.left()
    try:
        for c in ck.check_peaks(ctx, run):
            ctx.record(c)
    finally:
        ctx.share = None


def step_kernel(ctx: Ctx, rec: StepRecord, dl: Deadline) -> None:
    """``kernel --max-autotune`` (which times the baseline too) on the slowest Triton kernels of
    each default main run."""
    runs = main_runs(ctx, ("default",))
    if not runs:
        raise SkipStep("no default main breakdown")
    if ctx.device != "cuda":
        n = sum(len(ck.triton_kernels(r.bd)) for r in runs)
        ctx.record(
            Check(
                "kernel --max-autotune",
                SKIPPED,
                f"needs CUDA: `kernel` times Triton kernel files; these {ctx.device} breakdowns have "
                f"{n} Triton kernel(s) with a file",
            )
        )
        return
    picks = [(run, gid, k) for run in runs for gid, k in ctx.kernel_picks(run)]
    if not picks:
        ctx.record(Check("kernel --max-autotune", FAIL, "the CUDA breakdowns have no Triton kernel file"))
        return
    for i, (run, gid, k) in enumerate(picks):
        name = f"{gid}/{k['name']}"
        try:
            t = dl.take(dl.left() / (len(picks) - i), need=10)
        except SkipStep as e:
            ctx.record(Check(f"kernel --max-autotune {name}", SKIPPED, str(e)))
            continue
        js = ctx.cli / f"kernel-{k['name']}-max-autotune.json"
        r = run_cmd(
            ctx.tool("kernel", str(run.dir), name, "--max-autotune", "--timeout", f"{max(t - 5, 5):.0f}",
                     "--json", str(js)),
            timeout=t,
            log=ctx.logs / f"kernel-{k['name']}-max-autotune.log",
            env=ctx.env,
            stdout=ctx.cli / f"kernel-{k['name']}-max-autotune.txt",
        )
        d = read_json(js)
        if r.rc != 0 or d is None:
            why = "timed out" if r.timed_out else f"exit {r.rc}: {last_line(r.log)}"
            ctx.record(Check(f"kernel --max-autotune {name}", FAIL, why))
            continue
        ctx.record(ck.check_kernel_configs(name, d))
        ctx.record(ck.check_autotune_patch(name, d, ctx.info.get("mode_table", {}).get("max-autotune")))
        ctx.kernel_results[name] = d  # its baseline run is what `kernel` alone would time
        rec.figures.append(rep.kernel_figures(name, d, r.seconds, ["--max-autotune"]))
PYTEST_LINE = re.compile(r"^(tests/\S+::\S+)\s+(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b")
PYTEST_COLLECTED = re.compile(r"collected (\d+) items?(?: / (\d+) deselected)?")


def parse_pytest(text: str) -> dict[str, Any]:
    """Per-test outcomes from ``pytest -v`` output (what ran before any kill)."""
    tests: dict[str, str] = {}
    for line in text.splitlines():
        m = PYTEST_LINE.match(line.strip())
        if m:
            tests[m.group(1)] = m.group(2)
    m = PYTEST_COLLECTED.search(text)
    selected_n = int(m.group(1)) - int(m.group(2) or 0) if m else None
    counts: dict[str, int] = {}
    for v in tests.values():
        counts[v] = counts.get(v, 0) + 1
    return {"tests": tests, "counts": counts, "selected": selected_n}


def check_pytest(res: dict[str, Any], rc: int | None, timed_out: bool, seconds: float) -> Check:
    counts, tests = res["counts"], res["tests"]
    bad = [t for t, v in tests.items() if v in ("FAILED", "ERROR")]
    not_run = (res["selected"] - len(tests)) if res["selected"] is not None else None
    summary = ", ".join(f"{n} {k.lower()}" for k, n in sorted(counts.items())) or "no test ran"
    numbers = f"{summary} of {res['selected']} selected in {seconds:.0f} s"
    if not_run:
        numbers += f"; {not_run} not reached" + (" (budget ran out)" if timed_out else "")
    if bad:
        return Check(
            "pytest -m gpu", FAIL, numbers + "; failed: " + ", ".join(t.split("::")[-1] for t in bad)
        )
    if not tests or counts.get("SKIPPED", 0) == len(tests):
        return Check("pytest -m gpu", SKIPPED, numbers + (" (no CUDA here)" if tests else ""))
    if rc not in (0, None) and not timed_out:
        return Check("pytest -m gpu", FAIL, numbers + f"; pytest exit {rc}")
    return Check("pytest -m gpu", PASS if not not_run else SKIPPED, numbers)


def step_pytest(ctx: Ctx, rec: StepRecord, dl: Deadline) -> None:
    t = dl.take(dl.left(), need=20)
    out = ctx.cli / "pytest-gpu.txt"
    cmd = [
        ctx.python,
        "-m",
        "pytest",
        "-m",
        "gpu",
        "-v",
        "-rA",
        "-p",
        "no:cacheprovider",
        "--basetemp",
        str(ctx.work / "pytest-tmp"),
        *GPU_TESTS,
    ]
    env = {**ctx.env, "INDUCTOR_BENCH_GPU_TRACES": str(ctx.gpu_test_traces)}  # the traces tests keep
    r = run_cmd(cmd, timeout=t, log=ctx.logs / "pytest-gpu.log", env=env, stdout=out)
    res = parse_pytest(out.read_text(errors="replace") if out.exists() else "")
    ctx.pytest = {**res, "rc": r.rc, "timed_out": r.timed_out, "seconds": r.seconds}
    ctx.record(check_pytest(res, r.rc, r.timed_out, r.seconds))
    rec.figures.append(rep.pytest_figures(ctx.pytest))
    if r.timed_out:
        rec.status, rec.note = "timeout", f"stopped after {t:.0f} s; the tests that finished are reported"
