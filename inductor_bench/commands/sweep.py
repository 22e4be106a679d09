"""`inductor-bench sweep MODEL.py ... --modes default,max-autotune --out DIR`: a zoo of models,
each compared across the modes as one job (one device each), on this machine, a Ray cluster or
Slurm; one table of speedups, the geomean per mode, and a gate against a baseline sweep."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from ..core.compare_modes import DEFAULT_MODES
from ..core.devices import AUTO
from ..core.errors import BenchError, Interrupted, NotComparable, RegressionFound, UsageError, WorkerError
from ..core.rundir import HTML_REPORT_FILE, REPORT_FILE
from ..core.sweep import Cell, Sweep
from ..core.sweep_cells import models, progress_line
from ..core.sweep_table import SweepTable, build_table, comparable_results, gate, workload_changes
from ..render.diff_verdict import gated_change
from ..render.doc import HTML
from ..render.sweep import render_sweep
from ..render.sweep_html import render_sweep_html
from ..runner import stop as stop_signals
from ..runner.compare_timer import STEP_BUDGET_S
from ..runner.compile_modes import check_before_running
from ..runner.rundir import WriteError, write_atomic
from ..runner.sweep_run import LaunchesStopped, load_sweep, read_results, run_sweep
from ..runner.sweep_tool import launch_check
from ..runner.window_plan import DEFAULT_WINDOWS
from ..runner.worker import DEFAULT_TIMEOUT_S
from . import options as o
from .compare import MODES_HELP, NoEager, Repeat, StepBudget, WarmCache
from .exit_status import failure_first, first_of
from .output import emit, write_html
from .sweep_options import (
    Baseline,
    ExecutorKind,
    ExecutorOpt,
    FailOnRegression,
    JobTimeout,
    Models,
    Out,
    RayAddress,
    Shard,
    SlurmCluster,
    SlurmClusterOpt,
    SlurmOpt,
    SlurmPartition,
    SlurmTime,
    compare_args,
)
from .sweep_progress import print_event
from .sweep_setup import (
    check_device,
    check_executor_installed,
    check_executor_options,
    check_jobs_caches,
    executor_factory,
    given_on_command_line,
    load_baseline,
    plan_sweep,
)


def sweep(
    ctx: typer.Context,
    model: Models,
    out: Out,
    modes: Annotated[str, typer.Option("--modes", help=MODES_HELP)] = ",".join(DEFAULT_MODES),
    executor: ExecutorOpt = ExecutorKind.local,
    shard: Shard = None,
    device: o.Device = AUTO,
    train: o.Train = False,
    dtype: o.Dtype = "float32",
    autocast: o.Autocast = False,
    batch_size: o.BatchSize = None,
    freezing: o.Freezing = False,
    no_eager: NoEager = False,
    repeat: Repeat = None,
    step_budget: StepBudget = STEP_BUDGET_S,
    iterations: o.Iterations = None,
    windows: o.Windows = DEFAULT_WINDOWS,
    timeout: o.Timeout = DEFAULT_TIMEOUT_S,
    warm_cache: WarmCache = False,
    job_timeout: JobTimeout = None,
    baseline: Baseline = None,
    fail_on_regression: FailOnRegression = None,
    ray_address: RayAddress = None,
    slurm_partition: SlurmPartition = None,
    slurm_time: SlurmTime = None,
    slurm_opt: SlurmOpt = None,
    slurm_cluster: SlurmClusterOpt = SlurmCluster.slurm,
    json_out: o.JsonOut = None,
    fmt: o.FormatOpt = o.Format.text,
    html_out: o.HtmlOut = None,
) -> None:
    """Compare every MODEL across the modes, one job per model on one device each, and report
    the zoo as one table: speedup over eager with its interval, busy %, top category and
    compile time per model and mode, and the geomean speedup per mode. The same command again
    skips the finished cells and retries the others.

    Exit status: 0; 4 when a job failed, timed out, was killed or was stopped (its cell says
    why; run the same command again to retry it); with --fail-on-regression, 1 for a regression and 5 when a
    model or mode was measured on one side only or too disturbed to judge (most of its own rounds, or
    a slower step on a busy machine), or a model's baseline ran another workload; 2 for bad input;
    74 when a report or a --json or --html file cannot be written (a full disk); 128 + the signal
    when stopped. Where several hold, the status is the first of the stop, the gate's 1 or 5, 4,
    74, its line naming the others.
    """
    o.one_stdout(fmt, json_out, html_out, out)
    if fail_on_regression is not None and baseline is None:
        raise UsageError("--fail-on-regression needs --baseline OLD_DIR (the sweep to judge against)")
    o.check_timeout(timeout)
    o.check_seconds("--step-budget", step_budget)
    o.check_seconds("--job-timeout", job_timeout)
    check_executor_options(executor, {"--ray-address": ray_address}, {
        "--slurm-partition": slurm_partition, "--slurm-time": slurm_time, "--slurm-opt": slurm_opt,
        "--slurm-cluster": given_on_command_line(ctx, "slurm_cluster")})
    check_executor_installed(executor, out)
    old = load_baseline(baseline, out)
    args = compare_args(
        train,
        dtype,
        autocast,
        batch_size,
        freezing,
        no_eager,
        repeat,
        step_budget,
        iterations,
        windows,
        timeout,
        warm_cache,
    )
    plan = plan_sweep(
        model,
        modes,
        no_eager,
        device,
        train,
        dtype,
        autocast,
        batch_size,
        freezing,
        args,
        shard,
        executor.value,
    )
    resolve_device = check_device(executor, slurm_cluster, device, out)
    check_before_running(plan.modes)
    if resolve_device is not None:  # the jobs run here: each compare's cache in the sweep's directory
        check_jobs_caches(out, plan, warm_cache=warm_cache, freezing=freezing)
    make = executor_factory(
        executor, device, out, ray_address, slurm_cluster, (slurm_partition, slurm_time, slurm_opt or [])
    )
    stopped: BaseException | None = None
    queued = executor is ExecutorKind.slurm and slurm_cluster is SlurmCluster.slurm
    printed = print_event(executor, out, queued=queued)
    live: list[Sweep] = []  # the sweep as it is now, saved or not
    tool_changed: LaunchesStopped | None = None

    def on_event(what: str, cell: Cell | None, sweep: Sweep) -> None:
        live[:] = [sweep]
        printed(what, cell, sweep)

    try:
        done = run_sweep(
            out,
            plan,
            make,
            on_event=on_event,
            timeout_s=job_timeout,
            shared_marker=executor is not ExecutorKind.local,
            resolve_device=resolve_device,
            may_launch=launch_check() if resolve_device is not None else lambda: None,  # jobs run here
        )
    except LaunchesStopped as e:
        tool_changed, done = e, e.sweep
    except (KeyboardInterrupt, WriteError) as e:
        if isinstance(e, WriteError) and stop_signals.received() is None:  # no stop: the write is the error
            raise
        # a save that failed: the sweep as it is now, not as last saved; before it began, as saved
        stopped, done = e, live[0] if live else load_sweep(out.absolute())
        if done is None:  # stopped before the sweep was saved: nothing to report
            raise Interrupted("sweep stopped before any job started" + _also_unsaved(e)) from None
    results, unread, shown_from = read_results(out.absolute(), done)
    table = build_table(done, results, shown_from)
    if old is not None:
        old_results, old_unread, _ = read_results(baseline.absolute(), old)
        table.gate = gate(
            comparable_results(old, old_results),
            comparable_results(done, results),
            fail_on_regression,
            (old_unread, unread),
        )
        table.gate.settings = workload_changes(old, done)
    failure = _exit_error(table, stopped, fail_on_regression, out, tool_changed)
    with failure_first(failure, fail_on_regression, saved=out):  # a write failing after it: said with it
        _write_reports(out, table, lambda: emit(render_sweep(table, "json"), lambda f: document(table, f),
                                                fmt, json_out, html_out, links=out))
    if failure is not None:
        raise failure


def document(table: SweepTable, fmt: str) -> str:
    """The sweep's report in ``fmt`` (text, markdown, html, json)."""
    return render_sweep_html(table) if fmt == HTML else render_sweep(table, fmt)


def _write_reports(out: Path, table: SweepTable, emit_report: Callable[[], None]) -> None:
    """The sweep's own reports in ``out``, then ``emit_report`` (the report as the options ask);
    where the sweep's reports cannot be written (a full disk), the report is still on stdout, and
    their failure is the error."""
    try:
        write_atomic(out / REPORT_FILE, render_sweep(table))
        write_html(out / HTML_REPORT_FILE, render_sweep_html(table), out)
    except WriteError:
        with contextlib.suppress(WriteError, UsageError):
            emit_report()
        raise
    emit_report()


def _exit_error(
    table: SweepTable, stopped: BaseException | None, threshold: float | None, out: Path,
    tool_changed: LaunchesStopped | None = None,
) -> BenchError | None:
    """What the command exits with (``exit_status.first_of``): a stop; else the gate's failing
    verdict, its line naming the models that did not finish too; else those models (the
    launches stopped as the tool changed on disk, where they did)."""
    stop = Interrupted(
        f"sweep stopped ({progress_line(table.sweep)}); what was measured is saved in {out}, "
        "and the same command resumes it" + _also_unsaved(stopped)
    ) if stopped is not None else None
    unfinished = _unfinished(table) if tool_changed is None else WorkerError(
        f"sweep launched no other job: {tool_changed}; {progress_line(table.sweep)}; the finished "
        f"cells are kept in {out}: to finish with the tool it started with, install that again and "
        "run the same command; to go on with this one, run the same command (it resumes)"
    )
    return first_of(stop, _gate_failure(table, threshold), unfinished)


def _also_unsaved(stopped: BaseException) -> str:
    """``; also, <the saves that failed>`` of a stopped sweep; empty where none failed."""
    unsaved = stopped if isinstance(stopped, WriteError) else getattr(stopped, "unsaved", None)
    return f"; also, {unsaved}" if isinstance(unsaved, BenchError) else ""


def _gate_failure(table: SweepTable, threshold: float | None) -> BenchError | None:
    g = table.gate if threshold is not None else None  # --baseline alone: a report, not a gate
    why = "; ".join([*g.unmeasured, *(w.describe() for w in g.other_workload)]) if g is not None else ""
    if g is not None and g.regressions:
        what = "; ".join(gated_change(f"{r.model}:{r.mode}", r.step_source, (r.base_ms, r.head_ms),
                                      (r.rel_pct, r.min_rel)) for r in g.regressions)
        return RegressionFound(f"significant step-time regression above {threshold:g}%: {what}"
                               + (f"; no verdict: {why}" if why else ""))
    return NotComparable(f"no verdict: {why}") if why else None


def _unfinished(table: SweepTable) -> BenchError | None:
    bad = table.sweep.unfinished()
    if not bad:
        return None
    return WorkerError(
        f"{len(bad)} of {models(len(table.sweep.cells))} did not finish "
        f"({', '.join(f'{c.model}: {c.status}' for c in bad)}); "
        "the same command retries them"
    )
