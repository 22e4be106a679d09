"""The sha256 of each file a graph of a run is analysed or run again from (``DIGESTS_FILE``:
its module, kernels and inputs as copied; its profiling worker's answer, traces and lowering
record as saved; the run's profiled steps), and the checks made with them before a file of the
run is analysed or run again: a file changed, unrecorded, outside the run, or whose record
cannot be read is never used."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from . import rundir as rd
from .errors import ResultError
from .rundir import DIGESTS_FILE, PROFILE_FILE, inside_run_dir

_DIGEST = re.compile(r"[0-9a-f]{64}")

# What ``report --reanalyze`` makes a graph's figures from besides its module and kernel files
# (each beside them in graphs/<id>/), and what each would change, edited.
GRAPH_INPUTS = {
    PROFILE_FILE: "the graph's windows and iteration times would be read from another answer",
    rd.TRACE_FILE: "its kernels' times would be read from another trace",
    rd.LAUNCH_TRACE_FILE: "its kernels' launch sites would be read from another trace",
    rd.PIPELINED_TRACE_FILE: "its pipelined run would be read from another trace",
    rd.SOURCES_FILE: "its source lines and modules would be read from another record",
}
# The same of the run's own files: its profiled steps (the time outside the graphs).
RUN_INPUTS = {
    rd.STEP_TRACE_FILE: "the time outside the graphs would be split from another trace",
    rd.STEP_PYTHON_TRACE_FILE: "the Python outside the graphs would be read from another trace",
}


class DigestsDamaged(ResultError):
    """The run's ``DIGESTS_FILE`` cannot be read as what the run wrote: no file it names can
    be checked, so none is used (the caller says what is refused, and how to go on)."""


def file_digest(path: Path) -> str:
    """The file's sha256, hex."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_digests(run_dir: Path) -> dict[str, str]:
    """The digests the run recorded (``DIGESTS_FILE``); {} for a run that recorded none.
    ``DigestsDamaged`` where the file is there but not a map of paths to sha256 digests, or an
    empty one."""
    p = run_dir / DIGESTS_FILE
    if not p.exists():
        return {}
    try:
        data = json.loads(p.read_text())
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else e
        raise DigestsDamaged(f"{p}: damaged, not readable as JSON ({why})") from None
    if not isinstance(data, dict) or not all(isinstance(v, str) and _DIGEST.fullmatch(v)
                                             for v in data.values()):
        raise DigestsDamaged(f"{p}: damaged, not a map of paths to sha256 digests")
    if not data:  # a run records each module it copies, and writes the file only then
        raise DigestsDamaged(f"{p}: damaged, an empty map (a run records the sha256 of every module it "
                             "copies)")
    return data


def run_file(run_dir: Path, rel: str) -> tuple[Path, bytes]:
    """A file the run wrote and its bytes, read once, checked before anything runs them:
    ``rel`` a relative path inside the run directory (not absolute, no ``..``, no link out of
    it), recorded in ``DIGESTS_FILE``, the sha256 of the bytes returned the recorded one."""
    where = f"{run_dir}: {rel!r}"
    if not inside_run_dir(rel):
        raise ResultError(f"{where} lies outside the run directory: refused")
    path = run_dir / rel
    if not path.resolve().is_relative_to(run_dir.resolve()):
        raise ResultError(f"{where} leads outside the run directory: refused")
    try:
        recorded = read_digests(run_dir).get(PurePosixPath(rel).as_posix())
    except DigestsDamaged as e:
        raise ResultError(f"{e}: {rel!r} cannot be checked against what the run wrote, and a kernel file is "
                          "never run unchecked: refused") from None
    if recorded is None:
        raise ResultError(f"{where} is not a file this run recorded writing: refused")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ResultError(f"{where}: cannot read it ({e.strerror or e})") from None
    if hashlib.sha256(data).hexdigest() != recorded:
        raise ResultError(f"{where} changed since the run wrote it (sha256 differs): refused")
    return path, data


def analysis_inputs(run_dir: Path, gdir: Path | None = None) -> list[Path]:
    """The files of ``GRAPH_INPUTS`` in the graph directory ``gdir`` (None: of ``RUN_INPUTS``
    in ``run_dir``) that are there, to record as the run saves them."""
    where, names = (run_dir, RUN_INPUTS) if gdir is None else (gdir, GRAPH_INPUTS)
    return [where / n for n in names if (where / n).is_file()]


def records_inputs(digests: dict[str, str]) -> bool:
    """Whether the run recorded the digests of its analysis inputs (a graph's ``PROFILE_FILE``
    among them); a run recorded before they were kept has its inputs read unchecked."""
    return any(PurePosixPath(rel).name == PROFILE_FILE for rel in digests)


def check_inputs(run_dir: Path, digests: dict[str, str], gdir: Path | None = None) -> None:
    """The analysis inputs of the graph directory ``gdir`` (None: the run's own) as the run
    recorded them in ``digests``: ``ResultError`` naming the first one changed since, one there
    but unrecorded, or (of a graph's) one recorded but gone. Nothing is checked for a run that
    recorded none (``records_inputs``)."""
    if not records_inputs(digests):
        return
    where, names = (run_dir, RUN_INPUTS) if gdir is None else (gdir, GRAPH_INPUTS)
    for name, lost in names.items():
        path = where / name
        recorded = digests.get(path.relative_to(run_dir).as_posix())
        if not path.exists():
            if recorded is not None and gdir is not None:  # the run's steps: kept as saved, said
                raise ResultError(f"{path}: missing, though the run wrote it (its sha256 is in "
                                  f"{DIGESTS_FILE}): refused")
            continue
        check_recorded(path, recorded, lambda p=path: _readable_digest(p), lost)


def check_recorded(path: Path, recorded: str | None, digest: Callable[[], str], lost: str) -> None:
    """``path`` as the run recorded it: ``ResultError`` where ``recorded`` (its sha256 in
    ``DIGESTS_FILE``) is None, or ``digest()`` (its sha256 now, computed only then) differs;
    ``lost``: what reading the file changed since would do."""
    if recorded is None:
        raise ResultError(f"{path}: not a file the run recorded writing (no sha256 in {DIGESTS_FILE}): "
                          "refused")
    if digest() != recorded:
        raise ResultError(f"{path}: changed since the run wrote it (sha256 differs): {lost}; refused")


def _readable_digest(path: Path) -> str:
    try:
        return file_digest(path)
    except OSError as e:
        raise ResultError(f"{path}: cannot read it ({e.strerror or e})") from None
