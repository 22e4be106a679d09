"""Every option more than one command takes, declared once, and the global settings.

A command lists the options it takes in its signature with these types
(``device: options.Device = AUTO``); their names, short flags and help live here.
"""

from __future__ import annotations

import enum
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from ..core.devices import device_help
from ..core.errors import UsageError
from ..core.modes import COMMON as COMMON_MODES
from ..core.symbols import is_size_symbol
from ..core.workload import DTYPES, WorkloadOptions
from ..runner.settings import RunSettings
from .global_settings import Settings, settings  # noqa: F401 (commands and tests read them here)
from .output import Format, check_targets, write_report
from .progress import TerminalProgress

FREEZING_HELP = (
    "Inference only: compile with weights frozen into constants (torch._inductor.config.freezing); "
    "CPU GEMM templates of max-autotune need it."
)
WINDOWS_HELP = (
    "Profiler sessions per graph, the fastest kept: a session can run slow from start to end "
    "(heap fragmentation under the profiler), the next one not."
)

# -- the workload ------------------------------------------------------------------------------
Device = Annotated[str, typer.Option("--device", "-d", help=device_help())]
Train = Annotated[
    bool, typer.Option("--train", help="Forward + backward of a scalar loss (default: inference).")
]
Dtype = Annotated[str, typer.Option("--dtype", help=", ".join(DTYPES[:-1]) + " or " + DTYPES[-1] + ".")]
Autocast = Annotated[
    bool, typer.Option("--autocast", help="Keep the model in float32 and autocast to --dtype.")
]
BatchSize = Annotated[int | None, typer.Option("--batch-size", "-b", help="Passed to make_workload().")]
Freezing = Annotated[bool, typer.Option("--freezing", help=FREEZING_HELP)]
MODE_HELP = (
    "torch.compile mode: " + ", ".join(COMMON_MODES) + ", or another mode the installed torch "
    "lists (torch._inductor.list_mode_options(); e.g. lite in 2.11)."
)
Mode = Annotated[str, typer.Option("--mode", "-m", help=MODE_HELP)]

# -- how it is measured ------------------------------------------------------------------------
# The profiler holds every event of a window's iterations in the worker's memory until the
# window ends: about 1.4 KB an event, 21 events an iteration of models/mlp.py and 92 of
# models/densenet.py (torch 2.13 CPU), so 10000 iterations of densenet.py hold about 1.3 GB.
MAX_ITERATIONS = 10_000


def at_most(limit: int, why: str) -> Callable[[int | None], int | None]:
    """An option's callback refusing a value above ``limit``, saying ``why`` (typer's ``max=``
    says no reason)."""
    def check(value: int | None) -> int | None:
        if value is not None and value > limit:
            raise typer.BadParameter(f"at most {limit}, not {value}: {why}")
        return value
    return check


at_most_max_iterations = at_most(MAX_ITERATIONS, "the profiler keeps every event of a window's iterations "
                                 f"in memory (about 1.3 GB for {MAX_ITERATIONS} of a small CNN)")


Iterations = Annotated[
    int | None,
    typer.Option("--iterations", "-n", min=1, callback=at_most_max_iterations,
                 help=f"Profiled iterations per window, at most {MAX_ITERATIONS} (default: auto, "
                 "20-100, about 0.25 s)."),
]
Windows = Annotated[int, typer.Option("--windows", "-w", min=1, help=WINDOWS_HELP)]
# Processes run one after the other, each a fresh worker that imports torch and loads every
# module again (5-7 s for models/mlp.py on a 2-core CPU); a list of 10**12 of them was built
# before the first started, and filled the memory.
MAX_PROCESSES = 100
PROCESSES_HELP = (
    "Fresh profiling processes the windows are shared among, one after the other, the fastest "
    "window of all kept: a whole process can run slower than the next (never more than --windows; "
    f"at most {MAX_PROCESSES})."
)


at_most_max_processes = at_most(MAX_PROCESSES, "each is a fresh worker started after the last, several "
                                "seconds each")


Processes = Annotated[int, typer.Option("--processes", min=1, callback=at_most_max_processes,
                                        help=PROCESSES_HELP)]
Timeout = Annotated[float, typer.Option("--timeout", help="Seconds allowed per worker.")]
FreshCache = Annotated[
    bool,
    typer.Option("--fresh-cache", help="Compile cold in a new cache inside the run directory "
                 "(default: reuse inductor-bench's private cache, $XDG_CACHE_HOME/inductor-bench)."),
]

SIZE_HELP = (
    "SYMBOL=N: profile the graphs compiled with dynamic shapes at this size of one of their size "
    "symbols (as the report names them: s77=64) instead of the size most of their calls ran at; "
    "repeat it for several. The graphs' own inputs are drawn at that size."
)


def a_size(value: str) -> str:
    """``--size s77=64``: a size symbol and a non-negative integer."""
    name, eq, n = value.partition("=")
    if not eq or not is_size_symbol(name.strip()) or not n.strip().isdigit():
        raise typer.BadParameter(f"{value!r}: expected SYMBOL=N, a size symbol as the report names it "
                                 "and an integer >= 0 (s77=64)")
    return f"{name.strip()}={int(n)}"


Size = Annotated[list[str] | None, typer.Option("--size", parser=a_size, help=SIZE_HELP)]


def sizes_of(values: list[str] | None) -> dict[str, int]:
    """The parsed ``--size`` options as {symbol: size}, the last one of a symbol winning."""
    return {name: int(n) for name, _, n in (v.partition("=") for v in values or [])}


# -- paths -------------------------------------------------------------------------------------


class TypedPath(type(Path())):  # type: ignore[misc]
    """A path that keeps the text it was typed as: ``Path("./train.py")`` is ``train.py``, where
    ``python ./train.py`` gives its script ``sys.argv[0]`` as typed."""

    typed = ""


def a_path(value: str | Path) -> Path:
    """A path given on the command line. An empty one (an unset shell variable) is refused:
    as a ``Path`` it would be the current directory, read or written without being named."""
    if isinstance(value, Path):  # a default
        return value
    if not value:
        raise typer.BadParameter("an empty path (an unset variable?)")
    path = TypedPath(value)
    path.typed = value
    return path


def exists(path: Path) -> bool:
    """``path.exists()``, where a directory on its way that cannot be searched (no permission)
    is bad input, named: a path that cannot be read, not one that cannot be written."""
    try:
        return path.exists()
    except OSError as e:
        raise UsageError(f"{path}: cannot read ({e.strerror or e})") from None


def a_target(value: str) -> str:
    """``a_path`` for an output that may also be '-' (stdout)."""
    return str(a_path(value))


# -- where results go --------------------------------------------------------------------------
Out = Annotated[
    Path | None,
    typer.Option("--out", "-o", parser=a_path, help="Run directory (must not exist or be empty)."),
]
RunsDir = Annotated[Path, typer.Option("--runs-dir", parser=a_path, help="Where new run directories go.")]
JsonOut = Annotated[
    str | None,
    typer.Option("--json", parser=a_target,
                 help="Also write the JSON here ('-': stdout, in place of the text report)."),
]


def check_runs_dir(runs_dir: Path, out: Path | None) -> None:
    """``--runs-dir`` where a file is, or under one, refused before any work (it is not used
    beside ``--out``)."""
    if out is not None:
        return
    p = runs_dir
    while not p.exists() and p != p.parent:
        p = p.parent
    if p.exists() and not p.is_dir():
        raise UsageError(f"--runs-dir {runs_dir}: not a directory")


def one_stdout(
    fmt: Format, json_out: str | None, html_out: Path | None = None, out: Path | None = None
) -> None:
    """Refuses ``--json -`` beside ``--format markdown|html``: both would be written to stdout,
    and one of them lost; ``--json PATH`` where a file already is and ``--html PATH`` where a
    directory is, either where no file can be made or inside the run's directory ``out`` (a
    run of an hour refused at its end); said before any work."""
    check_targets(json_out, html_out)
    outside_run(out, json_out, html_out)
    if json_out == "-" and fmt in (Format.markdown, Format.html):
        raise UsageError(f"--json - and --format {fmt.value} both write to stdout: give --json a file "
                         f"(--json result.json), or leave out --format")


def outside_run(out: Path | None, json_out: str | None, html_out: Path | None) -> None:
    """``--json`` or ``--html`` inside the run's directory ``--out``, where the run saves its
    own result and page (``breakdown.json``, ``index.html``), and no file is overwritten:
    refused before any work (the JSON was refused after the run, the page replaced the result)."""
    if out is None:
        return
    run = Path(os.path.realpath(out))
    for option, path in (("--json", json_out), ("--html", html_out)):
        if path is not None and str(path) != "-" and run in Path(os.path.realpath(path)).parents:
            raise UsageError(f"{option} {path}: inside --out {out}, where the run saves its own result and "
                             "page; give a path outside it")


def a_format(value: str | Format) -> Format:
    """``--format``: one of ``Format``'s names, or ``md`` for markdown (as the file suffix spells it)."""
    if isinstance(value, Format):  # the default
        return value
    try:
        return Format(FORMAT_SPELLINGS.get(value, value))
    except ValueError:
        names = ", ".join(f.value for f in Format)
        raise typer.BadParameter(f"{value!r} is not one of {names} (or md for markdown)") from None


FORMAT_SPELLINGS = {"md": Format.markdown.value}


def format_names(incomplete: str) -> list[str]:
    """``--format``'s shell completion: the names ``a_format`` takes that start with ``incomplete``,
    each other spelling after the name it stands for (text, markdown, md, html, json). The option
    parses its own value, so typer has no choices of its own to offer."""
    names = [name for f in Format
             for name in (f.value, *(s for s, value in FORMAT_SPELLINGS.items() if value == f.value))]
    return [name for name in names if name.startswith(incomplete)]

FormatOpt = Annotated[
    Format,
    typer.Option(
        "--format", "-f", parser=a_format, autocompletion=format_names, metavar="<text|markdown|html|json>",
        help="text, markdown (or md), html (one self-contained page), or json (the JSON on stdout).",
    ),
]
HtmlOut = Annotated[
    Path | None,
    typer.Option(
        "--html",
        metavar="PATH",
        parser=a_path,
        help="Also write the report as one self-contained HTML page (charts, links to the files).",
    ),
]
Top = Annotated[int, typer.Option("--top", min=1, help="Kernels shown per table.")]
Summary = Annotated[bool, typer.Option("--summary", help="Leave out the per-graph kernel tables.")]


class View(str, enum.Enum):
    """What the report's tables are by (``core/views.py``)."""

    kernel = "kernel"
    op = "op"
    module = "module"
    line = "line"


ByOpt = Annotated[
    View,
    typer.Option(
        "--by",
        help="kernel (extern calls one by one, with module path and source line), op (one row per "
        "extern op), module (time per nn.Module), or line (time per model source line).",
    ),
]
ModuleDepth = Annotated[
    int | None,
    typer.Option("--module-depth", min=1, help="--by module: module paths cut to N parts (default: all)."),
]


def check_views(by: View, module_depth: int | None, fmt: Format) -> None:
    """Refuses view options that would change nothing, before any work: ``--module-depth``
    without ``--by module``, and a ``--by`` view asked of the JSON, which holds what every view
    is made from (each kernel's origin) and no view."""
    if module_depth is not None and by != View.module:
        raise UsageError(f"--module-depth {module_depth} cuts the module paths of --by module; "
                         f"add --by module (here --by {by.value})")
    if fmt == Format.json and (by != View.kernel or module_depth is not None):
        raise UsageError(f"--by {by.value}: the JSON holds what every view is made from (each kernel's "
                         "origin), not the view; ask the view of --format text, markdown or html")


def workload_options(
    model: Path,
    device: str,
    train: bool,
    dtype: str,
    autocast: bool,
    mode: str,
    batch_size: int | None,
    freezing: bool = False,
    script_args: list[str] | None = None,
    script_seconds: float | None = None,
) -> WorkloadOptions:
    return WorkloadOptions(
        path=str(model),
        device=device,
        train=train,
        dtype=dtype,
        autocast=autocast,
        mode=mode,
        batch_size=batch_size,
        freezing=freezing,
        script_args=list(script_args or []),
        script_seconds=script_seconds,
        typed_path=getattr(model, "typed", ""),  # a script's sys.argv[0]
    ).validate()


def check_timeout(timeout: float) -> float:
    """--timeout: a finite number of seconds above zero (nan would mean none, 0 would start a
    worker only to kill it)."""
    return check_seconds("--timeout", timeout)


def check_seconds(option: str, seconds: float | None) -> float | None:
    """A time option (None: not given) that must be a finite number of seconds above zero:
    ``--step-budget 0`` would time no call, ``--job-timeout 0`` stop every job at once."""
    if seconds is not None and not (math.isfinite(seconds) and seconds > 0):
        raise UsageError(f"{option} must be a number of seconds above 0, not {seconds:g}")
    return seconds


def run_settings(
    ctx: typer.Context, iterations: int | None, windows: int, timeout: float, **kw
) -> RunSettings:
    """The measurement settings of a command's run, with terminal progress and the report
    writer (``output.write_report``) attached."""
    check_timeout(timeout)
    progress = TerminalProgress()
    dropped = settings(ctx).dropped_env
    if dropped:
        progress.note(f"note: not passed to the workers, which set Inductor's flags and cache themselves: "
                      f"{', '.join(dropped)}")
    return RunSettings(
        iterations=iterations,
        windows=windows,
        timeout=timeout,
        progress=progress,
        echo=settings(ctx).verbose,
        on_saved=write_report,
        **kw,
    )


def finite_pct(value: float | None) -> float | None:
    """A gate's percent: 0 or more, and finite (a gate of inf% fails on no regression; typer's
    ``min=`` lets inf through, and calls nan below 0)."""
    if value is not None and not (math.isfinite(value) and value >= 0):
        never = ": a gate of inf% fails on no regression" if value == math.inf else ""
        raise typer.BadParameter(f"a finite percent of 0 or more, not {value}{never}")
    return value


def fail_on_regression(what: str, also: str = "") -> typer.models.OptionInfo:
    """``--fail-on-regression PCT``: exit 1 when ``what`` (a step time) got significantly
    slower by more than PCT percent, 5 when something was measured on one side only (or
    ``also``: what else is not comparable)."""
    return typer.Option(
        "--fail-on-regression",
        metavar="PCT",
        callback=finite_pct,
        help=f"Exit 1 when {what} is significantly slower by more than PCT percent; exit 5 "
        f"(not comparable, no verdict) when a graph or a mode was measured on one side only{also}.",
    )
