"""Compile modes side by side: the result schema, and (torch side, in workers) the run.

A ``CompareResult`` holds one ``ModeResult`` per mode: compile time (the first call, timed
on its own), steady-state step samples of the real model call (so CUDA graphs count),
peak memory, and the mode's full ``BreakdownResult``. It is written as ``compare.json``.
The schema half of this module is pure (no torch); ``run_compare`` only starts workers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .errors import ResultError
from .results import BreakdownResult
from .stats import Summary, summarize

COMPARE_SCHEMA = "inductor-bench/compare"
COMPARE_SCHEMA_VERSION = 1
RESULT_FILE = "compare.json"

EAGER = "eager"
DEFAULT = "default"

OK = "ok"
SKIPPED = "skipped"
FAILED = "failed"
TIMEOUT = "timeout"


@dataclass
class ModeResult:
    """One compile mode of one model."""

    mode: str
    status: str = OK  # ok | skipped | failed | timeout
    reason: str | None = None  # why skipped / failed
    compile_s: float | None = None  # first call, timed on its own; 0 for eager
    step_samples_ms: list[float] = field(default_factory=list)  # real model call, steady state
    peak_memory_bytes: int | None = None
    peak_memory_kind: str = ""  # "cuda max allocated" | "process peak RSS"
    breakdown: BreakdownResult | None = None  # None for eager and for modes that did not run
    run_dir: str = ""

    @property
    def ok(self) -> bool:
        return self.status == OK

    def step(self) -> Summary:
        return summarize(self.step_samples_ms)

    def kernel_count(self) -> int | None:
        return self.breakdown.totals().kernel_count if self.breakdown else None

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "breakdown"}
        d["breakdown"] = self.breakdown.to_dict() if self.breakdown else None
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ModeResult:
        if not isinstance(d, dict) or "mode" not in d:
            raise ResultError("compare result: a mode entry has no 'mode' field")
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names and k != "breakdown"}
        bd = d.get("breakdown")
        return cls(breakdown=BreakdownResult.from_dict(bd) if bd else None, **kw)


@dataclass
class CompareResult:
    model: str
    model_path: str = ""
    device: str = "cpu"
    device_name: str = ""
    train: bool = False
    dtype: str = "float32"
    autocast: bool = False
    batch_size: int | None = None
    repeat: int = 1  # measurement rounds per mode
    versions: dict[str, str] = field(default_factory=dict)
    created: str = ""
    run_dir: str = ""
    modes: list[ModeResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    schema: str = COMPARE_SCHEMA
    schema_version: int = COMPARE_SCHEMA_VERSION

    def mode(self, name: str) -> ModeResult | None:
        for m in self.modes:
            if m.mode == name:
                return m
        return None

    def speedup(self, mode: str, over: str) -> float | None:
        """median step(over) / median step(mode); None when either is missing."""
        a, b = self.mode(mode), self.mode(over)
        if not (a and b and a.ok and b.ok and a.step_samples_ms and b.step_samples_ms):
            return None
        head = a.step().median
        return b.step().median / head if head > 0 else None

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "modes"}
        d["modes"] = [m.to_dict() for m in self.modes]
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CompareResult:
        if not isinstance(d, dict) or d.get("schema") != COMPARE_SCHEMA:
            raise ResultError("not an inductor-bench compare result (schema field missing)")
        if d.get("schema_version") != COMPARE_SCHEMA_VERSION:
            raise ResultError(
                f"compare schema version {d.get('schema_version')} is not supported "
                f"(this inductor-bench reads version {COMPARE_SCHEMA_VERSION})"
            )
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names and k != "modes"}
        return cls(modes=[ModeResult.from_dict(m) for m in d.get("modes", [])], **kw)


def read_result_json(path: str | Path, names: tuple[str, ...]) -> tuple[Path, Any]:
    """Read a result: a JSON file, or a run directory holding one of ``names``."""
    p = Path(path)
    if p.is_dir():
        found = [p / n for n in names if (p / n).exists()]
        if not found:
            raise ResultError(f"{p}: no {' or '.join(names)} in this directory")
        p = found[0]
    if not p.exists():
        raise ResultError(f"{p}: no such result file")
    try:
        return p, json.loads(p.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ResultError(f"{p}: not readable as JSON ({e})") from None


def load_compare(path: str | Path) -> CompareResult:
    """Read a compare result from ``compare.json`` or the directory holding it."""
    return CompareResult.from_dict(read_result_json(path, (RESULT_FILE,))[1])


# ---- running a comparison (starts workers; the parent never imports torch) ------------------

# Timed steady-state calls per mode when --repeat is not given: enough for a median and a MAD
# that the diff can judge (stats.MIN_SAMPLES is 5) while costing little next to compiling.
DEFAULT_REPEAT = 30
# Calls after the first (compile) call that are run but not kept: CUDA graph trees warm up
# on the second call and record on the third, and allocator and caches settle meanwhile.
WARMUP_STEPS = 3
# Modes whose only difference from "default" is CUDA graphs: on another device they would
# measure "default" a second time under a misleading name.
CUDA_GRAPH_ONLY = frozenset({"reduce-overhead"})
DEFAULT_MODES = (DEFAULT, "max-autotune")


def parse_modes(text: str, *, eager: bool = True) -> list[str]:
    """``"default,max-autotune"`` -> ``["eager", "default", "max-autotune"]`` (validated)."""
    from .errors import UsageError
    from .workload import MODES

    modes: list[str] = [EAGER] if eager else []
    for m in (x.strip() for x in text.split(",")):
        if not m:
            continue
        if m not in MODES:
            raise UsageError(f"--modes: unknown mode {m!r} (choose from {', '.join(MODES)})")
        if m == EAGER and not eager:
            raise UsageError("--modes lists eager but --no-eager leaves it out")
        if m not in modes:
            modes.append(m)
    if not [m for m in modes if m != EAGER]:
        raise UsageError("--modes: give at least one torch.compile mode (e.g. default)")
    return modes


def _execution_order(modes: list[str]) -> list[str]:
    # Eager and plain modes first: the first run tells which device "auto" resolved to,
    # before deciding whether a CUDA-graph-only mode can run at all.
    return sorted(modes, key=lambda m: (m != EAGER, m in CUDA_GRAPH_ONLY))


def skip_reason(mode: str, device: str | None) -> str | None:
    if mode in CUDA_GRAPH_ONLY and device is not None and device != "cuda":
        return f"CUDA graphs need a CUDA device (this run is on {device}); it would repeat default"
    return None


@dataclass
class CompareRun:
    """Settings of one comparison, shared by every mode."""

    repeat: int = DEFAULT_REPEAT
    iterations: int | None = None  # profiled iterations per graph (None: auto)
    windows: int | None = None  # profiler windows per graph, the fastest kept (None: default)
    timeout: float = 900.0
    echo: bool = False


def _mode_status(err: Exception | None) -> str:
    from .errors import WorkerTimeout

    if err is None:
        return OK
    return TIMEOUT if isinstance(err, WorkerTimeout) else FAILED


def _first_line(err: Exception) -> str:
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__


def run_mode(opts, mode_dir: Path, run: CompareRun, progress):
    """Run one mode in workers: time it (and for compiled modes, break it down).

    Returns (mode result, the compile worker's outcome, the first error or None)."""
    from .pipeline import compile_workload

    mode_dir.mkdir(parents=True, exist_ok=True)
    outcome = compile_workload(
        opts,
        mode_dir,
        timeout=run.timeout,
        steps=run.repeat + WARMUP_STEPS,
        progress=progress,
        echo=run.echo,
    )
    m = ModeResult(
        mode=opts.mode,
        compile_s=0.0 if opts.mode == EAGER else outcome.compile_s,
        step_samples_ms=list(outcome.step_samples_ms[WARMUP_STEPS:]),
        peak_memory_bytes=outcome.peak_memory_bytes,
        peak_memory_kind=outcome.peak_memory_kind,
        run_dir=str(mode_dir),
    )
    err: Exception | None = outcome.error
    if opts.mode != EAGER and outcome.modules:
        m.breakdown, profile_err = _breakdown(opts, mode_dir, outcome, run, progress)
        err = err or profile_err
    elif opts.mode != EAGER and err is None:
        from .errors import WorkloadError

        err = WorkloadError(f"{opts.path}: mode {opts.mode} compiled nothing")
    m.status = _mode_status(err)
    m.reason = _first_line(err) if err is not None else None
    return m, outcome, err


def _breakdown(opts, mode_dir: Path, outcome, run: CompareRun, progress):
    """Profile every graph one mode compiled (the breakdown's own steps)."""
    from .pipeline import breakdown_from_outcome

    return breakdown_from_outcome(
        opts, mode_dir, outcome, iterations=run.iterations, windows=run.windows,
        timeout=run.timeout, progress=progress, echo=run.echo,
    )


def _header(opts, run: CompareRun, run_dir: Path) -> CompareResult:
    import datetime as dt

    return CompareResult(
        model=opts.name,
        model_path=str(Path(opts.path).resolve()),
        device=opts.device,
        train=opts.train,
        dtype=opts.dtype,
        autocast=opts.autocast,
        batch_size=opts.batch_size,
        repeat=run.repeat,
        created=dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        run_dir=str(run_dir),
    )


def _note_device(result: CompareResult, outcome) -> None:
    """Take the resolved device, its name and the versions from the first worker that ran."""
    if outcome.device and result.device == "auto":
        result.device = outcome.device
    if outcome.device_name and not result.device_name:
        result.device_name, result.versions = outcome.device_name, dict(outcome.versions)


def run_compare(
    opts,
    modes: list[str],
    *,
    run: CompareRun | None = None,
    out: Path | str | None = None,
    root: Path | str = "runs",
    progress=None,
) -> tuple[CompareResult, Path, Exception | None]:
    """Every mode of ``modes`` on the workload ``opts`` (a ``WorkloadOptions``).

    Returns the result (also written as ``compare.json`` in the run directory), the run
    directory, and the first error met. Modes after a failed one still run, unless the error
    is about the setup (the device, the options) and would only repeat.
    """
    from .errors import BenchError, UsageError
    from .pipeline import new_run_dir
    from .progress import QUIET
    from .workload import file_kind

    run = run or CompareRun()
    progress = progress or QUIET
    opts.validate()
    if file_kind(Path(opts.path)) != "factory":
        raise UsageError(
            f"{opts.path}: compare needs a make_workload() factory; "
            "a script's own loop cannot be timed step by step"
        )
    if run.repeat < 1:
        raise UsageError("--repeat must be at least 1")
    run_dir = new_run_dir(opts.name, "compare", root=root, out=out)
    result = _header(opts, run, run_dir)
    first_err: Exception | None = None
    try:
        first_err = _run_modes(opts, modes, run, run_dir, result, progress)
    except KeyboardInterrupt:
        result.errors.append("interrupted")
        first_err = BenchError("interrupted")
    finally:
        order = {m: i for i, m in enumerate(modes)}
        result.modes.sort(key=lambda m: order[m.mode])
        write_compare(run_dir, result)
    return result, run_dir, first_err


def _not_run(err: Exception | None) -> str | None:
    """Errors about the setup (the device, the options) would repeat in every mode."""
    from .errors import DeviceError, UsageError

    if isinstance(err, (DeviceError, UsageError)):
        return f"not run: {_first_line(err)}"
    return None


def _run_modes(opts, modes: list[str], run: CompareRun, run_dir: Path, result, progress):
    """Run each mode, appending to ``result.modes``; returns the first error."""
    from dataclasses import replace

    device = None if opts.device == "auto" else opts.device
    first_err: Exception | None = None
    for mode in _execution_order(modes):
        reason = skip_reason(mode, device) or _not_run(first_err)
        if reason:
            result.modes.append(ModeResult(mode=mode, status=SKIPPED, reason=reason))
            progress.note(f"{mode}: skipped ({reason})")
            continue
        m, outcome, err = run_mode(replace(opts, mode=mode), run_dir / mode, run, progress)
        resolved = device is None and bool(outcome.device)
        device = device or outcome.device or None
        if resolved and skip_reason(mode, device):  # "auto" turned out not to be CUDA
            m, err = ModeResult(mode=mode, status=SKIPPED, reason=skip_reason(mode, device)), None
        result.modes.append(m)
        _note_device(result, outcome)
        if err is not None:
            result.errors.append(f"{mode}: {_first_line(err)}")
            first_err = first_err or err
    return first_err


def write_compare(run_dir: Path, result: CompareResult) -> None:
    from .render.compare import render_compare

    (run_dir / RESULT_FILE).write_text(result.to_json())
    (run_dir / "report.txt").write_text(render_compare(result))
