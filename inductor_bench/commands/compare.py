"""`inductor-bench compare MODEL.py --modes default,max-autotune`: compile modes side by side."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..core.compare import DEFAULT_MODES, parse_modes
from ..core.devices import AUTO
from ..core.vocab import CompileMode
from ..runner.compare import DEFAULT_REPEAT, CompareRun, run_compare
from ..runner.profile import DEFAULT_WINDOWS
from ..runner.worker import DEFAULT_TIMEOUT_S
from . import options as o
from .output import emit, note_run_dir, render_result

MODES_HELP = "Comma-separated torch.compile modes: " + ", ".join(CompileMode.ALL[:-1]) + "."

Model = Annotated[Path, typer.Argument(help="Model file defining make_workload().")]
Modes = Annotated[str, typer.Option("--modes", help=MODES_HELP)]
NoEager = Annotated[bool, typer.Option("--no-eager", help="Leave out the eager (uncompiled) baseline.")]
Repeat = Annotated[int, typer.Option("--repeat", "-r", min=1, help="Timed steady-state calls per mode.")]


def compare(
    ctx: typer.Context,
    model: Model,
    modes: Modes = ",".join(DEFAULT_MODES),
    no_eager: NoEager = False,
    repeat: Repeat = DEFAULT_REPEAT,
    device: o.Device = AUTO,
    train: o.Train = False,
    dtype: o.Dtype = "float32",
    autocast: o.Autocast = False,
    batch_size: o.BatchSize = None,
    freezing: o.Freezing = False,
    iterations: o.Iterations = None,
    windows: o.Windows = DEFAULT_WINDOWS,
    timeout: o.Timeout = DEFAULT_TIMEOUT_S,
    out: o.Out = None,
    runs_dir: o.RunsDir = Path("runs"),
    json_out: o.JsonOut = None,
    fmt: o.FormatOpt = o.Format.text,
) -> None:
    """Compile MODEL in each mode: compile time, steady-state step time, speedups, memory,
    kernels and the per-category breakdown, side by side."""
    mode_list = parse_modes(modes, eager=not no_eager)
    opts = o.workload_options(
        model, device, train, dtype, autocast, CompileMode.DEFAULT, batch_size, freezing
    )
    run = CompareRun(repeat=repeat, settings=o.run_settings(ctx, iterations, windows, timeout))
    result, run_dir, err = run_compare(opts, mode_list, run=run, out=out, root=runs_dir)
    emit(result.to_json(), lambda: render_result(result, fmt), fmt, json_out)
    note_run_dir(run_dir)
    if err is not None:
        raise err
