"""`inductor-bench sweep MODEL.py ... --modes default,max-autotune --out DIR`: a zoo of models,
each compared across the modes as one job (one device each), on this machine, a Ray cluster or
Slurm; one table of speedups, the geomean per mode, and a gate against a baseline sweep."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..core.compare import DEFAULT_MODES, parse_modes
from ..core.devices import AUTO, HOST_BACKEND
from ..core.errors import (
    BenchError,
    Interrupted,
    NotComparable,
    RegressionFound,
    ResultError,
    UsageError,
    WorkerError,
)
from ..core.rundir import COMPARE_FILE, HTML_REPORT_FILE, REPORT_FILE, load_compare
from ..core.sweep import (
    LOGS_DIR,
    SWEEP_FILE,
    Cell,
    Sweep,
    attempt_dir,
    grid_size,
    how_it_ended,
    new_sweep,
    parse_shard,
    progress_line,
    unreserved,
)
from ..core.sweep_table import SweepTable, build_table, comparable_results, gate, workload_changes
from ..core.vocab import CompileMode
from ..core.workload import FACTORY_KIND
from ..render.doc import HTML
from ..render.format import pct, seconds
from ..render.sweep import render_sweep
from ..render.sweep_html import render_sweep_html
from ..runner.cache import check_caches
from ..runner.compare import STEP_BUDGET_S, model_names
from ..runner.compile_modes import check_before_running
from ..runner.rundir import now, write_atomic
from ..runner.sweep_exec import Executor, LocalExecutor, local_device, local_slots
from ..runner.sweep_run import load_sweep, read_results, run_sweep
from ..runner.window_plan import DEFAULT_WINDOWS
from ..runner.worker import DEFAULT_TIMEOUT_S
from . import options as o
from .compare import MODES_HELP, NoEager, Repeat, StepBudget, WarmCache
from .output import emit, saved_in, write_html
from .progress import note
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
    128 + the signal when stopped.
    """
    o.one_stdout(fmt, json_out, html_out, out)
    if fail_on_regression is not None and baseline is None:
        raise UsageError("--fail-on-regression needs --baseline OLD_DIR (the sweep to judge against)")
    o.check_timeout(timeout)
    o.check_seconds("--step-budget", step_budget)
    o.check_seconds("--job-timeout", job_timeout)
    _check_executor_options(executor, {"--ray-address": ray_address}, {
        "--slurm-partition": slurm_partition, "--slurm-time": slurm_time, "--slurm-opt": slurm_opt,
        "--slurm-cluster": _given(ctx, "slurm_cluster")})
    _check_executor_installed(executor, out)
    old = _baseline(baseline, out)
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
    plan = _plan(
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
    resolve_device = _check_device(executor, slurm_cluster, device, out)
    check_before_running(plan.modes)
    if resolve_device is not None:  # the jobs run here: each compare's cache in the sweep's directory
        _check_caches(out, plan, warm_cache=warm_cache, freezing=freezing)
    make = _executor_factory(
        executor, device, out, ray_address, slurm_cluster, (slurm_partition, slurm_time, slurm_opt or [])
    )
    stopped: BaseException | None = None
    try:
        done = run_sweep(
            out,
            plan,
            make,
            on_event=_print_event(
                executor, out, queued=executor is ExecutorKind.slurm and slurm_cluster is SlurmCluster.slurm
            ),
            timeout_s=job_timeout,
            shared_marker=executor is not ExecutorKind.local,
            resolve_device=resolve_device,
        )
    except KeyboardInterrupt as e:
        stopped, done = e, load_sweep(out.absolute())
        if done is None:  # stopped before the sweep was saved: nothing to report
            raise Interrupted("sweep stopped before any job started") from None
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
    with saved_in(out):
        _write_reports(out, table)
        emit(render_sweep(table, "json"), lambda f: document(table, f), fmt, json_out, html_out, links=out)
    failure = _exit_error(table, stopped, fail_on_regression, out)
    if failure is not None:
        raise failure


def _check_executor_installed(kind: ExecutorKind, out: Path) -> None:
    """A new sweep whose executor's library is not installed is refused before its directory
    is made (a saved sweep's directory re-renders without it while no cell is left to run)."""
    if (out / SWEEP_FILE).is_file():
        return
    if kind is ExecutorKind.ray:
        from ..runner.sweep_exec_ray import import_ray

        import_ray()
    elif kind is ExecutorKind.slurm:
        from ..runner.sweep_exec_slurm import import_submitit

        import_submitit()


def _check_executor_options(kind: ExecutorKind, ray: dict[str, object], slurm: dict[str, object]) -> None:
    """An executor's own options given for another executor are refused, never ignored."""
    for owner, given in ((ExecutorKind.ray, ray), (ExecutorKind.slurm, slurm)):
        if kind is not owner and (named := [k for k, v in given.items() if v]):
            raise UsageError(f"{', '.join(named)}: for --executor {owner.value}, not {kind.value}")


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether the option ``name`` was given on the command line (not left at its default)."""
    return getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"


def _baseline(path: Path | None, out: Path) -> Sweep | None:
    if path is None:
        return None
    old = load_sweep(path.absolute()) if path.is_dir() else None
    if old is None:
        why = "not a sweep's directory (no sweep.json)" if path.exists() else "no such directory"
        raise UsageError(f"--baseline {path}: {why}")
    if path.resolve() == out.resolve():  # as diff says of BASE and HEAD that are one result
        note(f"note: --baseline {path} is this sweep's own --out: each model is judged against itself, so no "
             "change can show; give the earlier sweep's directory")
    return old


def _plan(
    models: list[Path],
    modes: str,
    no_eager: bool,
    device: str,
    train: bool,
    dtype: str,
    autocast: bool,
    batch_size: int | None,
    freezing: bool,
    args: list[str],
    shard: str | None,
    executor: str,
) -> Sweep:
    mode_list = [m for m in parse_modes(modes, eager=not no_eager) if m != CompileMode.EAGER]
    for m in models:
        opts = o.workload_options(
            m, device, train, dtype, autocast, CompileMode.DEFAULT, batch_size, freezing)
        if opts.kind != FACTORY_KIND:
            raise UsageError(f"{m}: sweep needs a make_workload() factory, as compare does")
    paths = [str(m.resolve()) for m in models]
    if len(set(paths)) != len(paths):
        raise UsageError("a model file is given twice: each is one cell of the sweep")
    return new_sweep(
        paths,
        unreserved(model_names(paths), (LOGS_DIR, SWEEP_FILE, REPORT_FILE, HTML_REPORT_FILE)),
        mode_list,
        args,
        device=device,
        shard=parse_shard(shard),
        executor=executor,
        created=now(),
    )


def _check_device(kind: ExecutorKind, cluster: SlurmCluster, device: str, out: Path):
    """Where the jobs run on this machine: DeviceError, before anything is written, when
    ``device`` cannot run here and a cell is left to run (a finished sweep only renders, on
    any machine); then the function telling which device a ``--device`` value runs on here
    (``auto`` and ``cpu`` are the same sweep on a machine without a GPU). On a cluster each
    node resolves ``auto`` itself: None, the values must match."""
    if kind is ExecutorKind.ray or (kind is ExecutorKind.slurm and cluster is not SlurmCluster.local):
        return None
    saved = load_sweep(out.absolute()) if (out / SWEEP_FILE).is_file() else None
    if saved is None or saved.unfinished():
        local_device(device)
    auto = local_device(AUTO)
    return lambda d: auto if d == AUTO else d


def _check_caches(out: Path, plan: Sweep, *, warm_cache: bool, freezing: bool) -> None:
    """Refuse, before the sweep's directory is made, a cache its compares on the host could not
    compile in (``runner.cache.check_caches``): each job would fail after its compile, and so
    would every retry. A finished sweep only renders."""
    saved = load_sweep(out.absolute()) if (out / SWEEP_FILE).is_file() else None
    if saved is None or saved.unfinished():
        cells = [f"{attempt_dir(c)}/{m}" for c in plan.cells for m in plan.modes]
        check_caches(out.absolute(), cells, fresh=not warm_cache, freezing=freezing, device=plan.device,
                     columns_advice="give the model files names without them")


def _executor_factory(
    kind: ExecutorKind, device: str, out: Path, ray_address: str | None, cluster: SlurmCluster, slurm: tuple
) -> object:
    """A function making the executor (only called when a cell is left to run)."""

    def make() -> Executor:
        if kind is ExecutorKind.ray:
            import logging

            from ..runner.sweep_exec_ray import RayExecutor

            return RayExecutor(device, ray_address, logging_level=logging.WARNING)
        if kind is ExecutorKind.slurm:
            from ..runner.sweep_exec_slurm import SlurmExecutor, slurm_params

            local = cluster is SlurmCluster.local
            return SlurmExecutor(
                out.absolute() / ".submitit",
                gpu=device != HOST_BACKEND.name,
                cluster=cluster.value,
                slots=local_slots(device) if local else None,
                params=slurm_params(*slurm),
            )
        return LocalExecutor(local_slots(device))

    return make


def _print_event(kind: ExecutorKind, out: Path, *, queued: bool):
    """Progress on stderr: a line as the sweep starts, then one per job as it starts (or, on
    Slurm, is submitted to its queue) and ends, with the count."""
    started = "submitted" if queued else "started"

    def on_event(what: str, cell: Cell | None, sweep: Sweep) -> None:
        if what == "plan":
            left = len(sweep.unfinished())
            line = (
                f"sweep: {grid_size(sweep)}, "
                f"{len(sweep.cells) - left} done before, {left} to run on the {kind.value} executor"
            )
        elif what == "lost":  # a done cell whose result cannot be read: measured again
            line = f"sweep: {cell.model}: {cell.reason}; it runs again"
        elif what == "start":
            where = f" on {cell.where}" if cell.where else ""
            tries = f" (attempt {cell.attempts})" if cell.attempts > 1 else ""
            line = f"sweep: {cell.model} {started}{where}{tries}; {progress_line(sweep, live=True)}"
        else:
            took = seconds(cell.seconds) if cell.seconds is not None else None  # as the notes say it
            saved_in = _measured_in(out, cell)
            ended = how_it_ended(cell, took, saved_in)
            line = f"sweep: {cell.model} {ended}; {progress_line(sweep, live=True)}"
        note(line)

    return on_event


def _measured_in(out: Path, cell: Cell) -> str | None:
    """The cell's run directory where its compare saved a column it measured; else None."""
    path = out / cell.run_dir / COMPARE_FILE if cell.run_dir else None
    try:
        r = load_compare(path) if path is not None and path.is_file() else None
    except ResultError:
        return None
    return str(out / cell.run_dir) if r is not None and any(m.ok for m in r.modes) else None


def document(table: SweepTable, fmt: str) -> str:
    """The sweep's report in ``fmt`` (text, markdown, html, json)."""
    return render_sweep_html(table) if fmt == HTML else render_sweep(table, fmt)


def _write_reports(out: Path, table: SweepTable) -> None:
    write_atomic(out / REPORT_FILE, render_sweep(table))
    write_html(out / HTML_REPORT_FILE, render_sweep_html(table), out)


def _exit_error(
    table: SweepTable, stopped: BaseException | None, threshold: float | None, out: Path
) -> BenchError | None:
    if stopped is not None:
        return Interrupted(
            f"sweep stopped ({progress_line(table.sweep)}); what was measured is saved in {out}, "
            "and the same command resumes it"
        )
    g = table.gate if threshold is not None else None  # --baseline alone: a report, not a gate
    why = "; ".join([*g.unmeasured, *(w.describe() for w in g.other_workload)]) if g is not None else ""
    if g is not None and g.regressions:
        what = ", ".join(f"{r.model}:{r.mode} {pct(r.rel_pct, signed=True)}" for r in g.regressions)
        return RegressionFound(f"significant step-time regression above {threshold:g}%: {what}"
                               + (f"; no verdict: {why}" if why else ""))
    if why:
        return NotComparable(f"no verdict: {why}")
    bad = table.sweep.unfinished()
    if bad:
        return WorkerError(
            f"{len(bad)} of {len(table.sweep.cells)} models did not finish "
            f"({', '.join(f'{c.model}: {c.status}' for c in bad)}); "
            "the same command retries them"
        )
    return None
