"""A sweep: a zoo of model files, each compared across the same compile modes, one job per
model (pure; no torch).

The grid is the model files by the modes; a **cell** is one model's ``compare`` across all the
modes (interleaved in one process, so its verdicts hold), run as one job on one device. The
sweep's directory holds ``sweep.json`` (this module's ``Sweep``: the grid, the options every
job got, each cell's status) and one compare run directory per attempt of a cell. The same
sweep run again skips the cells that are done and retries the others; a directory that holds
another sweep is refused (``core/sweep_plan.py``). ``runner/sweep_run.py`` runs the jobs
(``core/sweep_cells.py``: how each ends); ``core/sweep_table.py`` reads their results.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any

from .errors import ResultError
from .shape import check

SWEEP_SCHEMA = "inductor-bench/sweep"
SWEEP_SCHEMA_VERSION = 1
SWEEP_FILE = "sweep.json"
LOGS_DIR = "logs"  # each attempt's console output: logs/<run dir>.log
# The table a sweep prints (``--format json``, ``--json PATH``: core/sweep_table.py)
TABLE_SCHEMA = "inductor-bench/sweep-table"


class CellStatus:
    """Of one cell (one model's compare job)."""

    PENDING = "pending"  # not run yet (or left when the sweep was stopped)
    RUNNING = "running"  # started; found so, its sweep was killed: retried unless its result is whole
    DONE = "done"  # the compare exited 0
    FAILED = "failed"  # the compare exited with an error (its one line is the reason)
    TIMEOUT = "timeout"  # ran past --job-timeout and was stopped (killed if it did not end)
    KILLED = "killed"  # ended by a signal it did not handle (SIGKILL: the OOM killer, kill -9)
    INTERRUPTED = "interrupted"  # stopped with the sweep (Ctrl-C, SIGTERM), what it measured saved
    UNFINISHED = (PENDING, RUNNING, FAILED, TIMEOUT, KILLED, INTERRUPTED)



@dataclass
class Cell:
    """One model of the grid: its compare job's last attempt."""

    model: str  # its name in the sweep (the file's stem, made unique)
    model_path: str  # absolute
    status: str = CellStatus.PENDING
    run_dir: str = ""  # its last attempt's compare run directory, relative to the sweep's
    attempts: int = 0
    exit_code: int | None = None  # the job's exit status (negative: killed by that signal)
    reason: str | None = None  # why it is not done: the compare's own error line, or how it ended
    where: str = ""  # where its last attempt ran (host, CUDA_VISIBLE_DEVICES)
    seconds: float | None = None  # the last attempt's wall time
    # Taken as done from an attempt found whole on disk (not recorded done): ``seconds`` is then
    # that attempt's compare's start (compare.json's ``created``) to its end, to the second: the
    # end its compare.json records (``finished``; ``end_recorded``), else its last file's time.
    found_on_disk: bool = False
    end_recorded: bool = False

    @property
    def done(self) -> bool:
        return self.status == CellStatus.DONE

    @property
    def comparable(self) -> bool:
        """Its last attempt's compare ran to its own end (done, or failed with its own error
        line, a failed mode marked as such): its figures count in the geomeans and the gate. A
        cell stopped, timed out, killed or not run since holds at most what was measured before
        its job ended: shown, marked, left out of both."""
        return self.status in (CellStatus.DONE, CellStatus.FAILED)


@dataclass
class Sweep:
    """The grid, the options of every job, and each cell's status (``sweep.json``)."""

    models: list[str]  # every model file given (absolute paths), before --shard
    modes: list[str]  # as given to each compare (eager is compare's own baseline column)
    compare_args: list[str]  # the options each compare got besides the model, modes and --out
    device: str = "auto"
    shard: list[int] | None = None  # [index, total], index from 1
    executor: str = "local"
    created: str = ""
    cells: list[Cell] = field(default_factory=list)
    schema: str = SWEEP_SCHEMA
    schema_version: int = SWEEP_SCHEMA_VERSION

    def identity(self) -> dict[str, Any]:
        """What makes two sweeps the same sweep: resuming one needs all of it equal."""
        return {
            "models": self.models,
            "modes": self.modes,
            "compare_args": self.compare_args,
            "device": self.device,
            "shard": self.shard,
        }

    def cell(self, model: str) -> Cell | None:
        return next((c for c in self.cells if c.model == model), None)

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in (CellStatus.DONE, *CellStatus.UNFINISHED)}
        for c in self.cells:
            out[c.status] = out.get(c.status, 0) + 1
        return out

    def unfinished(self) -> list[Cell]:
        return [c for c in self.cells if not c.done]

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "cells"}
        d["cells"] = [{f.name: getattr(c, f.name) for f in fields(Cell)} for c in self.cells]
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    @classmethod
    def from_dict(cls, d: Any) -> Sweep:
        if not isinstance(d, dict) or d.get("schema") != SWEEP_SCHEMA:
            raise ResultError("not an inductor-bench sweep (schema field missing)")
        if d.get("schema_version") != SWEEP_SCHEMA_VERSION:
            raise ResultError(
                f"sweep schema version {d.get('schema_version')} is not supported "
                f"(this inductor-bench reads version {SWEEP_SCHEMA_VERSION})"
            )
        problem = _sweep_problem(d)
        if problem:
            raise ResultError(f"damaged: {problem}")
        try:
            cell_names = {f.name for f in fields(Cell)}
            cells = [Cell(**{k: v for k, v in c.items() if k in cell_names}) for c in d.get("cells", [])]
            names = {f.name for f in fields(cls)} - {"cells"}
            return cls(cells=cells, **{k: v for k, v in d.items() if k in names})
        except (TypeError, AttributeError) as e:
            raise ResultError(f"damaged, not the shape of a sweep ({e})") from None


_STATUSES = (CellStatus.DONE, *CellStatus.UNFINISHED)


def _sweep_problem(d: dict[str, Any]) -> str | None:
    """The first thing of a saved sweep that no sweep writes, as a breakdown's fields are
    checked when it is read (``core/shape.py``: each field's kind, ``cells[0].seconds: 'x' is
    not a number or null``), and the values a report would print as they are: a job's time
    below 0, a status of no cell, a run directory that is not a name inside the sweep's."""
    try:
        check(Sweep, d, ("cells",))
    except ResultError as e:
        return str(e)
    shard = d.get("shard")
    if shard is not None and (len(shard) != 2 or not 1 <= shard[0] <= shard[1]):
        return f"shard: {shard} is no shard I/N (I from 1 to N)"
    cells = d["cells"]
    return _cells_problem(cells, shard_of(d["models"], shard)) or _values_problem(cells)


def _cells_problem(cells: list[dict[str, Any]], models: list[str]) -> str | None:
    """A cell for each of the shard's ``models`` (a cell lost or doubled would have a model
    never run, or counted twice, while the sweep says all done), each named once."""
    paths = [c["model_path"] for c in cells]
    for i, path in enumerate(paths):
        if path not in models:
            return f"cells[{i}].model_path: {path!r} is not one of the sweep's models"
        if path in paths[:i]:
            return f"cells[{i}].model_path: {path!r} has a cell before it"
    missing = next((m for m in models if m not in paths), None)
    if missing:
        return f"cells: none for {missing!r}, one of the sweep's models"
    names = [c["model"] for c in cells]
    twice = next((i for i, n in enumerate(names) if n in names[:i]), None)
    return f"cells[{twice}].model: {names[twice]!r} names another cell too" if twice is not None else None


def _values_problem(cells: list[dict[str, Any]]) -> str | None:
    """A value of a cell a report would print or a sweep would follow as it is."""
    for i, c in enumerate(cells):
        if c.get("status", CellStatus.PENDING) not in _STATUSES:
            return f"cells[{i}].status: {c['status']!r} is not a cell's status ({', '.join(_STATUSES)})"
        if (c.get("seconds") or 0) < 0 or c.get("attempts", 0) < 0:
            what = "seconds" if (c.get("seconds") or 0) < 0 else "attempts"
            return f"cells[{i}].{what}: {c[what]} is below 0"
        model, run_dir = c.get("model", ""), c.get("run_dir", "")
        for what, name in (("model", model), ("run_dir", run_dir)):  # the model names its attempts
            if (name or what == "model") and not _plain_name(name):
                return f"cells[{i}].{what}: {name!r} is not a directory's name inside the sweep's"
        if run_dir and not _attempt_of(model, run_dir):  # another model's figures shown as this one's
            return f"cells[{i}].run_dir: {run_dir!r} is no attempt of {model!r} ({model}, {model}.try2, ...)"
    return None


def _plain_name(name: str) -> bool:
    return name not in ("", ".", "..") and "/" not in name and "\\" not in name


def _attempt_of(model: str, run_dir: str) -> bool:
    """Whether ``run_dir`` is the name of an attempt of ``model`` (``attempt_name``)."""
    k = run_dir.removeprefix(f"{model}.try")
    return run_dir == model or (k.isascii() and k.isdigit() and attempt_name(model, int(k)) == run_dir)


def shard_of(items: list[str], shard: list[int] | None) -> list[str]:
    """The shard's part of ``items``: contiguous slices in the order given, their sizes as
    even as can be (PyTorch's benchmark harness cuts its model list the same way by
    ``--partition-id``/``--total-partitions``); every item is in exactly one shard."""
    if shard is None:
        return list(items)
    index, total = shard
    n = len(items)
    return items[(index - 1) * n // total : index * n // total]


def attempt_name(model: str, k: int) -> str:
    """The run directory of attempt ``k`` (from 1) of ``model``: ``mlp``, ``mlp.try2``, ..."""
    return model if k == 1 else f"{model}.try{k}"
