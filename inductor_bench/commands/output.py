"""Where the commands put what they made: stdout, a JSON file, an HTML page, the run
directory's reports (``report.txt`` and ``index.html``)."""

from __future__ import annotations

import contextlib
import enum
import errno
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from ..core.compare import CompareResult
from ..core.errors import UsageError
from ..core.result_json import result_json
from ..core.rundir import HTML_REPORT_FILE, REPORT_FILE, Result
from ..render.breakdown import render_breakdown
from ..render.compare import render_compare
from ..render.doc import HTML, TEXT, for_terminal
from ..render.html_page import with_base
from ..runner.rundir import WriteError, copy_atomic, write_atomic
from .progress import note


class Format(str, enum.Enum):
    """What a command writes on stdout."""

    text = "text"
    markdown = "markdown"
    html = "html"
    json = "json"

    def __str__(self) -> str:
        # typer before 0.29 gives a parsed value back its member by str(value): Python's
        # 'Format.text' found none, and every command's --format read None (an internal error)
        return self.value


# A report in the format it is asked for by name: ``lambda f: render_x(result, f)``.
Document = Callable[[str], str]


def emit_json(text: str, dest: str | Path) -> None:
    """Write JSON to a path, or to stdout for '-'. Existing files are never overwritten (nor
    one another run writes at the same time): the file is written whole, then linked in."""
    if str(dest) == "-":
        to_stdout(text if text.endswith("\n") else text + "\n")
        return
    p = Path(dest)
    refuse_taken_json(str(p))
    make_parent(p)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.json")
    try:
        write_atomic(tmp, text)
    except WriteError as e:  # named by the file asked for, not the one written first
        raise WriteError(str(e).replace(str(tmp), str(p), 1)) from None
    try:
        os.link(tmp, p)
    except FileExistsError:
        raise UsageError(f"--json {p}: already exists (results are never overwritten)") from None
    except OSError as e:
        raise WriteError(f"{p}: cannot write ({e.strerror or e})") from None
    finally:
        tmp.unlink(missing_ok=True)


def refuse_taken_json(dest: str | None) -> None:
    """``--json PATH`` where a file already is: refused (results are never overwritten), by
    every command before its work, and again as the JSON is written."""
    if dest not in (None, "-") and (Path(dest).exists() or Path(dest).is_symlink()):
        raise UsageError(f"--json {Path(dest)}: already exists (results are never overwritten)")


def refuse_html_onto(dest: Path | None) -> None:
    """``--html PATH`` where a directory is, or a file that is not an HTML page (a result):
    refused by every command before its work (the page could only fail to be written at the
    run's end), and again as the page is written; ``--html -`` too, which ``--json -`` reads
    as stdout and which would otherwise be a file named ``-``."""
    if dest is not None and str(dest) == "-":
        raise UsageError("--html -: the page is written to a file (give its path); --format html "
                         "prints it on stdout")
    if dest is not None and dest.is_dir():
        raise UsageError(f"--html {dest}: is a directory (give the page's file, as {dest / 'report.html'})")
    if dest is not None and dest.is_file() and not _is_page(dest):  # a run's breakdown.json was replaced
        raise UsageError(f"--html {dest}: already exists and is not an HTML page (a page is replaced, "
                         "no other file)")


def _is_page(path: Path) -> bool:
    """Whether the file at ``path`` begins as an HTML page does, or holds nothing to lose."""
    try:
        with open(path, "rb") as f:
            head = f.read(64).lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    except OSError:
        return False
    return not head or head.startswith((b"<!doctype html", b"<html"))


def check_targets(json_out: str | None, html_out: Path | None) -> None:
    """``--json PATH`` and ``--html PATH`` checked before any work, where a run of an hour
    would otherwise be refused at its end: a JSON file already there, a page onto a directory,
    either under a file (exit 2), or where no file can be made (exit 74)."""
    refuse_taken_json(json_out)
    refuse_html_onto(html_out)
    if json_out not in (None, "-"):
        check_writable("--json", Path(json_out))
    if html_out is not None:
        check_writable("--html", html_out)


def check_writable(option: str, path: Path) -> None:
    """``path`` can be written as ``option`` writes it: a device, FIFO or link already there
    is written into (``write_html``), so it must take writing; else a file is made in its
    directory, made first where it is missing, so the nearest directory on its way that
    exists must be one, and take a new file (tried: a read-only disk, a directory of
    another user, ``/proc``)."""
    if os.path.lexists(path) and not path.is_file() and not path.is_dir():
        if os.path.exists(path) and not os.access(path, os.W_OK):
            raise WriteError(f"{option} {path}: cannot write it (Permission denied)")
        return
    there = path.parent
    while not os.path.lexists(there) and there != there.parent:
        there = there.parent
    if not there.is_dir():
        raise UsageError(f"{option} {path}: {there} is not a directory")
    try:
        with tempfile.TemporaryFile(dir=there):
            pass
    except OSError as e:
        raise WriteError(f"{option} {path}: cannot write in {there} ({e.strerror or e})") from None


def make_parent(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise WriteError(f"{path.parent}: cannot create the directory ({e.strerror or e})") from None


def to_stdout(text: str) -> None:
    """``text`` on stdout, flushed: a closed stdout or one on a full disk is a WriteError. The
    bytes go to the binary stream beneath, written until all are taken: with PYTHONUNBUFFERED
    that stream is the file itself, and Python's text layer writes once and drops what a
    partial write left (a reader that closed its pipe after 10 bytes got 64 KiB of 141 KiB,
    and exit 0)."""
    try:
        if sys.stdout is None:
            raise OSError(errno.EBADF, "stdout is closed")
        out = getattr(sys.stdout, "buffer", None)
        if out is None:  # a text stream with no bytes beneath
            sys.stdout.write(text)
            sys.stdout.flush()
            return
        sys.stdout.flush()
        _write_all(out, text.encode(sys.stdout.encoding or "utf-8", sys.stdout.errors or "strict"))
    except OSError as e:
        raise WriteError(f"stdout: cannot write the report ({e.strerror or e})") from None


def _write_all(out: BinaryIO, data: bytes) -> None:
    """``data`` written to ``out`` until all of it is taken, then flushed."""
    view = memoryview(data)
    while view:
        n = out.write(view)
        if not n:  # a non-blocking stream that took nothing
            raise OSError(errno.EAGAIN, "stdout took none of the report")
        view = view[n:]
    out.flush()


def emit(
    json_text: str,
    document: Document,
    fmt: Format,
    json_out: str | None,
    html_out: Path | None = None,
    links: Path | None = None,
) -> None:
    """The result as the options ask: ``--json PATH`` (or ``-`` for stdout), ``--html PATH``,
    and the report in ``--format`` on stdout, unless stdout already holds the JSON.

    ``links``: the directory the report's file links are relative to (the run directory; None:
    the current directory, where the command line's paths start). A page printed on stdout is
    taken to be saved in the current directory. A file that cannot be written (a disk filled
    during the run) still leaves the report on stdout, then is the error."""
    try:
        if json_out:
            emit_json(json_text, json_out)
        if html_out is not None:
            refuse_html_onto(html_out)
            write_html(html_out, document(HTML), links, asked=True)
    except (WriteError, UsageError):
        if json_out != "-":
            with contextlib.suppress(WriteError):  # the file's error is the one said
                _print(json_text, document, fmt, links)
        raise
    if json_out != "-":
        _print(json_text, document, fmt, links)


def _print(json_text: str, document: Document, fmt: Format, links: Path | None) -> None:
    """The report on stdout in ``fmt``."""
    if fmt is Format.json:
        emit_json(json_text, "-")
    elif fmt is Format.html:
        to_stdout(with_base(document(HTML), _relative(links, Path.cwd())))
    else:
        with for_terminal(terminal_width()):  # text on a terminal fits it
            to_stdout(document(fmt.value))


def _relative(links: Path | None, page_dir: Path) -> str:
    """The links' directory as seen from the page's directory, "/"-separated."""
    return Path(os.path.relpath(Path(links or ".").resolve(), page_dir.resolve())).as_posix()


def write_html(path: Path, page: str, links: Path | None = None, *, asked: bool = False) -> None:
    """An HTML report at ``path`` (rewritten if it exists: it is a view of a result, which is
    never overwritten), its links made to work from where it is. ``asked``: a path the user
    gave (``--html``), written into the device, FIFO or link it is; a file of a directory the
    tool writes is renamed over, a link found there never followed."""
    make_parent(path)
    text = with_base(page, _relative(links, path.parent))
    if asked and (path.is_symlink() or (path.exists() and not path.is_file())):
        _write_through(path, text)  # /dev/stdout, a FIFO, a link: renaming over it would replace it
    else:
        write_atomic(path, text)


def _write_through(path: Path, text: str) -> None:
    """``text`` written into what ``path`` is or leads to (a device, a FIFO, a link's target)."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise WriteError(f"{path}: cannot write ({e.strerror or e})") from None


def render_result(result: Result, fmt: str = TEXT, **kw) -> str:
    if isinstance(result, CompareResult):
        return render_compare(result, fmt)
    return render_breakdown(result, fmt, **kw)


def write_report(run_dir: Path, result: Result) -> None:
    """The reports beside a saved result, rewritten with it: ``report.txt`` and the same as a
    page, ``index.html`` (its links relative to the run directory)."""
    write_atomic(run_dir / REPORT_FILE, render_result(result))
    write_atomic(run_dir / HTML_REPORT_FILE, render_result(result, HTML))


def replace_result(run_dir: Path, name: str, kept: str, result: Result) -> bool:
    """``run_dir``'s result file ``name`` saved again as ``result``, and its reports; the file it
    replaces copied to ``kept`` first where none was kept before (a full disk or a signal loses
    neither). Whether this was the first replacement (``kept`` then holds the run's own)."""
    first = not (run_dir / kept).exists()
    if first:
        copy_atomic(run_dir / name, run_dir / kept)
    write_atomic(run_dir / name, result_json(result))
    write_report(run_dir, result)
    return first


def terminal_width() -> int | None:
    """The terminal's width, which text tables fit; None when stdout is not a terminal (a file
    or a pipe gets full names)."""
    if sys.stdout is None or not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size().columns


def note_run_dir(run_dir: Path) -> None:
    note(f"run directory: {run_dir}")
