"""The sha256 of each file a run copied into its graphs (``DIGESTS_FILE``: module, kernels,
inputs), and the checks made with them before a file of the run is analysed or run again: a
file changed, unrecorded, outside the run, or whose record cannot be read is never used."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path, PurePosixPath

from .errors import ResultError
from .rundir import DIGESTS_FILE, _inside

_DIGEST = re.compile(r"[0-9a-f]{64}")


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
    ``DigestsDamaged`` where the file is there but not a map of paths to sha256 digests."""
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
    return data


def run_file(run_dir: Path, rel: str) -> tuple[Path, bytes]:
    """A file the run wrote and its bytes, read once, checked before anything runs them:
    ``rel`` a relative path inside the run directory (not absolute, no ``..``, no link out of
    it), recorded in ``DIGESTS_FILE``, the sha256 of the bytes returned the recorded one."""
    where = f"{run_dir}: {rel!r}"
    if not _inside(rel):
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
