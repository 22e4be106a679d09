"""The run directory: its layout, and every loader of a saved result.

A run directory is made fresh for every run and never overwritten::

    runs/<model>-<mode>-<timestamp>/
      meta.json          options, versions, device, status, errors
      cache/             the private Inductor cache this run compiled into
      modules.jsonl      compiled modules as Inductor reported them
      sources.jsonl      what each module was made from: FX nodes, source lines, nn.Module paths
      graphs/<id>/       module.py, kernels/<name>.py, trace.json.gz (open in Perfetto)
      logs/              worker logs
      breakdown.json     the result (re-render with `inductor-bench report`)
      report.txt         the text report
      index.html         the same report as a page to open (charts, links to the files above)

A comparison keeps ``compare.json`` and ``report.txt`` at the top and one such directory per
mode below it. Reading is pure (no torch); writing belongs to the runner and the commands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .compare import COMPARE_SCHEMA, COMPARE_SCHEMA_VERSION, CompareResult
from .errors import ResultError
from .results import READABLE_VERSIONS, BreakdownResult
from .results import SCHEMA as BREAKDOWN_SCHEMA
from .shape import check

BREAKDOWN_FILE = "breakdown.json"
COMPARE_FILE = "compare.json"
REPORT_FILE = "report.txt"
HTML_REPORT_FILE = "index.html"
META_FILE = "meta.json"
MODULES_LOG = "modules.jsonl"
SOURCES_LOG = "sources.jsonl"  # what each compiled module was made from (runner/sources.py)
SOURCES_FILE = "sources.json"  # one graph's entry of it, in graphs/<id>/
CACHE_DIR = "cache"
LOGS_DIR = "logs"
GRAPHS_DIR = "graphs"
MODULE_FILE = "module.py"
TRACE_FILE = "trace.json.gz"
PIPELINED_TRACE_FILE = "pipelined.json.gz"  # accelerators: iterations launched back to back
LAUNCH_TRACE_FILE = "launch.json.gz"  # CUDA-graph replays: one iteration launched kernel by kernel
KERNELS_DIR = "kernels"
AUTOTUNE_DIR = "max-autotune"  # breakdown --autotune-top on CPU: the recompiled run

Result = BreakdownResult | CompareResult


def read_result_json(path: str | Path, names: tuple[str, ...]) -> tuple[Path, Any]:
    """Read a result: a JSON file, or a run directory holding one of ``names``."""
    p = Path(path)
    if p.is_dir():
        found = [p / n for n in names if (p / n).exists()]
        if not found:
            raise ResultError(f"{p}: no {' or '.join(names)} in this directory")
        p = found[0]
    if not p.exists():
        raise ResultError(f"{p}: no such result file")
    try:
        return p, json.loads(p.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ResultError(f"{p}: not readable as JSON ({e})") from None


def load_breakdown(path: str | Path) -> BreakdownResult:
    """A breakdown result from ``breakdown.json`` or the run directory holding it."""
    p, data = read_result_json(path, (BREAKDOWN_FILE,))
    return _build(BreakdownResult, p, data)


def load_compare(path: str | Path) -> CompareResult:
    """A compare result from ``compare.json`` or the directory holding it."""
    p, data = read_result_json(path, (COMPARE_FILE,))
    return _build(CompareResult, p, data)


def load_any(path: str | Path) -> Result:
    """A breakdown or compare result from a JSON file or a run directory."""
    p, data = read_result_json(path, (COMPARE_FILE, BREAKDOWN_FILE))
    schema = data.get("schema") if isinstance(data, dict) else None
    if schema == COMPARE_SCHEMA:
        return _build(CompareResult, p, data)
    if schema == BREAKDOWN_SCHEMA:
        return _build(BreakdownResult, p, data)
    raise ResultError(f"{p}: not an inductor-bench breakdown or compare result")


# What each record reads: its schema, the versions of it, and the keys every saved one has
# though the record has a default for them.
_READS = {
    BreakdownResult: (BREAKDOWN_SCHEMA, READABLE_VERSIONS, ("graphs",)),
    CompareResult: (COMPARE_SCHEMA, (COMPARE_SCHEMA_VERSION,), ("modes",)),
}


def _build(cls: type[BreakdownResult] | type[CompareResult], p: Path, data: Any) -> Any:
    """The record of ``data``. A result of a schema and version this version reads is checked
    against the record's fields first (``core/shape.py``): JSON that is not the shape of a
    result (a key missing, a wrong type) is a ResultError naming ``p`` and the field, never an
    exception from deep inside a report. Other schemas and versions are refused by the record."""
    schema, versions, always = _READS[cls]
    if isinstance(data, dict) and data.get("schema") == schema and data.get("schema_version") in versions:
        try:
            check(cls, data, always)
        except ResultError as e:
            raise ResultError(f"{p}: damaged: {e}") from None
    try:
        return cls.from_dict(data)
    except ResultError as e:
        raise ResultError(f"{p}: {e}") from None
    except (TypeError, ValueError, AttributeError, KeyError, IndexError) as e:  # what check() missed
        raise ResultError(f"{p}: damaged, not the shape of a result ({type(e).__name__}: {e})") from None


def graph_dir(run_dir: Path, graph_id: str) -> Path:
    return run_dir / GRAPHS_DIR / graph_id
