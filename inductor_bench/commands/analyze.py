"""`inductor-bench analyze TRACE.json[.gz]`: the breakdown of any trace torch.profiler wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..core.analyze import analyze_trace
from ..core.trace import load_for_analysis
from ..render.analyze import DEFAULT_TOP, render_analyze
from . import options as o
from .output import emit

TraceFile = Annotated[
    Path, typer.Argument(help="A kineto chrome trace (.json or .json.gz) written by torch.profiler.")
]


def analyze(
    trace: TraceFile,
    fmt: o.FormatOpt = o.Format.text,
    json_out: o.JsonOut = None,
    top: o.Top = DEFAULT_TOP,
    html_out: o.HtmlOut = None,
) -> None:
    """Break down any profiler trace, no torch needed: per step, busy and idle per device,
    time by kernel category, and the top kernels with the op that launched them."""
    result = analyze_trace(load_for_analysis(trace))
    emit(result.to_json(), lambda f: render_analyze(result, f, top=top), fmt, json_out, html_out)
