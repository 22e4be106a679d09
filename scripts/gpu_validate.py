"""The GPU validation, in parts that each fit one device command; ``scripts/gpu_validate.sh`` runs it.

    scripts/gpu_validate.sh --list-parts             # the parts, their steps and caps, the device calls
    scripts/gpu_validate.sh --part N OUT_DIR         # on a CUDA machine: one part, within its limit
    scripts/gpu_validate.sh --part N --dry-run OUT_DIR   # on CPU: that part's plumbing

The parts (``scripts/gpu_validate_parts.py`` holds them and every step's cap; ``--list-parts``
prints them with the device call each needs):

 1. ``breakdown --train`` of models/mlp.py and models/transformer_block.py in mode default; on
    each: exit status, busy <= 100%, every graph's kernel time against a plain
    ``torch.profiler`` run of its compiled module, the step time against CUDA events around
    the model's step; ``kernel --max-autotune`` on the slowest Triton kernel of each run
    (config counts, the patch against torch's mode table), those kernels against
    ``triton.testing.do_bench``; the measured ceilings against do_bench;
 2. the same two models in mode reduce-overhead with the same checks; ``compare --modes
    default,reduce-overhead``;
 3. the load readings beside another process on the GPU (the tool must say so); the
    disturbance benchmark (``scripts/bench_disturbance.py``) on the GPU;
 4. every other example model, training and inference, default and reduce-overhead;
 5. ``pytest -m gpu`` (tests/test_gpu_breakdown.py, tests/test_kernel_gpu.py,
    tests/test_call_inputs.py, tests/test_gpu_analyze_shapes.py).

Each step runs within its own cap; the caps of a part add up to its budget less what starting
and finishing take, so every step of a part gets its whole share. A step that crashes or
overruns is recorded and the next one runs. Without ``--part`` every part runs in turn (a
machine without the device's 10-minute limit).

Every check prints one line ``PASS|FAIL|SKIPPED name: numbers``. OUT_DIR receives five files
(a device machine returns at most eight): ``report.md`` (device, versions, date, every figure,
every check with its numbers), ``results.json`` (the same, as data), ``fixtures.tar.gz``
(small real fixtures for the CPU suite: breakdown.json, traces, compiled modules, a few Triton
kernel files, the CLI outputs), ``logs.tar.gz`` and ``console.log``. The report is rewritten
after every step, so a kill loses only the step in flight. Exit status: 0 every check passed
or was skipped, 1 a check failed, 2 no GPU (without --dry-run), bad arguments, or OUT_DIR
not empty.

Nothing is installed: the checkout runs in place (``python -m inductor_bench.cli``, this
repository first on PYTHONPATH). Packages that the image lacks (msgspec) are installed from
wheels in ``.whl/`` (``--wheels``) into a private directory when they are missing.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_validate_checks as ck  # noqa: E402
import gpu_validate_parts as parts  # noqa: E402
from gpu_validate_checks import FAIL, Check  # noqa: E402
from gpu_validate_commands import FINISH_RESERVE_S, ROOT, Aborted, Budget, Deadline, stop_all  # noqa: E402, F401
from gpu_validate_context import MAIN_RUNS, Ctx, Step, StepRecord, selected  # noqa: E402, F401
from gpu_validate_probe import base_env, install_wheels, probe  # noqa: E402
from gpu_validate_steps_part1 import (  # noqa: E402, F401
    check_pytest,
    main_breakdown,
    parse_pytest,
    run_checks,
    step_kernel,
    step_peaks,
    step_pytest,
    step_quiet,
)
from gpu_validate_steps_parts23 import (  # noqa: E402, F401
    is_script,
    matrix_entries,
    step_compare,
    step_disturbance,
    step_load,
    step_matrix,
)

WATCHDOG_S = parts.WATCHDOG_S  # past budget + this, the driver stops the step in flight and writes the report
MATRIX_GPU = "train:default,train:reduce-overhead,inference:default,inference:reduce-overhead"
MATRIX_DRY = "inference:default"

STEPS: dict[str, tuple[str, Callable[[Ctx, StepRecord, Deadline], None]]] = {
    **{f"breakdown:{key}": (f"breakdown {model} --train ({mode})", main_breakdown(key))
       for key, model, mode in MAIN_RUNS},
    "check:quiet": ("no other GPU process in the quiet mlp run", step_quiet),
    "check:graph-time": ("graph kernel time vs a plain profiler run, every main run in mode default",
                         run_checks(ck.check_graph_kernel_time, ("default",))),
    "check:step-time": ("step time vs CUDA events, every main run in mode default",
                        run_checks(ck.check_step_time, ("default",))),
    "check:graph-time-ro": ("graph kernel time vs a plain profiler run, every main run in mode "
                            "reduce-overhead", run_checks(ck.check_graph_kernel_time, ("reduce-overhead",))),
    "check:step-time-ro": ("step time vs CUDA events, every main run in mode reduce-overhead",
                           run_checks(ck.check_step_time, ("reduce-overhead",))),
    "kernel": ("kernel --max-autotune on the top Triton kernels", step_kernel),
    "check:do-bench": ("top Triton kernels vs triton.testing.do_bench",
                       run_checks(ck.check_do_bench, ("default",))),
    "check:peaks": ("the measured ceilings vs do_bench (copy, matmuls)", step_peaks),
    "pytest": ("pytest -m gpu", step_pytest),
    "compare": ("compare MAIN --train --modes default,reduce-overhead", step_compare),
    "load": ("breakdown MAIN --train beside another process on the device", step_load),
    "disturbance": ("the disturbance benchmark (scripts/bench_disturbance.py)", step_disturbance),
    "matrix": ("breakdown of the other example models", step_matrix),
}


def plan(numbers: list[int]) -> list[Step]:
    """The steps of the given parts, in order, with their caps."""
    return [Step(c.key, STEPS[c.key][0], STEPS[c.key][1], c.cap_s, c.need_s, c.dry_cap_s)
            for n in numbers for c in parts.part(n).steps]


# -- main ----------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="gpu_validate", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("out_dir", metavar="OUT_DIR", nargs="?",
                    help="where the report and the bundles go (new or empty)")
    ap.add_argument("--part", type=int, default=None, choices=[p.number for p in parts.PARTS],
                    help="run one part (one device command); default: every part in turn")
    ap.add_argument("--list-parts", action="store_true",
                    help="print the parts, their steps and caps, and exit")
    ap.add_argument(
        "--dry-run", action="store_true", help="on CPU: the same steps with --device cpu, tiny counts"
    )
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds for everything (default: the part's, scripts/gpu_validate_parts.py)")
    ap.add_argument(
        "--models",
        default=None,
        help="comma-separated model names for the matrix, or 'all' (default: all; dry run: mlp)",
    )
    ap.add_argument("--main-model", default="mlp", help="the model of compare and the load runs")
    ap.add_argument(
        "--matrix",
        default=None,
        help=f"kinds of run for the matrix (default {MATRIX_GPU}; dry run {MATRIX_DRY})",
    )
    ap.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="matrix breakdowns at a time (default 3; dry run 1); the main runs always run alone",
    )
    ap.add_argument("--top-kernels", type=int, default=1,
                    help="Triton kernels of each default main run for kernel / do_bench")
    ap.add_argument("--only", default="", help="comma-separated step keys (or prefixes before ':') to run")
    ap.add_argument("--skip", default="", help="comma-separated step keys (or prefixes) to leave out")
    ap.add_argument("--work", default=None, help="working directory (default: a fresh temporary directory)")
    ap.add_argument("--wheels", default=str(ROOT / ".whl"), help="wheels for missing packages (msgspec)")
    ap.add_argument("--python", default=sys.executable, help="the interpreter for the tool and the tests")
    a = ap.parse_args(argv)
    if a.list_parts:
        return a
    if a.out_dir is None:
        ap.error("OUT_DIR is required")
    a.t0 = time.monotonic()
    a.argv = list(sys.argv[1:] if argv is None else argv)
    a.parts = [a.part] if a.part is not None else [p.number for p in parts.PARTS]
    chosen = [parts.part(n) for n in a.parts]
    a.budget = a.budget or sum(p.dry_budget_s if a.dry_run else p.budget_s for p in chosen)
    a.models = a.models or ("mlp" if a.dry_run else "all")
    a.matrix = a.matrix or (MATRIX_DRY if a.dry_run else MATRIX_GPU)
    a.jobs = a.jobs or (1 if a.dry_run else 3)
    a.only = [s.strip() for s in a.only.split(",") if s.strip()]
    a.skip = [s.strip() for s in a.skip.split(",") if s.strip()]
    steps = plan(a.parts)
    keys = {s.key for s in steps} | {s.key.split(":")[0] for s in steps}
    unknown = [s for s in a.only + a.skip if s not in keys]
    if unknown:
        ap.error(f"unknown step(s) {', '.join(unknown)}; steps: {', '.join(s.key for s in steps)}")
    return a


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    if a.list_parts:
        try:
            print(parts.listing(), flush=True)
        except BrokenPipeError:  # `--list-parts | head`: the reader has what it wanted
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    env = base_env(a.dry_run)
    info = probe(a.python, env, need_cuda=not a.dry_run)
    if "torch_error" in info:
        print(f"gpu_validate: torch is not usable with {a.python}: {info['torch_error']}", file=sys.stderr)
        return 2
    if not a.dry_run and not info.get("cuda"):
        print(
            f"gpu_validate: no CUDA GPU here (torch {info.get('torch')}: torch.cuda.is_available() is "
            "False); nothing was run. Use --dry-run to check the script's plumbing on CPU.",
            file=sys.stderr,
        )
        return 2
    out = Path(a.out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        print(f"gpu_validate: {out} already exists and is not an empty directory", file=sys.stderr)
        return 2
    ctx = Ctx(a, info, env)

    def on_signal(signum: int, _frame: Any) -> None:
        raise Aborted(f"{signal.Signals(signum).name} after {ctx.budget.elapsed():.0f} s")

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM):
        signal.signal(s, on_signal)
    signal.alarm(
        max(1, int(a.budget + WATCHDOG_S - (time.monotonic() - a.t0)))
    )  # the watchdog: past the budget, stop and write the report
    try:
        note = install_wheels(ctx)
        if note:
            ctx.progress(note)
        ctx.info["wheels"] = note
        if "inductor_bench.cli" in ctx.info.get("missing", {}):
            ctx.record(
                Check(
                    "import inductor_bench",
                    FAIL,
                    ctx.info["missing"]["inductor_bench.cli"]
                    + " (carry the missing wheels: scripts/gpu_validate.sh --fetch-wheels)",
                )
            )
        ctx.write_report()
        for step in plan(a.parts):
            ctx.run_step(step)
    except Aborted as e:
        ctx.aborted = str(e)
        stop_all()
        running = next((s.key for s in ctx.steps if s.status == "aborted"), "none")
        ctx.record(
            Check(
                "validation run", FAIL, f"stopped by {e} during step {running}; the later steps did not run"
            )
        )
    finally:
        signal.alarm(0)
        for s in (signal.SIGTERM, signal.SIGINT):
            signal.signal(s, signal.SIG_IGN)
        signal.signal(signal.SIGALRM, lambda *_: os._exit(1))
        signal.alarm(int(FINISH_RESERVE_S + 10))  # finishing may not hang either
        ctx.finish()
        signal.alarm(0)
    return 1 if ctx.failed() or ctx.aborted else 0


if __name__ == "__main__":
    sys.exit(main())
