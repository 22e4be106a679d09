"""Where the commands put what they made: stdout, a JSON file, the run directory's report."""

from __future__ import annotations

import enum
import sys
from collections.abc import Callable
from pathlib import Path

import typer

from ..core.compare import CompareResult
from ..core.errors import UsageError
from ..core.rundir import REPORT_FILE, Result
from ..render.breakdown import render_breakdown
from ..render.compare import render_compare


class Format(str, enum.Enum):
    """What a command writes on stdout."""

    text = "text"
    markdown = "markdown"
    json = "json"


def emit_json(text: str, dest: str | Path) -> None:
    """Write JSON to a path, or to stdout for '-'. Existing files are never overwritten."""
    if str(dest) == "-":
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    p = Path(dest)
    if p.exists():
        raise UsageError(f"--json {p}: already exists (results are never overwritten)")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def emit(json_text: str, document: Callable[[], str], fmt: Format, json_out: str | None) -> None:
    """The result as the options ask: ``--json PATH`` (or ``-`` for stdout) and the report
    (``document()``, in ``--format``) on stdout, unless stdout already holds the JSON."""
    if json_out:
        emit_json(json_text, json_out)
    if json_out == "-":
        return
    if fmt is Format.json:
        emit_json(json_text, "-")
    else:
        typer.echo(document(), nl=False)


def render_result(result: Result, fmt: Format = Format.text, **kw) -> str:
    if isinstance(result, CompareResult):
        return render_compare(result, fmt.value)
    return render_breakdown(result, fmt.value, **kw)


def write_report(run_dir: Path, result: Result) -> None:
    """The text report beside a saved result (``report.txt``), rewritten with it."""
    (run_dir / REPORT_FILE).write_text(render_result(result))


def note_run_dir(run_dir: Path) -> None:
    print(f"run directory: {run_dir}", file=sys.stderr)
