"""`inductor-bench diff BASE HEAD`: what changed between two results, judged against noise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ..cli import app
from ..diff import Diff, diff_results, load_any
from ..errors import RegressionFound, UsageError
from ..render.diff import DEFAULT_TOP, fmt_pct, render_markdown, render_text
from ..stats import MIN_REL_CHANGE, MIN_REL_CHANGE_CPU
from .common import Format, emit_json


def _load(path: Path, side: str):
    if not path.exists():
        raise UsageError(f"{side} {path}: no such result file or run directory")
    return load_any(path)


def _gate(diff: Diff, pct: float | None) -> None:
    if pct is None:
        return
    bad = diff.regressions(pct)
    if bad:
        what = ", ".join(f"{s.mode} {fmt_pct(s.step.rel_pct, signed=True)}" for s in bad)
        raise RegressionFound(f"significant step-time regression above {pct:g}%: {what}")


@app.command()
def diff(
    base: Annotated[
        Path, typer.Argument(help="Base result: breakdown.json / compare.json or a run directory.")
    ],
    head: Annotated[Path, typer.Argument(help="Head result, of the same kind as BASE.")],
    fail_on_regression: Annotated[
        float | None,
        typer.Option(
            "--fail-on-regression",
            metavar="PCT",
            min=0.0,
            help="Exit 1 when a step time got significantly slower by more than PCT percent.",
        ),
    ] = None,
    fmt: Annotated[
        Format, typer.Option("--format", "-f", help="text, markdown or json.")
    ] = Format.text,
    json_out: Annotated[
        str | None, typer.Option("--json", help="Also write the diff JSON here ('-' = stdout).")
    ] = None,
    min_change: Annotated[
        float | None,
        typer.Option(
            "--min-change",
            metavar="PCT",
            min=0.0,
            help=(
                "Smallest change (percent of the base median) that can count as significant "
                f"[default: {100 * MIN_REL_CHANGE_CPU:g} on CPU, {100 * MIN_REL_CHANGE:g} on CUDA]."
            ),
        ),
    ] = None,
    top: Annotated[
        int, typer.Option("--top", min=1, help="Kernels shown per table.")
    ] = DEFAULT_TOP,
    allow_mismatch: Annotated[
        bool,
        typer.Option(
            "--allow-mismatch", help="Diff results from different devices or step kinds anyway."
        ),
    ] = False,
) -> None:
    """Compare two results of the same model (two breakdowns, or two compares, mode by mode).

    Exit status: 0, or 1 with --fail-on-regression when a significant step-time regression
    exceeds PCT; 2 for unreadable or incomparable results.
    """
    d = diff_results(
        _load(base, "BASE"),
        _load(head, "HEAD"),
        min_rel=None if min_change is None else min_change / 100.0,
        allow_mismatch=allow_mismatch,
        base_label=str(base),
        head_label=str(head),
    )
    as_json = json.dumps(d.to_dict(), indent=1) if fmt is Format.json or json_out else ""
    if json_out:
        emit_json(as_json, json_out)
    if json_out != "-":  # stdout already holds the JSON
        if fmt is Format.json:
            emit_json(as_json, "-")
        else:
            render = render_markdown if fmt is Format.markdown else render_text
            typer.echo(render(d, threshold_pct=fail_on_regression, top=top), nl=False)
    _gate(d, fail_on_regression)
