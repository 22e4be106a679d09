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
from .output import emit, render_result, terminal_width

Run = Annotated[
    Path,
    typer.Argument(help="A run directory of breakdown or compare, or its breakdown.json / compare.json."),
]


def report(
    run: Run,
    fmt: o.FormatOpt = o.Format.text,
    top: o.Top = DEFAULT_TOP,
    summary: o.Summary = False,
    html_out: o.HtmlOut = None,
    by: o.ByOpt = o.View.kernel,
    module_depth: o.ModuleDepth = None,
) -> None:
    """Re-render a saved breakdown or comparison without torch or a GPU."""
    if not run.exists():
        raise UsageError(f"{run}: no such run directory or file")
    result = load_any(run)
    kw = {} if isinstance(result, CompareResult) else {"top": top, "details": not summary}
    if not isinstance(result, CompareResult):
        kw |= {"by": by.value, "depth": module_depth, "width": terminal_width()}
    run_dir = run if run.is_dir() else run.parent
    emit(result.to_json(), lambda f: render_result(result, f, **kw), fmt, None, html_out, links=run_dir)
