"""Making and saving run directories (layout and loaders: ``core/rundir.py``).

The runner saves data (results, metadata, modules, traces); the documents a command
renders from a result are written by the ``on_saved`` callback it hands in, each time a
result is saved, so a report always matches the saved result.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..core import errors
from ..core.compare import CompareResult
from ..core.digests import analysis_inputs, file_digest, read_digests
from ..core.result_json import result_json
from ..core.results import BreakdownResult
from ..core.rundir import (
    BREAKDOWN_FILE,
    COMPARE_FILE,
    DIGESTS_FILE,
    META_FILE,
    Result,
)
from ..core.vocab import Status
from ..core.workload import WorkloadOptions, default_batch_size

# (run directory, result) after the result was saved there: the command writes its documents.
OnSaved = Callable[[Path, Result], None]
# Held (flock) by the command writing a run directory, from its claim to its last file: a
# re-analysis refuses a run still being written; the lock ends with the process, however it ends.
WRITING_LOCK = ".writing.lock"
_scopes: list[list[int]] = []  # the open ``writing`` blocks' locks (descriptors), innermost last


class WriteError(errors.BenchError):
    """A file of the run could not be written: a full or read-only disk, no permission."""

    exit_code = 74  # EX_IOERR


def new_run_dir(name: str, mode: str, *, root: Path | str = "runs", out: Path | str | None = None) -> Path:
    """A fresh directory for this run, claimed atomically, as an absolute path (workers keep
    finding it when the model changes directory): ``out`` is created, or claimed if it is an
    empty directory, and refused if another run has it; an automatic name under ``root``
    takes the next free one. A directory that is not empty is never reused."""
    if out is not None:
        return _claim(Path(out).absolute())
    base = planned_run_dir(name, mode, root=root)
    for i in range(1000):
        d = base if i == 0 else base.with_name(f"{base.name}-{i}")
        try:
            d.mkdir(parents=True)
            return lock_writing(d)
        except FileExistsError:
            continue
        except NotADirectoryError:  # a file where the directory should be: the user's path
            raise errors.UsageError(f"--runs-dir {root}: not a directory") from None
        except OSError as e:
            raise WriteError(f"{d}: cannot create the run directory ({e.strerror or e})") from None
    raise errors.UsageError(f"cannot create a run directory under {root}")


@contextlib.contextmanager
def write_errors(path: Path, failed: str = "cannot write") -> Iterator[None]:
    """An OSError in the block (a full or read-only disk, no permission) as a WriteError naming
    ``path``: ``PATH: cannot write (No space left on device)``."""
    try:
        yield
    except OSError as e:
        raise WriteError(f"{path}: {failed} ({e.strerror or e})") from None


def make_dir(path: Path, named: str = "it") -> None:
    """``path`` made where it is not a directory yet; a full or read-only disk is a WriteError
    naming it (``named``: what the line calls it)."""
    with write_errors(path, f"cannot create {named}"):
        path.mkdir(exist_ok=True)


def planned_run_dir(
    name: str, mode: str, *, root: Path | str = "runs", out: Path | str | None = None
) -> Path:
    """The absolute path ``new_run_dir`` gives this run, made nowhere: ``out``, or a name of the
    model, the mode and the time under ``root`` (``new_run_dir`` adds ``-1``, ``-2``... where
    it is taken)."""
    if out is not None:
        return Path(out).absolute()
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path(root).absolute() / f"{_slug(name)}-{mode}-{stamp}"


def _claim(d: Path) -> Path:
    """``d`` made, or an empty ``d`` taken by creating its meta.json exclusively: of two runs
    given the same --out at the same time, one gets it and the other is refused. The claim is
    JSON (``status: claimed``) until the run writes its own meta over it."""
    taken = errors.UsageError(f"--out {d}: already exists and is not empty (runs are never overwritten)")
    try:
        d.mkdir(parents=True)
    except FileExistsError:
        if not d.is_dir():  # "not empty" misread an empty file
            raise errors.UsageError(f"--out {d}: a file, not a directory (give a new or empty "
                                    "directory)") from None
        if any(d.iterdir()):
            raise taken from None
    except NotADirectoryError:  # a file on its way: the user's path, as --runs-dir's
        raise errors.UsageError(f"--out {d}: not a directory") from None
    except OSError as e:
        raise WriteError(f"--out {d}: cannot create it ({e.strerror or e})") from None
    claim = json.dumps({"tool": "inductor-bench", "status": "claimed", "pid": os.getpid(),
                        "created": _dt.datetime.now().astimezone().isoformat(timespec="seconds")}, indent=1)
    try:
        fd = os.open(d / META_FILE, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        raise taken from None
    except OSError as e:
        raise WriteError(f"--out {d}: cannot write there ({e.strerror or e})") from None
    try:  # valid JSON from the start: a run killed before it writes its own meta keeps it
        os.write(fd, claim.encode())
    except OSError as e:
        raise WriteError(f"--out {d}: cannot write there ({e.strerror or e})") from None
    finally:
        os.close(fd)
    return lock_writing(d)


@contextlib.contextmanager
def writing() -> Iterator[None]:
    """Each run directory claimed in the block (``lock_writing``) is held as being written until
    it ends; blocks nest: an inner one's locks are held until the outermost ends (the command,
    which writes its documents after the run has returned). Outside any block none is held."""
    fds: list[int] = []
    _scopes.append(fds)
    try:
        yield
    finally:
        _scopes.pop()  # blocks nest: this one is the innermost
        if _scopes:
            _scopes[-1].extend(fds)
        else:
            for fd in fds:
                os.close(fd)


def lock_writing(d: Path) -> Path:
    """``d``, a directory this run has just made or claimed, held as being written
    (``WRITING_LOCK``) while the ``writing`` block around the call lasts."""
    if not _scopes:
        return d
    try:
        fd = os.open(d / WRITING_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        raise WriteError(f"{d / WRITING_LOCK}: cannot write ({e.strerror or e})") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a fresh directory: no other holds it
    except BlockingIOError:
        os.close(fd)
        raise errors.UsageError(f"--out {d}: another run is writing there") from None
    _scopes[-1].append(fd)
    return d


def being_written(d: Path) -> bool:
    """Whether a command (this process's or another's) holds ``d`` as being written now. Reads
    only: a run that never held the lock, or a read-only one, is not being written; a FIFO of
    that name (a run copied by hand) is opened without waiting for a writer."""
    return lock_held(d / WRITING_LOCK)


def lock_held(lock: Path) -> bool:
    """Whether a live process (this one or another) holds the flock of the file ``lock`` now;
    one that ended holds none, however it ended. Reads only, and never waits."""
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False


def write_atomic(path: Path, data: str | bytes) -> None:
    """``path`` whole or not at all: written beside it under a temporary name, then renamed
    over it. A full or read-only disk is a WriteError naming the path; the file as it was
    (a result saved before) stays as it was; so does it on Ctrl-C, the temporary file removed."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        os.replace(tmp, path)
    except (OSError, KeyboardInterrupt) as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if not isinstance(e, OSError):
            raise
        raise WriteError(f"{path}: cannot write ({e.strerror or e})") from None


def copy_atomic(src: Path | str, dst: Path) -> None:
    """A copy of ``src`` at ``dst``, whole or not at all (``write_atomic``)."""
    write_atomic(dst, Path(src).read_bytes())


@contextlib.contextmanager
def held(lock: Path, on_wait: Callable[[], None]) -> Iterator[None]:
    """``lock`` (a file, made where it is not there) held by this process alone while the
    block runs: another process holding it is waited for (``on_wait`` called first, once).
    The lock ends with the process, however it ends; the file stays (removing it would let
    two processes hold two files of one name)."""
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        raise WriteError(f"{lock}: cannot write ({e.strerror or e})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            on_wait()
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def link_or_copy(src: Path | str, dst: Path) -> None:
    """``src`` at ``dst`` as a hard link where the file system allows one (a graph's recorded
    inputs can be hundreds of MB), else a copy (``copy_atomic``)."""
    try:
        os.link(src, dst)
    except OSError:
        copy_atomic(src, dst)


def record_digests(run_dir: Path, files: list[Path]) -> None:
    """Add the sha256 of ``files`` (inside the run directory) to its ``DIGESTS_FILE``: what
    ``core.digests.run_file`` checks before a kernel file is run again, and a re-analysis before
    it reads a module, a kernel file or a trace."""
    digests = read_digests(run_dir)
    for f in files:
        digests[f.relative_to(run_dir).as_posix()] = file_digest(f)
    write_atomic(run_dir / DIGESTS_FILE, json.dumps(digests, indent=1, sort_keys=True))


def record_inputs(run_dir: Path, gdir: Path | None = None) -> None:
    """Record the digests of what the graph in ``gdir`` is analysed again from, as saved (None:
    the run's profiled steps): what ``core.digests.check_inputs`` checks before a re-analysis."""
    files = analysis_inputs(run_dir, gdir)
    if files:
        record_digests(run_dir, files)


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
        # where none was asked for, the factory's own default: the batch it ran at
        "batch_size": opts.batch_size if opts.batch_size is not None else default_batch_size(opts.path),
        "created": now(),
        "run_dir": str(run_dir),
    }


def save_result(run_dir: Path, result: Result, on_saved: OnSaved | None = None) -> None:
    """Write the result's JSON (breakdown.json or compare.json), then let the command write
    its documents. A compare's result says when it was written (``finished``): the last time it
    is, the compare's end, which a sweep resuming reads when it finds the job finished on disk."""
    name = BREAKDOWN_FILE if isinstance(result, BreakdownResult) else COMPARE_FILE
    if isinstance(result, CompareResult):
        result.finished = now()
    write_atomic(run_dir / name, result_json(result))
    if not isinstance(result, BreakdownResult):  # a breakdown's meta is the pipeline's
        save_compare_meta(run_dir, result)
    if on_saved is not None:
        on_saved(run_dir, result)


def save_meta(run_dir: Path, opts: WorkloadOptions, result: BreakdownResult, *, status: str) -> None:
    _write_meta(run_dir, "breakdown", status, result, options=opts.to_dict(),
                graphs=[{"id": g.id, "status": g.status, "error": g.error} for g in result.graphs])


def save_compare_meta(run_dir: Path, result: CompareResult) -> None:
    """A compare's own meta.json, written with its result over the claim its directory was made
    with (``status: claimed`` and a process id), which read as a compare still under way."""
    _write_meta(run_dir, "compare", compare_status(result), result,
                columns=[{"column": m.label, "status": m.status, "reason": m.reason} for m in result.modes])


def _write_meta(run_dir: Path, command: str, status: str, result: Result, **more: Any) -> None:
    """A run directory's meta.json: the command, how it ended, where and with what it ran."""
    meta: dict[str, Any] = {"tool": f"inductor-bench {command}", "status": status}
    meta |= {k: getattr(result, k) for k in ("device", "device_name", "versions", "created", "errors")}
    write_atomic(run_dir / META_FILE, json.dumps(meta | more, indent=1))


def compare_status(result: CompareResult) -> str:
    """The whole compare's: interrupted where a column was, ok where every column is and
    nothing went wrong, failed where none is, else partial."""
    states = [m.status for m in result.modes]
    if Status.INTERRUPTED in states:
        return Status.INTERRUPTED
    if states and all(s == Status.OK for s in states) and not result.errors:
        return Status.OK
    return Status.PARTIAL if Status.OK in states else Status.FAILED
