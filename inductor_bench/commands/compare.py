"""`inductor-bench compare MODEL.py --modes default,max-autotune`: compile modes side by side."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..core.compare import CompareResult
from ..core.compare_gate import not_measured, regressions
from ..core.compare_modes import DEFAULT_MODES, parse_modes
from ..core.devices import AUTO
from ..core.errors import BenchError, Interrupted, NotComparable, RegressionFound, UsageError
from ..core.modes import COMMON as COMMON_MODES
from ..core.result_json import result_json
from ..core.unmeasured import no_verdict_line
from ..core.vocab import CompileMode, StepSource
from ..render.compare import render_compare
from ..render.diff_verdict import gated_figures
from ..runner.compare import run_compare
from ..runner.compare_timer import DEFAULT_REPEAT, STEP_BUDGET_S, CompareRun
from ..runner.roofline import add_compare_roofline
from ..runner.rundir import writing
from ..runner.settings import DEFAULT_PROCESSES
from ..runner.window_plan import DEFAULT_WINDOWS
from ..runner.worker import DEFAULT_TIMEOUT_S
from . import options as o
from .exit_status import failure_first, first_of
from .output import emit, note_run_dir

MODES_HELP = (
    "Comma-separated torch.compile modes: " + ", ".join(COMMON_MODES) + ", or others the "
    "installed torch lists (e.g. lite in 2.11)."
)

Models = Annotated[
    list[Path],
    typer.Argument(
        parser=o.a_path,
        metavar="MODEL",
        help="Model file defining make_workload(); give several (e.g. before and after a change, "
        "or the same file twice for a check of the noise) to compare them mode by mode, the "
        "first being the base.",
        show_default=False,
    ),
]
Modes = Annotated[str, typer.Option("--modes", help=MODES_HELP)]
NoEager = Annotated[bool, typer.Option("--no-eager", help="Leave out the eager (uncompiled) baseline.")]
# Each column's calls run twice (its compile worker, then the interleaved timing worker), and
# every call is kept twice in compare.json: at 10000, mlp's compile worker alone took 900 s
# beside other compiles, the default --timeout; 50 times the automatic budget's 200 calls
# (docs/compare-and-diff.md).
MAX_REPEAT = 10_000
REPEAT_WHY = ("each column's calls run twice and are kept twice (at 10000, a 1 ms step's compile "
              "worker ran to the default --timeout beside other work)")
Repeat = Annotated[
    int | None,
    typer.Option("--repeat", "-r", min=1,
                 callback=o.at_most(MAX_REPEAT, REPEAT_WHY),
                 help=f"Time exactly this many steady-state calls per mode, at most {MAX_REPEAT} (default: "
                 "as many as fit in --step-budget, 10 to 200)."),
]
WarmCache = Annotated[
    bool,
    typer.Option("--warm-cache", help="Compile in inductor-bench's private cache reused across runs "
                 "(default: each mode compiles cold, so compile times compare)."),
]
FailOnRegression = Annotated[
    float | None,
    o.fail_on_regression("a later model file's step time (against the first's: a merge gate)"),
]
Names = Annotated[
    str | None,
    typer.Option(
        "--names",
        metavar="A,B,...",
        help="Names for the model files, in order (e.g. base,head); default: their file names, "
        "spaces and quotes made _, made unique (mlp, mlp-2). With one model file, its name "
        "titles the comparison.",
    ),
]
StepBudget = Annotated[
    float,
    typer.Option("--step-budget",
                 help="Seconds of steady-state step timing per mode, above 0 (its calls times their "
                 "median, so calls stalled by other processes do not use it up)."),
]


def compare(
    ctx: typer.Context,
    model: Models,
    modes: Modes = ",".join(DEFAULT_MODES),
    no_eager: NoEager = False,
    repeat: Repeat = DEFAULT_REPEAT,
    step_budget: StepBudget = STEP_BUDGET_S,
    device: o.Device = AUTO,
    train: o.Train = False,
    dtype: o.Dtype = "float32",
    autocast: o.Autocast = False,
    batch_size: o.BatchSize = None,
    freezing: o.Freezing = False,
    iterations: o.Iterations = None,
    windows: o.Windows = DEFAULT_WINDOWS,
    processes: o.Processes = DEFAULT_PROCESSES,
    timeout: o.Timeout = DEFAULT_TIMEOUT_S,
    warm_cache: WarmCache = False,
    out: o.Out = None,
    runs_dir: o.RunsDir = Path("runs"),
    json_out: o.JsonOut = None,
    fmt: o.FormatOpt = o.Format.text,
    html_out: o.HtmlOut = None,
    fail_on_regression: FailOnRegression = None,
    names: Names = None,
) -> None:
    """Compile MODEL in each mode: compile time, steady-state step time, speedups, memory,
    kernels and the per-category breakdown, side by side. The step times of every column are
    taken in one process, their calls interleaved, so that verdicts hold on a noisy machine.

    A --json or --html file that cannot be written (a full disk) exits 74. Where several hold, the
    status is the first of a stop (128 + the signal), --fail-on-regression's regression (1) or no
    verdict (5), a failed model (3) or worker (4), 74, its line naming the others."""
    o.one_stdout(fmt, json_out, html_out, out)
    o.check_runs_dir(runs_dir, out)
    o.check_seconds("--step-budget", step_budget)
    mode_list = parse_modes(modes, eager=not no_eager)
    if fail_on_regression is not None and len(model) < 2:
        raise UsageError("--fail-on-regression needs two or more model files: the first is the base")
    opts, *also = [
        o.workload_options(m, device, train, dtype, autocast, CompileMode.DEFAULT, batch_size, freezing)
        for m in model
    ]
    run = CompareRun(
        repeat=repeat,
        settings=o.run_settings(
            ctx, iterations, windows, timeout, fresh_cache=not warm_cache, processes=processes
        ),
        step_budget_s=step_budget,
    )
    labels = [n.strip() for n in names.split(",")] if names is not None else None
    with writing():  # the run directory held as being written until the last result saved in it
        result, run_dir, err = run_compare(
            opts, mode_list, run=run, out=out, root=runs_dir, also=also, names=labels
        )
        if not isinstance(err, Interrupted):  # stopped: no more work
            add_compare_roofline(result, run_dir, run.settings)
    failure = exit_error(result, err, fail_on_regression)
    with failure_first(failure, fail_on_regression, saved=run_dir):  # a write failing after it: said with it
        emit(result_json(result), lambda f: render_compare(result, f, threshold_pct=fail_on_regression), fmt,
             json_out, html_out, links=run_dir)
    note_run_dir(run_dir)
    if failure is not None:
        raise failure


def exit_error(result: CompareResult, err: BenchError | None, threshold: float | None) -> BenchError | None:
    """What the command exits with (``exit_status.first_of``): Ctrl-C; else, with a gate, its
    failing verdict: a regression above ``threshold`` %, its line naming the run's error too,
    or a column or a graph measured on one side only, its line naming each and why (the run's
    error among them); else the run's error."""
    gate = _gate(result, threshold) if threshold is not None else None
    if isinstance(gate, NotComparable) and not isinstance(err, Interrupted):
        return gate
    return first_of(err, gate)


def _gate(result: CompareResult, threshold: float) -> BenchError | None:
    bad = regressions(result, threshold)
    if bad:
        what = "; ".join(gated_figures(m.label, StepSource.MODEL, result.step(b).ms, result.step(m).ms, ch)
                         for b, m, ch in bad)
        return RegressionFound(f"significant step-time regression above {threshold:g}%: {what}")
    gaps = not_measured(result)
    if gaps:
        return NotComparable(no_verdict_line(gaps))
    return None
