"""The ceilings a breakdown's kernels are held against: measured once per machine in a worker
(``runner/peaks_measure.py``), cached under the tool's cache directory
(``$XDG_CACHE_HOME/inductor-bench/peaks/``), saved in the run directory (``peaks.json``) and
in the result. A measurement that fails costs the roofline figures only, never the run.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..core import errors
from ..core.ceilings import PEAKS_FILE, STOPPED_NOTE, Ceilings, Roofline, cache_key, datasheet_for
from ..core.compare import CompareResult
from ..core.results import BreakdownResult
from ..core.roofline import chart_points, to_measure_again
from ..core.rundir import GRAPHS_DIR, PROFILE_FILE
from . import stop
from .cache import user_cache_root
from .peaks_measure import read_entry, usable
from .rundir import save_result, write_atomic
from .settings import RunSettings
from .worker import run_worker, worker_env

WORKER_MODULE = "inductor_bench.runner.peaks_measure"
PEAKS_CACHE_DIR = "peaks"
TIMEOUT_S = 300.0  # importing torch on a loaded machine, then a few seconds of measuring


def peaks_cache_dir() -> Path:
    return user_cache_root() / PEAKS_CACHE_DIR


# The host arrays on transparent huge pages where the kernel offers them (THP "madvise" or
# "always"), as numpy's and STREAM's are: without them a 4 KiB-page TLB walk costs the copy and
# triad 10-15% here, and the ceiling would sit below what the machine moves. Torch's allocator
# reads this once, at its first large allocation (c10's THP_MEM_ALLOC_ENABLE).
HUGE_PAGES = {"THP_MEM_ALLOC_ENABLE": "1"}


def measure_ceilings(device: str, *, refresh: bool = False, cache_dir: Path | None = None,
                     reps: int | None = None, threads: int | None = None, log_path: Path | None = None,
                     echo: bool = False, again: dict[str, float] | None = None,
                     current: Ceilings | None = None, said: list[str] | None = None) -> Ceilings:
    """The device's ceilings, from the machine's cache unless ``refresh``; ``threads``: the
    intra-op threads the run's profiling used (its model may set them), else the worker's own.
    ``again`` (compute type -> a kernel's TFLOP/s above it) with the ``current`` ceilings:
    those types measured again, each figure the higher one, and cached. ``said`` gets why the
    cache could not be written, where it could not.
    Raises the worker's error (WorkerError, WorkerTimeout, ...) when it could not measure."""
    request = {"device": device, "refresh": refresh, "reps": reps, "threads": threads,
               "cache_dir": str(cache_dir if cache_dir is not None else peaks_cache_dir())}
    if again and current is not None:
        request.update(measure_again=again, ceilings=current.to_dict())
    response = run_worker(WORKER_MODULE, request, timeout=TIMEOUT_S, env=worker_env(HUGE_PAGES),
                          log_path=log_path, echo=echo)
    if response.get("not_cached") and said is not None:
        said.append(response["not_cached"])
    return Ceilings.from_dict(response["ceilings"])


def recorded_machine_key(run_dir: Path) -> dict[str, Any] | None:
    """What the ceilings' cache is keyed by, as the run's profiling worker computed it (each
    graph's saved answer, ``profile.json``); None where no graph recorded it."""
    for path in sorted((run_dir / GRAPHS_DIR).glob(f"*/{PROFILE_FILE}")):
        try:
            key = json.loads(path.read_text()).get("response", {}).get("machine_key")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(key, dict) and key:
            return key
    return None


def cached_entry(run_dir: Path, cache_dir: Path | None = None) -> tuple[Ceilings | None, str]:
    """The machine's cached ceilings under the key the run's profiling worker recorded, read
    here: no worker to start, no torch to import (1.2-1.6 s a run on 2 cores). None where the
    run recorded no key, nothing is cached under it, the entry was measured beside other work
    (a worker measures again and keeps the higher figures) or is damaged (a worker measures
    again and replaces it); beside it, where the entry is damaged, its path and what is wrong."""
    key = recorded_machine_key(run_dir)
    if key is None:
        return None, ""
    path = (cache_dir if cache_dir is not None else peaks_cache_dir()) / f"{cache_key(key)}.json"
    entry, damage = read_entry(path)
    return usable(entry, key), (f"{path}: {damage}" if damage else "")


def cached_ceilings(run_dir: Path, cache_dir: Path | None = None) -> Ceilings | None:
    """``cached_entry``'s ceilings."""
    return cached_entry(run_dir, cache_dir)[0]


def run_threads(result: BreakdownResult) -> int | None:
    """The intra-op threads the run's graphs were profiled with (its model's setting, applied
    in every profiling worker); None where the run did not record it."""
    ts = result.torch_settings
    n = ts.values.get("num_threads") if ts is not None else None
    return int(n) if isinstance(n, int) and n > 0 else None


def measured_roofline(device: str, device_name: str, run_dir: Path, settings: RunSettings, *,
                      refresh: bool = False, threads: int | None = None,
                      profiled_in: Path | None = None) -> Roofline:
    """The ceilings with the datasheet's beside them, written to ``peaks.json``: from the
    machine's cache under the key the profiling recorded (in ``profiled_in``, the run directory
    by default), else from a worker; a failed measurement is recorded in them (``error``),
    never raised."""
    roof = Roofline(datasheet=datasheet_for(device_name))
    try:
        with settings.progress.phase("measuring the device's ceilings (bandwidth, matmul)") as ph:
            cached, damage = (None, "") if refresh else cached_entry(profiled_in or run_dir)
            said: list[str] = []
            roof.measured = cached or measure_ceilings(device, refresh=refresh, threads=threads,
                                                       log_path=run_dir / "logs" / "peaks.log",
                                                       echo=settings.echo, said=said)
            ph["done"] = "cached" if roof.measured.from_cache else "measured"
            if damage:
                ph["done"] += f", the cached entry being damaged ({damage})" + ("" if said else ": replaced")
            ph["done"] += "".join(f"; {s}" for s in said)
    except errors.BenchError as e:
        roof.error = f"the ceilings could not be measured: {e}"[:300]
    write_atomic(run_dir / PEAKS_FILE, roof.to_json())
    return roof


def add_roofline(result: BreakdownResult, run_dir: Path, settings: RunSettings, *,
                 refresh: bool = False) -> None:
    """Set ``result.roofline`` (saved in ``peaks.json`` and with the result); a failure is
    recorded in it and in the result's errors, and the run stays as it was measured."""
    if not result.measured():
        return
    with _saved_when_stopped(result, run_dir, settings):
        result.roofline = measured_roofline(result.device, result.device_name, run_dir, settings,
                                            refresh=refresh, threads=run_threads(result))
        measure_again_if_beaten([result], result.roofline, run_dir, settings)
    if result.roofline.error:
        result.errors.append(result.roofline.error)
    save_result(run_dir, result, settings.on_saved)


def add_compare_roofline(result: CompareResult, run_dir: Path, settings: RunSettings, *,
                         refresh: bool = False) -> None:
    """The same ceilings on every column's breakdown (one measurement, or the cache), the
    compare result saved again; a failure is recorded, never fatal."""
    bds = [m.breakdown for m in result.modes if m.breakdown is not None and m.breakdown.measured()]
    if not bds:
        return
    with _saved_when_stopped(result, run_dir, settings):
        first = next((Path(m.run_dir) for m in result.modes if m.breakdown is bds[0] and m.run_dir), None)
        roof = measured_roofline(bds[0].device, bds[0].device_name, run_dir, settings, refresh=refresh,
                                 threads=run_threads(bds[0]), profiled_in=first)
    if roof.error:
        result.errors.append(roof.error)
    for b in bds:
        b.roofline = roof
    with _saved_when_stopped(result, run_dir, settings):
        measure_again_if_beaten(bds, roof, run_dir, settings)
    for m in result.modes:  # each column's own breakdown directory gets the ceilings too
        b = m.breakdown
        if b is not None and b.roofline is not None and m.run_dir and Path(m.run_dir).is_dir():
            save_result(Path(m.run_dir), b, settings.on_saved)
    save_result(run_dir, result, settings.on_saved)


def measure_again_if_beaten(results: list[BreakdownResult], roof: Roofline, run_dir: Path,
                            settings: RunSettings) -> None:
    """Kernels of the run faster than the measured compute ceiling prove it low (a slow spell
    while it was measured, or a cache filled on a busier day): the compute types they beat are
    measured again, each figure kept the higher, the cache and ``peaks.json`` updated. A failure
    keeps the ceilings as they were (the report's warning stays)."""
    want = to_measure_again([p for r in results for p in chart_points(r)], roof.measured)
    if not want:
        return
    try:
        with settings.progress.phase(f"measuring the {', '.join(sorted(want))} ceiling again "
                                     "(kernels of this run ran above it)"):
            roof.measured = measure_ceilings(results[0].device, threads=run_threads(results[0]),
                                             again=want, current=roof.measured,
                                             log_path=run_dir / "logs" / "peaks.log", echo=settings.echo)
    except errors.BenchError:
        return
    write_atomic(run_dir / PEAKS_FILE, roof.to_json())


@contextlib.contextmanager
def _saved_when_stopped(result: BreakdownResult | CompareResult, run_dir: Path,
                        settings: RunSettings) -> Iterator[None]:
    """A stop signal while the ceilings are measured: the measured run is saved saying so,
    then the stop goes on (a save that fails said with it, ``stop.saved_first``)."""
    try:
        yield
    except KeyboardInterrupt:
        result.errors.append(STOPPED_NOTE)
        kept = f"what was measured is saved in {run_dir}"
        with stop.saved_first(errors.Interrupted(f"interrupted; {kept}"), kept):
            save_result(run_dir, result, settings.on_saved)
        raise
