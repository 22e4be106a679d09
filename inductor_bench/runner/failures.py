"""A failure in the user's model or script, as one line: where it failed, the exception, and
the line of its message that says why."""

from __future__ import annotations

import os
import re
import sys
import traceback

from ..core import graph_breaks

# torch.compile's fake-tensor run of an op that failed (Dynamo's TorchRuntimeError): the op's own
# error is quoted in the message, "... got RuntimeError('a and b must have same reduction dim')"
_FAKE_CAUSE = re.compile(r"\bgot (?P<type>\w*(?:Error|Exception))\((?P<q>['\"])(?P<msg>.+?)(?P=q)\)")


def describe(e: BaseException, what: str = "the model", own_file: str | None = None) -> str:
    """One line: where it failed, the exception and its first line; where that line only
    introduces the cause (``backend='inductor' raised:``), the cause's line after it; where
    torch.compile's fake tensors ran an op that failed (a shape error, which eager would raise
    as well), that op's own error; a module not installed, where it was imported
    (``missing_module``)."""
    msg = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    first = msg[0] if msg else ""
    if first.endswith(":") and len(msg) > 1:
        first = f"{first} {msg[1]}"
    mod = type(e).__module__ or ""
    if mod == "torch._dynamo.exc" and type(e).__name__ == "Unsupported" and (
            line := graph_breaks.fullgraph_error(str(e))):
        return f"torch.compile failed: {line}"[:600]
    if type(e).__name__ == "TorchRuntimeError" and (cause := _FAKE_CAUSE.search(str(e))):
        return f"{what} failed as torch.compile traced it: {cause['type']}: {cause['msg']}"[:600]
    if isinstance(e, KeyboardInterrupt):  # its own: a stop signal's never reaches describe
        return (f"{what} raised KeyboardInterrupt itself (not a Ctrl-C: no signal reached it)"
                + (f": {first}" if first else ""))[:600]
    where = (
        "torch.compile failed" if mod.startswith(("torch._dynamo", "torch._inductor")) else f"{what} raised"
    )
    return f"{where}: {type(e).__name__}: {first}{missing_module(e, own_file)}{no_stdin(e)}"[:600]


def no_stdin(e: BaseException) -> str:
    """For ``input()`` at the end of its input (``EOFError: EOF when reading a line``), why:
    a worker has no standard input (a process in a session of its own cannot read a terminal),
    so ``input()`` reads as from ``/dev/null``; the line that called it. '' otherwise."""
    if not isinstance(e, EOFError) or str(e) != "EOF when reading a line":
        return ""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if not f.filename.startswith("<")]
    at = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    return (f" (input(){at} read standard input, which inductor-bench gives none, as "
            "`< /dev/null` would: pass what it asks for as an argument after --)")


def missing_module(e: BaseException, own_file: str | None = None) -> str:
    """For a module not installed (``ModuleNotFoundError``), what the bare message leaves out:
    the file and line that imported it where that is a library's (timm importing torchvision),
    with the line of ``own_file`` (the model file or script) that reached it, and the Python
    that lacks it; '' for any other exception."""
    if not isinstance(e, ModuleNotFoundError):
        return ""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if not f.filename.startswith("<")]
    own = [f for f in frames if own_file and os.path.abspath(f.filename) == os.path.abspath(own_file)]
    site = ""
    if frames and frames[-1].filename != (own[-1].filename if own else None):
        site = f"imported at {_short(frames[-1].filename)}:{frames[-1].lineno}"
        site += f", reached from {os.path.basename(own[-1].filename)}:{own[-1].lineno}; " if own else "; "
    if here := _in_working_directory(e.name):
        return (f" ({site}the working directory holds {here}, but Python does not look there for a file's "
                "imports: only beside the file and on PYTHONPATH)")
    return f" ({site}not installed for {sys.executable}, the Python inductor-bench runs it with)"


def _in_working_directory(name: str | None) -> str:
    """``helper.py`` (or ``helper/``) where the working directory holds the module ``name``'s
    top level, which ``python train.py`` run from there does not import either; else ''."""
    top = (name or "").split(".")[0]
    if not top or os.path.realpath(os.getcwd()) in map(os.path.realpath, filter(None, sys.path)):
        return ""
    if os.path.isfile(f"{top}.py"):
        return f"{top}.py"
    return f"{top}/" if os.path.isdir(top) else ""


def _short(filename: str) -> str:
    """A library's file from its package down (``timm/layers/create_norm.py``): the path after
    the longest ``sys.path`` entry holding it, else the whole path."""
    roots = [r for r in sys.path if r and filename.startswith(os.path.join(r, ""))]
    return filename[len(os.path.join(max(roots, key=len), "")):] if roots else filename
