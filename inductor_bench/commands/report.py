"""`inductor-bench report RUN`: re-render a saved run (no torch, no GPU)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..cli import app
from ..errors import UsageError
from ..render.text import DEFAULT_TOP, render_breakdown
from ..results import load_result
from .common import Format, emit_json


@app.command()
def report(
    run: Path = typer.Argument(..., help="A run directory, or a breakdown.json file."),
    fmt: Format = typer.Option(Format.text, "--format", "-f", help="text, markdown or json."),
    top: int = typer.Option(DEFAULT_TOP, "--top", help="Kernels shown per table."),
    summary: bool = typer.Option(False, "--summary", help="Leave out the per-graph kernel tables."),
) -> None:
    """Re-render a saved breakdown without torch or a GPU."""
    if not run.exists():
        raise UsageError(f"{run}: no such run directory or file")
    result = load_result(run)
    if fmt is Format.json:
        emit_json(result.to_json(), "-")
        return
    typer.echo(
        render_breakdown(result, top=top, markdown=fmt is Format.markdown, details=not summary), nl=False
    )
