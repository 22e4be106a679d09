"""The steps of parts 2 and 3: compare, the main model beside another process on the device,
the disturbance benchmark, and the breakdowns of the other example models (the matrix)."""

from __future__ import annotations

import re
import select
import statistics
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import gpu_validate_checks as ck
import gpu_validate_report as rep
from gpu_validate_checks import FAIL, SKIPPED, Check, Run
from gpu_validate_commands import (
    _LIVE,
    _LIVE_LOCK,
    ROOT,
    Deadline,
    SkipStep,
    _stop,
    last_line,
    read_json,
    run_cmd,
    stop_all,
)
from gpu_validate_context import MAIN_RUNS, MODELS, Ctx, StepRecord, label_of
from gpu_validate_steps_part1 import _model

MODEL_ORDER = ["mlp", "transformer_block", "densenet", "mixnet", "graph_break_script", "mlp_slow"]
# Profiling options per run: (GPU, dry run).
# One profiling process each (--processes 1): these runs check what ran and how, not figures
# against another run, and each further process would start torch and CUDA again.
PROFILE_MATRIX = (
    ["--iterations", "10", "--windows", "2", "--processes", "1"],
    ["--iterations", "3", "--windows", "1"],
)
COMPARE_OPTS = (
    ["--repeat", "20", "--iterations", "10", "--windows", "2", "--processes", "1"],
    ["--repeat", "3", "--iterations", "3", "--windows", "1"],
)
# The disturbance benchmark in the validation: one round of mlp, quiet and beside each disturber.
# One reference run: the step's time is cut for four breakdowns (a loaded reference is said in
# its rows, "(reference loaded)", rather than measured again past the step's limit).
DISTURBANCE_OPTS = (
    ["--models", "mlp", "--rounds", "1", "--kinds", "quiet,busy,stall", "--reference-tries", "1"],
    ["--models", "mlp", "--rounds", "1", "--kinds", "busy", "--reference-tries", "1"],
)

def step_compare(ctx: Ctx, rec: StepRecord, dl: Deadline) -> None:
    t = dl.take(dl.left(), need=30)
    model = _model(ctx, ctx.a.main_model)
    out, js = ctx.runs_dir / "compare", ctx.cli / "compare.json"
    cmd = ctx.tool(
        "compare",
        str(model.relative_to(ROOT)),
        "--train",
        "--modes",
        "default,reduce-overhead",
        "--device",
        ctx.device,
        "--out",
        str(out),
        "--json",
        str(js),
        "--timeout",
        f"{max(t - 10, 10):.0f}",
        *ctx.pick(COMPARE_OPTS),
    )
    r = run_cmd(cmd, timeout=t, log=ctx.logs / "compare.log", env=ctx.env, stdout=ctx.cli / "compare.txt")
    ctx.compare = read_json(js) or read_json(out / "compare.json")
    if ctx.compare is None:
        why = "timed out" if r.timed_out else f"exit {r.rc}: {last_line(r.log)}"
        ctx.record(Check("compare default,reduce-overhead", FAIL, f"no compare.json ({why})"))
        rec.status, rec.note = "failed", why
        return
    for m in ctx.compare.get("modes") or []:
        if not isinstance(m, dict):
            continue
        mode, status = m.get("mode"), m.get("status")
        samples = ck.column_samples(m)
        med = f"step median {statistics.median(samples):.4g} ms" if samples else "no step samples"
        # a mode the tool leaves out with a reason (CUDA graphs on a CPU) is no failure off a GPU
        result = SKIPPED if status == "skipped" and ctx.device != "cuda" else ck.verdict(status == "ok")
        ctx.record(
            Check(
                f"compare {mode}",
                result,
                f"status {status}, {med}" + (f": {m.get('reason')}" if m.get("reason") else ""),
            )
        )
        if isinstance(m.get("breakdown"), dict):
            sub = Run(f"compare-{mode}", model, True, str(mode), out / str(mode), bd=m["breakdown"])
            for c in ck.check_busy(ctx, sub):
                ctx.record(c)
    for c in ck.check_compare_quiet(ctx, ctx.compare):
        ctx.record(c)
    if r.rc != 0:
        ctx.record(Check("compare exit status", FAIL, f"exit {r.rc}: {last_line(r.log)}"))
    rec.figures.append(rep.compare_figures(ctx.compare, r.seconds))


# Another process that keeps the device busy for ``seconds`` (argv: device, seconds): on a GPU
# matmuls with a context of its own; on the host (dry run) a loop spinning on one core.
DISTURBER = r"""
import sys, time
device, end = sys.argv[1], time.monotonic() + float(sys.argv[2])
if device == "cuda":
    import torch
    x = torch.randn(2048, 2048, device="cuda")
    (x @ x).sum().item()
print("disturbing", flush=True)
while time.monotonic() < end:
    if device == "cuda":
        for _ in range(20):
            x @ x
        torch.cuda.synchronize()
"""
DISTURBER_START_S = 90.0


def step_load(ctx: Ctx, rec: StepRecord, dl: Deadline) -> None:
    """The main model's breakdown (its cache warm from compare) while another process keeps the
    device busy: the tool must say so, per graph and in its report (``check_disturbed``)."""
    main = label_of(ctx.a.main_model, True, "default")
    t = dl.take(dl.left(), need=20)
    log = ctx.logs / "disturber.log"
    with open(log, "ab") as lf:
        p = subprocess.Popen(
            [ctx.python, "-c", DISTURBER, ctx.device, f"{t + 30:.0f}"],
            cwd=ROOT, env=ctx.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=lf,
            start_new_session=True, text=True,
        )
    with _LIVE_LOCK:
        _LIVE.add(p)
    try:
        ready, _, _ = select.select([p.stdout], [], [], min(DISTURBER_START_S, dl.left()))
        line = p.stdout.readline() if ready else ""
        if "disturbing" not in line:
            why = "did not start in time" if not ready else f"exited: {last_line(log) or 'no output'}"
            ctx.record(Check(f"disturbed load {main}-disturbed", FAIL, f"the disturbing process {why}"))
            rec.status, rec.note = "failed", f"the disturbing process {why}"
            return
        ctx.progress(f"another process (pid {p.pid}) keeps the {ctx.device} busy")
        run = ctx.breakdown(f"{main}-disturbed", _model(ctx, ctx.a.main_model), True, "default", dl,
                            ctx.pick(PROFILE_MATRIX), cap=dl.left() - 5)
    finally:
        _stop(p)
        with _LIVE_LOCK:
            _LIVE.discard(p)
        if p.stdout is not None:
            p.stdout.close()
    text = (ctx.cli / f"breakdown-{run.label}.txt")
    for c in ck.check_disturbed(ctx, run, text.read_text(errors="replace") if text.exists() else ""):
        ctx.record(c)
    if run.rc != 0:
        rec.status, rec.note = "failed", run.cli_error


DISTURBANCE_TABLE_ROW = re.compile(r"^\| \d+ \| ")


def step_disturbance(ctx: Ctx, rec: StepRecord, dl: Deadline) -> None:
    """``scripts/bench_disturbance.py`` on this device: breakdowns of the main model quiet and
    beside each disturber, the figures compared with the quiet run's (docs/statistics.md). Its
    exit status is the verdict: 0 every comparison within its goal, 1 one missed, 2 a run failed."""
    t = dl.take(dl.left(), need=30)
    out = ctx.cli / "bench-disturbance.md"
    cmd = [ctx.python, str(ROOT / "scripts" / "bench_disturbance.py"), "--device", ctx.device,
           "--out", str(ctx.runs_dir / "disturbance"), "--timeout", f"{max(t / 4 - 5, 10):.0f}",
           *ctx.pick(DISTURBANCE_OPTS)]
    r = run_cmd(cmd, timeout=t, log=ctx.logs / "bench-disturbance.log", env=ctx.env, stdout=out)
    text = out.read_text(errors="replace") if out.exists() else ""
    rows = [ln for ln in text.splitlines() if DISTURBANCE_TABLE_ROW.match(ln)]
    numbers = f"{len(rows)} comparison(s) in {r.seconds:.0f} s: " + (
        "; ".join(" ".join(ln.split()) for ln in rows) if rows else "none")
    if r.timed_out:
        ctx.record(Check("disturbance benchmark", FAIL, f"stopped at its limit, {t:.0f} s; {numbers}"))
    elif r.rc == 2 or not rows:
        ctx.record(Check("disturbance benchmark", FAIL, f"exit {r.rc}: {last_line(r.log)}; {numbers}"))
    elif ctx.dry:  # the plumbing ran; a goal met or missed on a loaded 2-core CPU proves nothing
        ctx.record(Check("disturbance benchmark", SKIPPED, f"the goal is judged on a GPU (dry run, exit "
                                                            f"{r.rc}): {numbers}"))
    else:
        ctx.record(Check("disturbance benchmark", ck.verdict(r.rc == 0), numbers))
    rec.figures.append("### The disturbance benchmark (scripts/bench_disturbance.py)\n\n" + text.strip())
def is_script(path: Path) -> bool:
    return re.search(r"^def make_workload\(", path.read_text(errors="replace"), re.M) is None


def model_names(spec: str) -> list[str]:
    have = sorted(p.stem for p in MODELS.glob("*.py") if not p.name.startswith("_"))
    names = have if spec == "all" else [m.strip() for m in spec.split(",") if m.strip()]
    order = {m: i for i, m in enumerate(MODEL_ORDER)}
    return sorted(names, key=lambda m: (order.get(m, len(order)), m))


def matrix_entries(ctx: Ctx) -> list[tuple[str, bool, str]]:
    """What the matrix runs: breadth first, every model once per kind, none that part 1 runs."""
    done = set(ctx.runs) | {label_of(model, True, mode) for _, model, mode in MAIN_RUNS}
    out = []
    for kind in ctx.a.matrix.split(","):
        what, _, mode = kind.strip().partition(":")
        train = what == "train"
        for m in model_names(ctx.a.models):
            label = label_of(m, train, mode or "default")
            if label not in done:
                out.append((m, train, mode or "default"))
                done.add(label)
    return out


def step_matrix(ctx: Ctx, rec: StepRecord, dl: Deadline) -> None:
    entries = matrix_entries(ctx)
    rows: list[dict[str, Any]] = []

    def one(entry: tuple[str, bool, str]) -> None:
        model, train, mode = entry
        label = label_of(model, train, mode)
        path = MODELS / f"{model}.py"
        row = {"label": label, "status": "not run", "note": ""}
        rows.append(row)
        if not path.exists():
            row["note"] = "no such model file"
            return
        if train and is_script(path):
            row["status"], row["note"] = "n/a", "a script runs as written (no --train)"
            return
        try:
            run = ctx.breakdown(label, path, train, mode, dl, ctx.pick(PROFILE_MATRIX), cap=240, summary=True)
        except SkipStep as e:
            row["status"], row["note"] = "skipped", str(e)
            ctx.say(f"SKIPPED run {label}: {e}")
            return
        except Exception as e:  # one run's trouble is its row's, not the other runs'
            row["status"], row["note"] = "error", f"{type(e).__name__}: {e}"
            ctx.record(Check(f"run {label}", FAIL, f"the script raised {row['note']}"))
            return
        row.update(rep.run_row(run))

    pool = ThreadPoolExecutor(max_workers=max(1, ctx.a.jobs))
    try:
        for fut in [pool.submit(one, e) for e in entries]:
            fut.result()
    except BaseException:
        stop_all()  # the runs in flight end now; the queued ones never start
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    order = {label_of(*e): i for i, e in enumerate(entries)}
    rows.sort(key=lambda r: order.get(r["label"], 0))
    rec.figures.append(rep.matrix_figures(rows, ctx.a.jobs, ctx.pick(PROFILE_MATRIX)))
