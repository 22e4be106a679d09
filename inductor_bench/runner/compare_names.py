"""The names of a comparison's model files and the directories of its columns."""

from __future__ import annotations

import re
from pathlib import Path

from ..core.errors import UsageError

# What a name's directory cannot hold where a column compiles in a cache of its own: the C++
# compile command is split as a shell would (``cache.check_compilable``).
_SPLIT_BY_SHELL = re.compile(r"""[\s'"\\]+""")


def model_names(paths: list[str]) -> list[str]:
    """Names for the model files of one comparison (a sweep's cells too): their stems, each run
    of spaces, quotes and backslashes made one ``_`` (``my mlp.py`` -> ``my_mlp``: the name is
    a column's directory, which the C++ compile command must hold whole), made unique (``mlp``,
    ``mlp-2`` for the same file given twice)."""
    names: list[str] = []
    for p in paths:
        stem = _SPLIT_BY_SHELL.sub("_", Path(p).stem)
        name, k = stem, 1
        while name in names:
            k += 1
            name = f"{stem}-{k}"
        names.append(name)
    return names


def check_names(names: list[str], files: int) -> None:
    """``--names``: one name per model file, each its own, none empty (said with what is wrong)."""
    def some(n: int, what: str) -> str:
        return f"{n} {what}" + ("" if n == 1 else "s")
    twice = [n for n in names if names.count(n) > 1]
    wrong = (f"{some(len(names), 'name')} for {some(files, 'model file')}" if len(names) != files
             else f"{twice[0]} given twice" if twice else "an empty name" if not all(names) else None)
    if wrong:
        give = "1 name" if files == 1 else f"{files} different names, one per model file"
        raise UsageError(f"--names: {wrong}: give {give}")


def column_dir(run_dir: Path, model: str, mode: str) -> Path:
    """A column's directory in the run's: ``MODE``, or ``MODEL-MODE`` with several model files."""
    return run_dir / (f"{model}-{mode}" if model else mode)
