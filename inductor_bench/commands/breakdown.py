"""`inductor-bench breakdown MODEL.py`: every compiled graph, time by kernel category,
busy %, ranked kernels."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from ..cli import app, verbose
from ..pipeline import DEFAULT_TIMEOUT_S, run_breakdown
from ..profile import DEFAULT_WINDOWS
from ..progress import Progress
from ..render.text import DEFAULT_TOP, render_breakdown
from ..workload import WorkloadOptions
from .common import Format, emit_json

DEVICE_HELP = "auto (CUDA when available), cuda or cpu."
FREEZING_HELP = (
    "Inference only: compile with weights frozen into constants (torch._inductor.config.freezing); "
    "CPU GEMM templates of max-autotune need it."
)
WINDOWS_HELP = (
    "Profiler sessions per graph, the fastest kept: a session can run slow from start to end "
    "(heap fragmentation under the profiler), the next one not."
)
MODE_HELP = "torch.compile mode: default, reduce-overhead, max-autotune, max-autotune-no-cudagraphs."


def workload_options(
    model: Path,
    device: str,
    train: bool,
    dtype: str,
    autocast: bool,
    mode: str,
    batch_size: int | None,
    freezing: bool = False,
) -> WorkloadOptions:
    return WorkloadOptions(
        path=str(model),
        device=device,
        train=train,
        dtype=dtype,
        autocast=autocast,
        mode=mode,
        batch_size=batch_size,
        freezing=freezing,
    ).validate()


@app.command()
def breakdown(
    model: Path = typer.Argument(..., help="Model file: defines make_workload(), or a script that compiles."),
    device: str = typer.Option("auto", "--device", "-d", help=DEVICE_HELP),
    train: bool = typer.Option(
        False, "--train", help="Forward + backward of a scalar loss (default: inference)."
    ),
    dtype: str = typer.Option("float32", "--dtype", help="float32, bfloat16 or float16."),
    autocast: bool = typer.Option(
        False, "--autocast", help="Keep the model in float32 and autocast to --dtype."
    ),
    mode: str = typer.Option("default", "--mode", "-m", help=MODE_HELP),
    batch_size: int | None = typer.Option(None, "--batch-size", "-b", help="Passed to make_workload()."),
    freezing: bool = typer.Option(False, "--freezing", help=FREEZING_HELP),
    iterations: int | None = typer.Option(
        None, "--iterations", "-n", min=1, help="Profiled iterations per window (default: auto, 10-200)."
    ),
    windows: int = typer.Option(DEFAULT_WINDOWS, "--windows", "-w", min=1, help=WINDOWS_HELP),
    timeout: float = typer.Option(DEFAULT_TIMEOUT_S, "--timeout", help="Seconds allowed per worker."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Run directory (must not exist or be empty)."),
    runs_dir: Path = typer.Option(Path("runs"), "--runs-dir", help="Where new run directories go."),
    json_out: str | None = typer.Option(
        None, "--json", help="Also write the result JSON here ('-' = stdout)."
    ),
    fmt: Format = typer.Option(
        Format.text, "--format", "-f", help="Report format: text, markdown, or json (the result on stdout)."
    ),
    top: int = typer.Option(DEFAULT_TOP, "--top", help="Kernels shown per table."),
    summary: bool = typer.Option(False, "--summary", help="Leave out the per-graph kernel tables."),
    autotune_top: int = typer.Option(
        0, "--autotune-top", min=0, help="Re-benchmark the N most expensive kernels under max-autotune."
    ),
) -> None:
    """Compile MODEL, profile every graph it compiles, and report where the time goes."""
    opts = workload_options(model, device, train, dtype, autocast, mode, batch_size, freezing)
    progress = Progress()
    result, run_dir, err = run_breakdown(
        opts,
        out=out,
        root=runs_dir,
        iterations=iterations,
        windows=windows,
        timeout=timeout,
        progress=progress,
        echo=verbose(),
    )
    if autotune_top and result.measured():
        from ..autotune_top import add_autotune_top

        err = (
            add_autotune_top(
                result, run_dir, opts, autotune_top, timeout=timeout, progress=progress, echo=verbose()
            )
            or err
        )
    if json_out:
        emit_json(result.to_json(), json_out)
    if fmt is Format.json:
        if json_out != "-":
            emit_json(result.to_json(), "-")
    elif json_out != "-":
        typer.echo(
            render_breakdown(result, top=top, markdown=fmt is Format.markdown, details=not summary), nl=False
        )
    if json_out == "-" or fmt is Format.json:
        print(f"run directory: {run_dir}", file=sys.stderr)
    if err is not None:
        raise err
