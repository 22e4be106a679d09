"""How the tool starts a Python process of its own (a worker, a sweep's job), so that a user's
file run there sees the ``sys.path`` that ``python FILE`` gives it.

``python -m MODULE`` puts the working directory first on ``sys.path``, and a ``PYTHONPATH``
holding this package's root (to import the very package the parent runs, a source checkout
included) an entry before the user's own: a script in another directory would import a module
of the working directory, or of the checkout, that ``python`` does not find, or one that shadows
the module ``python`` finds. So the process starts as ``python -c BOOT ROOT MODULE ARGS``, its
environment the user's (``PYTHONPATH`` as they set it, or unset): ``BOOT`` puts ROOT in
front of the path Python built, for the tool's own imports, moves the working directory
``-c`` put first to the end (a ``queue.py`` there would stand in for the standard library's
as torch imports it), and runs MODULE as ``-m`` runs it. ``put_first_on_path`` later takes
ROOT and the working directory away (the worker's modules are imported by then) and puts a
file's directory first, as ``python FILE`` does.
Standard library only: it runs before anything else is imported.
"""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the directory holding inductor_bench/

BOOT = """\
import sys
at_start = [*sys.modules]
root = sys.argv.pop(1)
del sys.argv[0]
head = 0 if getattr(sys.flags, "safe_path", False) else 1
cwd = sys.path[:head]
sys.path[:] = [root, *sys.path[head:], *cwd]
from inductor_bench.runner import python_start
python_start.started(root, cwd, at_start)
import runpy
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""

# What BOOT put on the path Python built, for the worker's own imports, until taken away: ROOT
# in front, and the ``-c`` entry (the working directory: a test's worker module is found there)
# at the end.
_OWN_FRONT: list[str] = []
_OWN_BACK: list[str] = []
# The top-level modules Python had imported as it started (before BOOT): ``python FILE`` has
# them too, so a file beside FILE of one of their names is not imported there either.
AT_START: set[str] = set()


def command(module: str, args: list[str]) -> list[str]:
    """The command line that runs ``python -m module args``, the user's ``sys.path`` kept."""
    return [sys.executable, "-c", BOOT, PACKAGE_ROOT, module, *args]


def started(root: str, cwd: list[str], at_start: list[str]) -> None:
    """Called by ``BOOT``: the entries of ``sys.path`` that are there for the tool alone, and
    the modules imported before it ran."""
    _OWN_FRONT[:], _OWN_BACK[:] = [root], cwd
    AT_START.update(name.split(".")[0] for name in at_start)


def put_first_on_path(directory: str, *, as_python: bool) -> None:
    """``sys.path`` as ``python FILE`` gives a file in ``directory``: the entries ``BOOT``
    added taken away (once), the directory first. ``as_python``: under ``-P`` or
    ``PYTHONSAFEPATH`` not even that, as Python puts none there (a script); a model file
    imported for its factory always gets it, to import the modules beside it."""
    while _OWN_FRONT:
        own = _OWN_FRONT.pop()
        if own in sys.path:
            sys.path.remove(own)  # its first place: in front
    while _OWN_BACK:
        own = _OWN_BACK.pop()
        if own in sys.path:
            del sys.path[len(sys.path) - 1 - sys.path[::-1].index(own)]  # its last place: at the end
    if as_python and getattr(sys.flags, "safe_path", False):
        return
    if not sys.path or sys.path[0] != directory:
        sys.path.insert(0, directory)
