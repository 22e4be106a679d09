"""Making and saving run directories (layout and loaders: ``core/rundir.py``).

The runner saves data (results, metadata, modules, traces); the documents a command
renders from a result are written by the ``on_saved`` callback it hands in, each time a
result is saved, so a report always matches the saved result.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core import errors
from ..core.results import BreakdownResult
from ..core.rundir import BREAKDOWN_FILE, COMPARE_FILE, META_FILE, Result
from ..core.workload import WorkloadOptions

# (run directory, result) after the result was saved there: the command writes its documents.
OnSaved = Callable[[Path, Result], None]


def new_run_dir(name: str, mode: str, *, root: Path | str = "runs", out: Path | str | None = None) -> Path:
    """A fresh directory for this run; an existing non-empty directory is never reused."""
    if out is not None:
        d = Path(out)
        if d.exists() and (not d.is_dir() or any(d.iterdir())):
            raise errors.UsageError(
                f"--out {d}: already exists and is not empty (runs are never overwritten)"
            )
        d.mkdir(parents=True, exist_ok=True)
        return d
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = Path(root) / f"{_slug(name)}-{mode}-{stamp}"
    for i in range(1000):
        d = base if i == 0 else base.with_name(f"{base.name}-{i}")
        try:
            d.mkdir(parents=True)
            return d
        except FileExistsError:
            continue
    raise errors.UsageError(f"cannot create a run directory under {root}")


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", s) or "model"


def now() -> str:
    return _dt.datetime.now().astimezone().isoformat(timespec="seconds")


def header(opts: WorkloadOptions, run_dir: Path) -> dict[str, Any]:
    """The fields every result of a run starts with: the workload, when, and where."""
    return {
        "model": opts.name,
        "model_path": str(Path(opts.path).resolve()),
        "device": opts.device,
        "train": opts.train,
        "dtype": opts.dtype,
        "autocast": opts.autocast,
        "batch_size": opts.batch_size,
        "created": now(),
        "run_dir": str(run_dir),
    }


def save_result(run_dir: Path, result: Result, on_saved: OnSaved | None = None) -> None:
    """Write the result's JSON (breakdown.json or compare.json), then let the command write
    its documents."""
    name = BREAKDOWN_FILE if isinstance(result, BreakdownResult) else COMPARE_FILE
    (run_dir / name).write_text(result.to_json())
    if on_saved is not None:
        on_saved(run_dir, result)


def save_meta(run_dir: Path, opts: WorkloadOptions, result: BreakdownResult, *, status: str) -> None:
    meta: dict[str, Any] = {
        "tool": "inductor-bench breakdown",
        "status": status,
        "options": opts.to_dict(),
        "device": result.device,
        "device_name": result.device_name,
        "versions": result.versions,
        "created": result.created,
        "errors": result.errors,
        "graphs": [{"id": g.id, "status": g.status, "error": g.error} for g in result.graphs],
    }
    (run_dir / META_FILE).write_text(json.dumps(meta, indent=1))
