"""Where a run's Inductor cache lives: a private cache reused across runs, or a fresh one.

Every compile of ours runs with our own Inductor flags (unique kernel names, benchmark
harnesses, C++ kernel profiling: ``capture.INDUCTOR_ENV``), which the user's own cache
(``/tmp/torchinductor_<user>``) must never see. Until now each run compiled from cold in a
cache inside its run directory; a user iterating on one model paid the whole compile every
time (timm mixnet_s training: 180 s on a 2-core machine).

So by default a run uses a cache of ours under the user's cache directory,
``$XDG_CACHE_HOME/inductor-bench/`` (``~/.cache/inductor-bench/``), one subdirectory per set
of flags (``flags_tag``), shared by every run with those flags: the second run of a model
hits Inductor's FX graph cache, AOTAutograd's cache (a training graph's entry once its
backward has compiled: ``dynamo_counts.aot_cache_counts``) and its kernel caches (the C++
kernels' only where the same install of torch built them: ``dynamo_counts.count_kernel_builds``),
each outcome said on the compile line. The directory is the user's own and
closed to others (mode 0700); one owned by someone else, or writable by group or others, is
refused (a cache is code that gets loaded and run). ``--fresh-cache`` compiles cold, in a
new cache inside the run directory (for compile-time figures; ``compare`` does it unless
told otherwise). Either way the run directory's ``cache`` entry points at the cache used
(a link to the shared one), and every module and kernel file profiled is copied into the
run directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import stat
from pathlib import Path

from ..core.errors import UsageError
from ..core.rundir import CACHE_DIR
from .capture import INDUCTOR_ENV
from .presence import on_host

APP = "inductor-bench"
# Bump when what we put in the cache changes in a way Inductor's own keys do not see.
# v2: the records of each module's lowering (core/source_store.py) beside Inductor's entries;
# a cache filled before them would answer every hit without one. v3: those records keep the
# nodes of higher-order ops' subgraphs (a checkpointed region's lines are only there). v4: a
# fused pattern's node at the node that computes, a pass's node on a line of no top-level code
# (runner/sources.py): a record made before is read as before, so it would keep the old lines.
# v5: a node named as a pass's (``addmm_default``) is a pass's on any line. v6: a backward
# graph's nodes that recompute the forward's work are marked (a record made before has none).
# v7: those marks read from the partitioner's tags alone (runner/sources.py): a record made
# before under torch 2.10 to 2.12 has none, or says nothing was recomputed. v8: each node's
# line with the lines outside torch that called it (``callers``), carried over as one chain: a
# record made before has none, and its lines would not be carried to a graph whose nodes do.
LAYOUT = "v8"


def user_cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / APP


def flags_tag(freezing: bool) -> str:
    """A short name for the set of Inductor flags a compile runs with."""
    flags = sorted({**INDUCTOR_ENV, "TORCHINDUCTOR_FREEZING": "1" if freezing else "0"}.items())
    digest = hashlib.sha256(repr((LAYOUT, flags)).encode()).hexdigest()[:12]
    return f"inductor-{LAYOUT}-{digest}"


def check_private(path: Path, group_reaches: bool = True, what: str | None = None) -> None:
    """Refuse a directory (or a file in it) that is not ours alone, or a link: a link can point
    the cache at a directory someone else controls. ``group_reaches=False``: the group cannot
    get to it (a directory above is closed to it), so its group-write bit is harmless (a umask
    of 002 sets it on everything Inductor writes)."""
    st = path.lstat()
    what = what or ("cache directory" if stat.S_ISDIR(st.st_mode) else "entry of the cache")
    if stat.S_ISLNK(st.st_mode):
        raise UsageError(f"{what} {path} is a symbolic link; refusing to use it "
                         "(set XDG_CACHE_HOME to a real directory, or pass --fresh-cache)")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise UsageError(f"{what} {path} belongs to another user; refusing to use it "
                         "(set XDG_CACHE_HOME, or pass --fresh-cache)")
    if st.st_mode & (stat.S_IWOTH | (stat.S_IWGRP if group_reaches else 0)):
        raise UsageError(f"{what} {path} is writable by others; refusing to use it "
                         f"(chmod go-w {path}, or pass --fresh-cache)")


def check_tree(path: Path) -> None:
    """Every directory and file below ``path`` ours alone (a cache is code that gets loaded
    and run: one writable entry deep inside is as good as the whole). Links are not followed."""
    group_reaches = bool(path.lstat().st_mode & stat.S_IXGRP)
    for root, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            check_private(Path(root) / name, group_reaches)


def private_dir(path: Path) -> Path:
    """``path`` (created 0700 where missing) after checking it, its parent and everything
    below it are ours alone."""
    for p in (path.parent, path):
        if not p.exists() and not p.is_symlink():
            p.mkdir(mode=0o700, parents=True, exist_ok=True)
        check_private(p, what="cache directory")
        if not p.is_dir():
            raise UsageError(f"cache directory {p} is not a directory; refusing to use it "
                             "(remove it, set XDG_CACHE_HOME, or pass --fresh-cache)")
    check_tree(path)
    return path


def run_cache(
    run_dir: Path, *, fresh: bool, freezing: bool = False, device: str | None = None
) -> tuple[Path, bool]:
    """(the cache directory of this run, whether it is the shared one). The run directory's
    ``cache`` entry is the fresh cache itself, or a link to the shared one. ``device``: the
    run's ``--device``; where it runs on the host, whose C++ compile command cannot hold every
    path, such a cache is refused (``check_compilable``)."""
    entry = run_dir / CACHE_DIR
    if device is not None:
        check_caches(run_dir, fresh=fresh, freezing=freezing, device=device)
    if fresh:
        entry.mkdir(parents=True, exist_ok=True)
        return entry, False
    shared = private_dir(user_cache_root() / flags_tag(freezing))
    if not entry.exists() and not entry.is_symlink():
        with contextlib.suppress(OSError):  # no symlinks here: the results say where it is
            entry.symlink_to(shared, target_is_directory=True)
    return shared, True


def check_caches(
    run_dir: Path, columns: tuple[str, ...] | list[str] = ("",), *, fresh: bool, freezing: bool,
    device: str, came_from: str = "--out", columns_advice: str = "give --names names without them",
) -> None:
    """Refuse, where the run compiles on the host, the caches ``run_cache`` would give the
    directories ``columns`` of ``run_dir`` (``""``: the run directory itself, as a breakdown's;
    each column's of a compare, ``MODEL/MODE`` of a sweep's) whose paths its C++ compile
    command cannot hold (``check_compilable``): each fresh cache, or the shared one. Called
    with the paths the run will have before anything is made, so a run refused leaves nothing
    behind (it had left a run directory with a failed result). The advice names where the
    character came from: ``came_from`` (``--out``, ``--runs-dir``) where ``run_dir``
    holds it, else ``columns_advice`` (the columns' names)."""
    if not on_host(device):
        return
    if not fresh:
        check_compilable(user_cache_root() / flags_tag(freezing), "the shared cache",
                         "set XDG_CACHE_HOME to a path without them")
        return
    fix = (f"give {came_from} a path without them" if not _holds_whole(run_dir.absolute())
           else columns_advice)
    for c in columns:
        check_compilable((run_dir / c if c else run_dir) / CACHE_DIR, "the run directory's cache",
                         f"{fix}, or compile in the shared cache "
                         "(compare and sweep --warm-cache; breakdown without --fresh-cache)")


def check_compilable(cache: Path, what: str, instead: str) -> None:
    """Refuse a cache directory whose path Inductor's C++ compile cannot take: torch builds the
    compiler's command line as one string and splits it as a shell would (``shlex.split``), so a
    space, a quote or a backslash in the path cuts it in two (with a space, g++ reads the run
    directory's first word as both input and output: ``C++ compile error`` after the whole
    compile). Said before any worker starts."""
    path = cache.absolute()
    if not _holds_whole(path):
        raise UsageError(f"{what} {path} has a space, a quote or a backslash in its path, which "
                         f"Inductor's C++ compile command cannot hold (torch splits it at them): {instead}")



def _holds_whole(path: Path) -> bool:
    """Whether the shell's splitting (``shlex.split``) keeps ``path`` one word."""
    try:
        return shlex.split(str(path)) == [str(path)]
    except ValueError:  # an unclosed quote
        return False
