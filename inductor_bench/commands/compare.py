"""`inductor-bench compare MODEL.py --modes default,max-autotune`: compile modes side by side."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..cli import app, verbose
from ..compare import DEFAULT_MODES, DEFAULT_REPEAT, CompareRun, parse_modes, run_compare
from ..pipeline import DEFAULT_TIMEOUT_S
from ..profile import DEFAULT_WINDOWS
from ..progress import Progress
from ..render.compare import render_compare
from .breakdown import FREEZING_HELP, WINDOWS_HELP, workload_options
from .common import Format, emit_json

MODES_HELP = (
    "Comma-separated torch.compile modes: default, reduce-overhead, max-autotune, "
    "max-autotune-no-cudagraphs."
)


@app.command()
def compare(
    model: Annotated[Path, typer.Argument(help="Model file defining make_workload().")],
    modes: Annotated[str, typer.Option("--modes", help=MODES_HELP)] = ",".join(DEFAULT_MODES),
    no_eager: Annotated[
        bool, typer.Option("--no-eager", help="Leave out the eager (uncompiled) baseline.")
    ] = False,
    repeat: Annotated[
        int, typer.Option("--repeat", "-r", min=1, help="Timed steady-state calls per mode.")
    ] = DEFAULT_REPEAT,
    device: Annotated[
        str, typer.Option("--device", "-d", help="auto (CUDA when available), cuda or cpu.")
    ] = "auto",
    train: Annotated[
        bool, typer.Option("--train", help="Forward + backward of a scalar loss.")
    ] = False,
    dtype: Annotated[
        str, typer.Option("--dtype", help="float32, bfloat16 or float16.")
    ] = "float32",
    autocast: Annotated[
        bool, typer.Option("--autocast", help="Keep the model in float32 and autocast to --dtype.")
    ] = False,
    batch_size: Annotated[
        int | None, typer.Option("--batch-size", "-b", help="Passed to make_workload().")
    ] = None,
    freezing: Annotated[
        bool, typer.Option("--freezing", help=FREEZING_HELP)
    ] = False,
    iterations: Annotated[
        int | None,
        typer.Option(
            "--iterations", "-n", min=1, help="Profiled iterations per graph (default: auto)."
        ),
    ] = None,
    windows: Annotated[
        int, typer.Option("--windows", "-w", min=1, help=WINDOWS_HELP)
    ] = DEFAULT_WINDOWS,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds allowed per worker.")
    ] = DEFAULT_TIMEOUT_S,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Run directory (must not exist or be empty).")
    ] = None,
    runs_dir: Annotated[
        Path, typer.Option("--runs-dir", help="Where new run directories go.")
    ] = Path("runs"),
    json_out: Annotated[
        str | None, typer.Option("--json", help="Also write the result JSON here ('-' = stdout).")
    ] = None,
    fmt: Annotated[
        Format, typer.Option("--format", "-f", help="text or markdown (json: use --json -).")
    ] = Format.text,
) -> None:
    """Compile MODEL in each mode: compile time, steady-state step time, speedups, memory,
    kernels and the per-category breakdown, side by side."""
    mode_list = parse_modes(modes, eager=not no_eager)
    opts = workload_options(model, device, train, dtype, autocast, "default", batch_size, freezing)
    run = CompareRun(
        repeat=repeat, iterations=iterations, windows=windows, timeout=timeout, echo=verbose()
    )
    result, run_dir, err = run_compare(
        opts, mode_list, run=run, out=out, root=runs_dir, progress=Progress()
    )
    if json_out:
        emit_json(result.to_json(), json_out)
    if fmt is Format.json and json_out != "-":
        emit_json(result.to_json(), "-")
    elif json_out != "-":
        typer.echo(render_compare(result, markdown=fmt is Format.markdown), nl=False)
    print(f"run directory: {run_dir}", file=sys.stderr)
    if err is not None:
        raise err
