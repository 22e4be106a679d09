"""`inductor-bench report RUN`: re-render a saved run (no torch, no GPU)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..core.compare import CompareResult
from ..core.errors import UsageError
from ..core.rundir import load_any
from ..render.breakdown import DEFAULT_TOP
from . import options as o
from .output import emit, render_result

Run = Annotated[
    Path,
    typer.Argument(help="A run directory of breakdown or compare, or its breakdown.json / compare.json."),
]


def report(
    run: Run, fmt: o.FormatOpt = o.Format.text, top: o.Top = DEFAULT_TOP, summary: o.Summary = False
) -> None:
    """Re-render a saved breakdown or comparison without torch or a GPU."""
    if not run.exists():
        raise UsageError(f"{run}: no such run directory or file")
    result = load_any(run)
    kw = {} if isinstance(result, CompareResult) else {"top": top, "details": not summary}
    emit(result.to_json(), lambda: render_result(result, fmt, **kw), fmt, None)
