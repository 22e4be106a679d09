"""How the tool starts a Python process of its own (a worker, a sweep's job), so that a user's
file run there sees the ``sys.path`` that ``python FILE`` gives it.

``python -m MODULE`` puts the working directory first on ``sys.path``, and a ``PYTHONPATH``
holding this package's root (to import the very package the parent runs, a source checkout
included) an entry before the user's own: a script in another directory would import a module
of the working directory, or of the checkout, that ``python`` does not find, or one that shadows
the module ``python`` finds. So the process starts as ``python -c BOOT ROOT MODULE ARGS``, its
environment the user's (``PYTHONPATH`` as they set it, or unset): ``BOOT`` puts ROOT in
front of the path Python built, for the tool's own imports, and runs MODULE as ``-m`` runs
it. ``put_first_on_path`` later takes ROOT and the working directory away (the worker's
modules are imported by then) and puts a file's directory first, as ``python FILE`` does.
Standard library only: it runs before anything else is imported.
"""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the directory holding inductor_bench/

BOOT = """\
import sys
root = sys.argv.pop(1)
del sys.argv[0]
head = 0 if getattr(sys.flags, "safe_path", False) else 1
own = [root, *sys.path[:head]]
sys.path[:] = [*own, *sys.path[head:]]
from inductor_bench.runner import python_start
python_start.started(own)
import runpy
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""

# What BOOT put in front of the path Python built, for the worker's own imports, until taken
# away: ROOT, and the ``-c`` entry (the working directory, as ``-m`` gives it: a test's worker
# module is found there).
_OWN_ENTRIES: list[str] = []


def command(module: str, args: list[str]) -> list[str]:
    """The command line that runs ``python -m module args``, the user's ``sys.path`` kept."""
    return [sys.executable, "-c", BOOT, PACKAGE_ROOT, module, *args]


def started(own: list[str]) -> None:
    """Called by ``BOOT``: the entries of ``sys.path`` that are there for the tool alone."""
    _OWN_ENTRIES[:] = own


def put_first_on_path(directory: str, *, as_python: bool) -> None:
    """``sys.path`` as ``python FILE`` gives a file in ``directory``: the entries ``BOOT``
    added taken away (once), the directory first. ``as_python``: under ``-P`` or
    ``PYTHONSAFEPATH`` not even that, as Python puts none there (a script); a model file
    imported for its factory always gets it, to import the modules beside it."""
    while _OWN_ENTRIES:
        own = _OWN_ENTRIES.pop()
        if own in sys.path:
            sys.path.remove(own)  # its first place: in front
    if as_python and getattr(sys.flags, "safe_path", False):
        return
    if not sys.path or sys.path[0] != directory:
        sys.path.insert(0, directory)
