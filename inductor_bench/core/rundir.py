"""The run directory: its layout, and every loader of a saved result.

A run directory is made fresh for every run and never overwritten::

    runs/<model>-<mode>-<timestamp>/
      meta.json          options, versions, device, status, errors
      cache/             the private Inductor cache this run compiled into
      modules.jsonl      compiled modules as Inductor reported them
      digests.json       the sha256 of every file a graph is analysed or run again from
      sources.jsonl      what each module was made from: FX nodes, source lines, nn.Module paths
      inputs/            each module's first call: its integer and boolean tensor inputs
      graphs/<id>/       module.py, inputs.pt, kernels/<name>.py, trace.json.gz (in Perfetto),
                         sources.json, profile.json (the profiling worker's answer)
      logs/              worker logs
      breakdown.json     the result (re-render with `inductor-bench report`)
      report.txt         the text report
      index.html         the same report as a page to open (charts, links to the files above)

A comparison keeps ``compare.json`` and ``report.txt`` at the top and one such directory per
mode below it. Reading is pure (no torch); writing belongs to the runner and the commands.
"""

from __future__ import annotations

import json
import math
from pathlib import Path, PurePosixPath
from typing import Any

from .compare import COMPARE_SCHEMA, COMPARE_SCHEMA_VERSION, CompareResult
from .errors import ResultError
from .first_few import first_few
from .rerun import tool_command
from .results import READABLE_VERSIONS, BreakdownResult, GraphResult, Recompile
from .results import SCHEMA as BREAKDOWN_SCHEMA
from .shape import check
from .sweep import SWEEP_FILE, SWEEP_SCHEMA, TABLE_SCHEMA

TRACE_MARK = ".trace.json"  # in the name of each trace torch.profiler's trace handler writes
BREAKDOWN_FILE = "breakdown.json"
COMPARE_FILE = "compare.json"
REPORT_FILE = "report.txt"
HTML_REPORT_FILE = "index.html"
META_FILE = "meta.json"
MODULES_LOG = "modules.jsonl"
SOURCES_LOG = "sources.jsonl"  # what each compiled module was made from (runner/sources.py)
SOURCES_FILE = "sources.json"  # one graph's entry of it, in graphs/<id>/
PROFILE_FILE = "profile.json"  # graphs/<id>/: the graph as asked for, and the worker's response
CALL_INPUTS_DIR = "inputs"  # each module's first call: its integer and boolean inputs
CALL_INPUTS_FILE = "inputs.pt"  # a graph's copy of it, in graphs/<id>/
CACHE_DIR = "cache"
LOGS_DIR = "logs"
GRAPHS_DIR = "graphs"
MODULE_FILE = "module.py"
TRACE_FILE = "trace.json.gz"
PIPELINED_TRACE_FILE = "pipelined.json.gz"  # accelerators: iterations launched back to back
STEP_TRACE_FILE = "steps.json.gz"  # a few model steps profiled on the host (core/outside.py)
STEP_PYTHON_TRACE_FILE = "steps_python.json.gz"  # as many more, with Python's calls (core/host_python.py)
LAUNCH_TRACE_FILE = "launch.json.gz"  # CUDA-graph replays: one iteration launched kernel by kernel
KERNELS_DIR = "kernels"
AUTOTUNE_DIR = "max-autotune"  # breakdown --autotune-top on CPU: the recompiled run
DIGESTS_FILE = "digests.json"  # path inside the run directory -> sha256 of the file the run wrote

Result = BreakdownResult | CompareResult


def read_result_json(path: str | Path, names: tuple[str, ...]) -> tuple[Path, Any]:
    """Read a result: a JSON file, or a run directory holding one of ``names``."""
    p = Path(path)
    try:
        if p.is_dir():
            found = [p / n for n in names if (p / n).exists()]
            if not found and (p / SWEEP_FILE).is_file():
                raise ResultError(_sweep_dir(p, p, names))
            if not found and (p.parent / SWEEP_FILE).is_file() and not any(p.iterdir()):
                raise ResultError(f"{p}: an attempt of the sweep in {p.parent} that ended before its compare "
                                  f"wrote anything; its console output is {p.parent / LOGS_DIR / p.name}.log")
            if not found:
                raise ResultError(f"{p}: no {' or '.join(names)} in this directory{_runs_inside(p, names)}"
                                  f"{_traces_inside(p)}")
            p = found[0]
        if not p.exists():
            raise ResultError(f"{p}: no such result file")
        if not p.is_file():  # never opened: a FIFO would wait for a writer, /dev/zero fill memory
            raise ResultError(f"{p}: not a regular file (a device, FIFO or socket): a result is the JSON "
                              "file a run saved")
        sweeps = {SWEEP_FILE, REPORT_FILE, HTML_REPORT_FILE} - set(names)  # sweep.json: the sweep reads it
        if p.name in sweeps and (p.parent / SWEEP_FILE).is_file():
            raise ResultError(_sweep_dir(p, p.parent, names))
    except OSError as e:  # a directory on the way that cannot be searched
        raise ResultError(f"{p}: cannot read ({e.strerror or e})") from None
    if p.suffix == ".py":
        raise ResultError(f"{p}: a Python file, not a saved result: give a run directory (or its "
                          f"{' or '.join(names)}); `{tool_command('breakdown', p)}` makes one")
    try:
        with open(p, "rb") as f:
            gzipped = f.read(2) == b"\x1f\x8b"
    except OSError as e:
        raise ResultError(f"{p}: cannot read ({e.strerror or e})") from None
    if gzipped:  # results are plain JSON; a gzipped one is a trace, most likely
        raise ResultError(f"{p}: gzipped, not a saved result: `{tool_command('analyze', p)}` reads a "
                          "profiler trace")
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise ResultError(f"{p}: not readable as JSON ({e})") from None
    return p, loads_saved(text, p)


def loads_saved(text: str, p: Path) -> Any:
    """The JSON ``text`` of a file the tool saved (``p``: a result, a graph's profile), as every
    result is read: ResultError naming ``p`` for NaN or Infinity, a number beyond any figure
    (``_LARGEST``), or nesting too deep to be one."""
    try:
        data = json.loads(text, parse_constant=_non_finite, parse_float=_finite)
    except json.JSONDecodeError as e:
        raise ResultError(f"{p}: not readable as JSON ({e})") from None
    except ValueError as e:  # a number that is not finite
        raise ResultError(f"{p}: damaged: {e}") from None
    except RecursionError:
        raise ResultError(f"{p}: damaged: JSON nested too deeply to be a result") from None
    absurd = _absurd_number(data)
    if absurd:
        raise ResultError(f"{p}: damaged: {absurd}")
    return data


# No figure a result holds (milliseconds, bytes, FLOPs, calls, seconds) comes near this: one
# beyond it is a hand edit, and the reports' sums, products and squares of it would overflow.
_LARGEST = 1e24


def _absurd_number(data: Any) -> str | None:
    """``graphs[0].calls: 1e+308 is ...``: the first number of ``data`` beyond ``_LARGEST``."""
    todo: list[tuple[Any, str]] = [(data, "")]
    while todo:
        v, where = todo.pop()
        if isinstance(v, dict):
            todo += [(x, f"{where}.{k}" if where else str(k)) for k, x in reversed(v.items())]
        elif isinstance(v, list):
            todo += [(x, f"{where}[{i}]") for i, x in reversed(list(enumerate(v)))]
        elif isinstance(v, int | float) and not isinstance(v, bool) and abs(v) > _LARGEST:
            shown = f"{v:.3g}" if isinstance(v, float) or abs(v) < 10**300 else "an integer of 300+ digits"
            return f"{where}: {shown} is beyond any figure a result holds (at most {_LARGEST:g} in size)"
    return None


def _sweep_dir(p: Path, sweep_dir: Path, names: tuple[str, ...]) -> str:
    """The refusal of a sweep's directory (or its sweep.json, report.txt, index.html) given
    where one run is read."""
    report = sweep_dir / REPORT_FILE  # written as a sweep ends: none in one running, killed or copied mid-run
    its = (f"its report is {report}" if report.is_file()
           else f"it has no report yet ({report} is written as a sweep ends)")
    if p == sweep_dir:
        what = f"a sweep's directory, not one run: {its}"
    elif p.name == SWEEP_FILE:
        what = f"the record of the sweep in {sweep_dir}, not one run: {its}"
    else:
        what = f"the report of the sweep in {sweep_dir} (read it as it is), not one run's result"
    return (f"{p}: {what} (the same `inductor-bench sweep` command renders it again, with --baseline "
            f"OLD_DIR against another sweep){_runs_inside(sweep_dir, names)}")


def _runs_inside(p: Path, names: tuple[str, ...], shown: int = 3) -> str:
    """``; the runs in it, newest first: ...``: the directories one level down that hold one of
    ``names`` (a ``runs/`` directory given in place of one run), by their result's time."""
    runs: list[tuple[float, str]] = []
    try:
        for d in p.iterdir():
            results = [d / n for n in names if (d / n).is_file()] if d.is_dir() else []
            if results:
                runs.append((max(r.stat().st_mtime for r in results), str(d)))
    except OSError:
        return ""
    if not runs:
        return ""
    newest = [d for _, d in sorted(runs, reverse=True)]
    return f"; the runs in it, newest first: {first_few(newest, shown)}"


def _traces_inside(p: Path) -> str:
    """``; it holds profiler traces ...``: a ``tensorboard_trace_handler`` directory given in
    place of a run."""
    try:
        traces = sorted(f.name for f in p.iterdir() if TRACE_MARK in f.name)
    except OSError:
        return ""
    if not traces:
        return ""
    return f"; it holds profiler traces ({traces[0]}, ...): `{tool_command('analyze', p)}` reads them"


def _non_finite(word: str) -> float:
    raise ValueError(f"{word} is not a number a result holds (JSON has no NaN or Infinity)")


def _finite(text: str) -> float:
    x = float(text)
    if not math.isfinite(x):
        raise ValueError(f"{text} is not a finite number")
    return x


def load_breakdown(path: str | Path) -> BreakdownResult:
    """A breakdown result from ``breakdown.json`` or the run directory holding it."""
    p, data = read_result_json(path, (BREAKDOWN_FILE,))
    return _build(BreakdownResult, p, data)


def load_compare(path: str | Path) -> CompareResult:
    """A compare result from ``compare.json`` or the directory holding it."""
    p, data = read_result_json(path, (COMPARE_FILE,))
    return _build(CompareResult, p, data)


def load_any(path: str | Path) -> Result:
    """A breakdown or compare result from a JSON file or a run directory."""
    p, data = read_result_json(path, (COMPARE_FILE, BREAKDOWN_FILE))
    schema = data.get("schema") if isinstance(data, dict) else None
    if schema == COMPARE_SCHEMA:
        return _build(CompareResult, p, data)
    if schema == BREAKDOWN_SCHEMA:
        return _build(BreakdownResult, p, data)
    if schema in (SWEEP_SCHEMA, TABLE_SCHEMA):
        raise ResultError(f"{p}: a sweep's record, not one run: `inductor-bench sweep` renders it; report "
                          "and diff read each model's compare run directory inside the sweep's directory")
    if isinstance(data, dict) and "traceEvents" in data:
        raise ResultError(f"{p}: a profiler trace, not an inductor-bench result: "
                          f"`{tool_command('analyze', p)}` reads it")
    raise ResultError(f"{p}: not an inductor-bench breakdown or compare result")


# What each record reads: its schema, the versions of it, and the keys every saved one has
# though the record has a default for them.
_READS = {
    BreakdownResult: (BREAKDOWN_SCHEMA, READABLE_VERSIONS, ("graphs",)),
    CompareResult: (COMPARE_SCHEMA, (COMPARE_SCHEMA_VERSION,), ("modes",)),
}


def _build(cls: type[BreakdownResult] | type[CompareResult], p: Path, data: Any) -> Any:
    """The record of ``data``. A result of a schema and version this version reads is checked
    against the record's fields first (``core/shape.py``): JSON that is not the shape of a
    result (a key missing, a wrong type) is a ResultError naming ``p`` and the field, never an
    exception from deep inside a report. Other schemas and versions are refused by the record."""
    schema, versions, always = _READS[cls]
    if isinstance(data, dict) and data.get("schema") == schema and data.get("schema_version") in versions:
        try:
            check(cls, data, always)
        except ResultError as e:
            raise ResultError(f"{p}: damaged: {e}") from None
    try:
        result = cls.from_dict(data)
    except ResultError as e:
        raise ResultError(f"{p}: {e}") from None
    except (TypeError, ValueError, AttributeError, KeyError, IndexError) as e:  # what check() missed
        raise ResultError(f"{p}: damaged, not the shape of a result ({type(e).__name__}: {e})") from None
    if isinstance(result, BreakdownResult):
        _check_file_paths(result, p)
    _check_left_out(result, p)
    _relocate(result, p.parent)
    return result


def _check_left_out(result: Result, p: Path) -> None:
    """Each graph's ``left_out`` names iterations its ``wall_samples_ms`` holds (every figure is
    derived from the samples less those), and its ``window`` one of its ``windows_ms``."""
    runs = [m.breakdown for m in result.modes if m.breakdown is not None] \
        if isinstance(result, CompareResult) else [result]
    for g in (g for b in runs for g in b.graphs):
        problem = index_problem(g) or time_problem(g)
        if problem:
            raise ResultError(f"{p}: damaged: {problem}")


def time_problem(g: GraphResult) -> str | None:
    """``graphs[0-forward].wall_ms: -5.0 is below 0, no duration``: the first time of the graph
    or of its kernels below 0 (a report printed '-5.0000 ms wall'); None where none is."""
    at = f"graphs[{g.id}]"
    named = [(f"{at}.{n}", getattr(g, n)) for n in ("wall_ms", "busy_ms", "kernel_ms", "limit_ms")]
    named += [(f"{at}.{n}[{i}]", x) for n in ("wall_samples_ms", "busy_samples_ms", "clock_samples_ms",
                                              "windows_ms") for i, x in enumerate(getattr(g, n))]
    for k in g.kernels:
        named += [(f"{at}.kernels[{k.name}].ms", k.ms)]
        named += [(f"{at}.kernels[{k.name}].samples_ms[{i}]", x) for i, x in enumerate(k.samples_ms)]
    bad = next(((where, x) for where, x in named if x is not None and x < 0), None)
    return f"{bad[0]}: {bad[1]} is below 0, no duration" if bad else None


def index_problem(g: GraphResult) -> str | None:
    """``graphs[0-forward].window: -1 is no window of its 5 windows_ms``: an index of the graph
    (``left_out``, ``window``) into its own lists that points past them; None where none does."""
    n = len(g.wall_samples_ms)
    bad = next((i for i in g.left_out if not isinstance(i, int) or not 0 <= i < n), None)
    if bad is not None:
        return f"graphs[{g.id}].left_out: {bad!r} is no iteration of its {n} wall_samples_ms"
    if g.windows_ms and not 0 <= (g.window or 0) < len(g.windows_ms):
        return f"graphs[{g.id}].window: {g.window} is no window of its {len(g.windows_ms)} windows_ms"
    return None


def _relocate(result: Result, here: Path) -> None:
    """A run read from where it lies now: a run directory copied or moved (an artifact of CI, a
    colleague's run) names the directory it was recorded in, which the reports would print and
    read from. When the folder that held the result is its run directory (its ``META_FILE`` or
    ``GRAPHS_DIR`` is there), that folder is the run's, and what was recorded inside it (a
    comparison's columns, the CPU ``--autotune-top`` recompile) moves with it. A result file
    copied on its own keeps the directory it names."""
    if not result.run_dir or not ((here / META_FILE).exists() or (here / GRAPHS_DIR).is_dir()):
        return
    if _same_dir(Path(result.run_dir), here):  # where it was recorded, as it named it
        return
    here = here.absolute()  # as a run names itself: a directory to paste from anywhere
    old = PurePosixPath(result.run_dir)
    if isinstance(result, CompareResult):
        result.run_dir = str(here)
        for m in result.modes:
            m.run_dir = _moved(m.run_dir, old, here)
        runs = [m.breakdown for m in result.modes if m.breakdown is not None]
    else:
        runs = [result]
    for b in runs:
        b.run_dir = _moved(b.run_dir, old, here)
        if isinstance(b.autotune, Recompile):  # the CPU recompile's run is made inside the run
            b.autotune.tuned_run = _moved(b.autotune.tuned_run, old, here)


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):
        return False


def _moved(recorded: str, old: PurePosixPath, here: Path) -> str:
    """``recorded``, a directory inside ``old``, as the same directory inside ``here``;
    unchanged if it is not inside ``old``."""
    try:
        return str(here / PurePosixPath(recorded).relative_to(old)) if recorded else recorded
    except ValueError:
        return recorded


def _check_file_paths(result: BreakdownResult, p: Path) -> None:
    """Every file a breakdown names is a relative path inside its run directory: reports link
    to them and ``kernel`` runs them (``digests.run_file`` checks them again)."""
    for g in result.graphs:
        named = [("module", g.module), ("trace", g.trace), ("pipelined_trace", g.pipelined_trace)]
        named += [(f"kernel {k.name}", k.file) for k in g.kernels]
        for what, rel in named:
            if rel is not None and not inside_run_dir(rel):
                raise ResultError(f"{p}: damaged: graph {g.id} {what}: {rel!r} is outside the run directory")


def inside_run_dir(rel: str) -> bool:
    """A relative path that stays inside the directory it is relative to (no root, drive,
    scheme or ``..``)."""
    posix = PurePosixPath(rel.replace("\\", "/"))
    return bool(rel) and not posix.is_absolute() and ":" not in rel and ".." not in posix.parts


def graph_dir(run_dir: Path, graph_id: str) -> Path:
    return run_dir / GRAPHS_DIR / graph_id
