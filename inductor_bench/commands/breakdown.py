"""`inductor-bench breakdown MODEL.py`: every compiled graph, time by kernel category,
busy %, ranked kernels."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..core.devices import AUTO
from ..core.errors import Interrupted
from ..core.result_json import result_json
from ..core.vocab import CompileMode
from ..render.breakdown import DEFAULT_TOP
from ..runner.autotune_top import add_autotune_top
from ..runner.compile_modes import check_before_running
from ..runner.pipeline import run_breakdown
from ..runner.roofline import add_roofline
from ..runner.rundir import writing
from ..runner.settings import DEFAULT_PROCESSES
from ..runner.window_plan import DEFAULT_WINDOWS
from ..runner.worker import DEFAULT_TIMEOUT_S
from . import options as o
from .exit_status import failure_first
from .output import emit, note_run_dir, render_result, terminal_width
from .progress import note

Model = Annotated[
    Path,
    typer.Argument(parser=o.a_path, metavar="MODEL",
                   help="Model file: defines make_workload(), or a script that compiles."),
]
ScriptArgs = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="SCRIPT_ARGS",
        help="A script's own arguments (its sys.argv after the file), after --: "
        "inductor-bench breakdown train.py -- --epochs 1 --lr 0.1.",
        show_default=False,
    ),
]
ScriptSeconds = Annotated[
    float | None,
    typer.Option(
        "--script-seconds", metavar="S",
        help="A script: stop it after S seconds (a long training loop); the graphs it compiled by then "
        "are profiled, and its calls counted up to then.",
        show_default=False,
    ),
]
AutotuneTop = Annotated[
    int,
    typer.Option(
        "--autotune-top", min=0, help="Re-benchmark the N most expensive Triton kernels under "
        "max-autotune; on CPU, recompile with mode max-autotune and show the N biggest changes, "
        "kernel by kernel."
    ),
]
RefreshPeaks = Annotated[
    bool,
    typer.Option(
        "--refresh-peaks",
        help="Measure the device's ceilings (bandwidth, matmul TFLOP/s) again instead of "
        "reading this machine's cached ones.",
    ),
]


def breakdown(
    ctx: typer.Context,
    model: Model,
    script_args: ScriptArgs = None,
    device: o.Device = AUTO,
    train: o.Train = False,
    dtype: o.Dtype = "float32",
    autocast: o.Autocast = False,
    mode: o.Mode = CompileMode.DEFAULT,
    batch_size: o.BatchSize = None,
    freezing: o.Freezing = False,
    iterations: o.Iterations = None,
    windows: o.Windows = DEFAULT_WINDOWS,
    processes: o.Processes = DEFAULT_PROCESSES,
    timeout: o.Timeout = DEFAULT_TIMEOUT_S,
    fresh_cache: o.FreshCache = False,
    out: o.Out = None,
    runs_dir: o.RunsDir = Path("runs"),
    json_out: o.JsonOut = None,
    fmt: o.FormatOpt = o.Format.text,
    top: o.Top = DEFAULT_TOP,
    summary: o.Summary = False,
    autotune_top: AutotuneTop = 0,
    html_out: o.HtmlOut = None,
    by: o.ByOpt = o.View.kernel,
    module_depth: o.ModuleDepth = None,
    refresh_peaks: RefreshPeaks = False,
    size: o.Size = None,
    script_seconds: ScriptSeconds = None,
) -> None:
    """Compile MODEL, profile every graph it compiles, and report where the time goes."""
    o.one_stdout(fmt, json_out, html_out, out)
    o.check_runs_dir(runs_dir, out)
    o.check_views(by, module_depth, fmt)
    opts = o.workload_options(model, device, train, dtype, autocast, mode, batch_size, freezing, script_args,
                              script_seconds)
    if script_seconds is not None and script_seconds >= timeout:
        raise o.UsageError(f"--script-seconds {script_seconds:g} must be under --timeout {timeout:g}, the "
                           "compile worker's time, or the worker is stopped before the script")
    settings = o.run_settings(ctx, iterations, windows, timeout, fresh_cache=fresh_cache, processes=processes,
                              sizes=o.sizes_of(size))
    check_before_running([opts.mode])  # a mode the installed torch lacks: refused before a run directory
    with writing():  # the run directory held as being written until the last result saved in it
        result, run_dir, err = run_breakdown(opts, settings, out=out, root=runs_dir)
        if not isinstance(err, Interrupted):  # stopped: no more work
            add_roofline(result, run_dir, settings, refresh=refresh_peaks)
        if autotune_top and result.measured() and not isinstance(err, Interrupted):  # stopped: no more work
            err = add_autotune_top(result, run_dir, opts, autotune_top, settings) or err

    def document(f: str) -> str:
        return render_result(
            result, f, top=top, details=not summary, by=by.value, depth=module_depth, width=terminal_width()
        )

    if result.script and result.mode != opts.mode:
        note(f"note: the script's torch.compile calls compiled in mode {result.mode}; --mode {opts.mode} "
             "applies only to a call that names no mode")
    with failure_first(err, saved=run_dir):  # a write failing after it: said with it
        emit(result_json(result), document, fmt, json_out, html_out, links=run_dir)
    if json_out == "-" or fmt in (o.Format.json, o.Format.html):
        note_run_dir(run_dir)
    if err is not None:
        raise err
