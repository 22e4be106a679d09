"""Worker: measure a device's ceilings (memory bandwidth, dense matmul throughput per compute
type), or read them from the machine's cache when nothing they depend on has changed.

Memory bandwidth: on an accelerator, a device-to-device copy of ``DEVICE_COPY_BYTES``
(2 x bytes per copy); on the host, STREAM's copy (``b = a``, 2 x bytes) and triad
(``a = b + s*c``, 3 x bytes) over arrays four times the last-level cache (at least
``HOST_ARRAY_BYTES``), with the intra-op threads the run uses. Throughput: square matmuls,
2·n³ FLOPs each, the best rate of any route (operand layout; on the host oneDNN's linear too,
beside aten's mm) at any size (``runner/peaks_matmul.py``), in fp32 (TF32 off), tf32
(accelerators), bf16/fp16, int8 (``_int_mm``, into int32, and on the host oneDNN's quantized
linear too: its integer operations per second) and fp8 where the device has it.

Every figure is the BEST of at least ``REPS`` repetitions, on the host of as many as fit in a
time budget (``BANDWIDTH_BUDGET_S``; the matmul probes' rounds, ``runner/peaks_matmul.py``): on
a loaded machine a repetition is only ever slowed by the other work, never sped up, so the
fastest is the closest to what the device can do. The whole measurement takes a few seconds.
The load from other processes is read around it (``/proc/stat``); a measurement made while they
kept a core busy is reported as such, and the next run measures again and keeps the higher of
each figure, until one runs undisturbed. A run whose kernels beat a compute ceiling asks for
that type alone again (``measure_again``).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..core import shape
from ..core.ceilings import Ceilings, cache_key, higher_of, same_figures, widened
from ..core.devices import HOST_BACKEND, backend
from ..core.errors import ResultError
from ..core.peaks import FP8, FP16, FP32, INT8, TF32
from . import probe_clock
from .device import accelerator, device_name
from .machine import cpu_counters, file_text, load_since
from .peaks_matmul import ONEDNN, PROBE_BUDGET_S, PROBE_N, REPS, best_seconds, matmul_tflops, routes
from .probe_clock import start_measurement
from .worker_entry import worker_main

DEVICE_COPY_BYTES = 512 * 1024**2  # far beyond any L2 (126 MB on a B200)
HOST_ARRAY_BYTES = 128 * 1024**2
HOST_ARRAY_MAX = 1024**3
# host: each bandwidth figure's calls go on until this is spent (after ``reps``): a 128 MiB
# copy spans several scheduler slices, and a neighbour that never stops slows most of them
# (2 threads beside a busy core, 2026-12-07: the best of 7 copies 16.8 GB/s, of 2 s of them 25.2)
BANDWIDTH_BUDGET_S = 0.75
HOST_FIGURES = 3  # the host's bandwidth figures, each its own pauses' room: copy_, memcpy, triad
METHOD = 15  # bump when the measurement changes: cached figures of an older method are not reused


def last_level_cache_bytes() -> int:
    """The largest CPU cache the OS lists (``/sys/devices/system/cpu/cpu0/cache``); 0 unknown."""
    best = 0
    for p in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        try:
            text = p.read_text().strip().upper()
        except OSError:
            continue
        scale = {"K": 1024, "M": 1024**2, "G": 1024**3}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            best = max(best, int(digits) * scale)
    return best


def host_bandwidth(reps: int) -> tuple[float, float, int]:
    """(copy GB/s, triad GB/s, array bytes) with torch's intra-op threads. The copy is the
    faster of torch's ``copy_`` and the C library's ``memcpy`` (each thread its slice): a
    large ``memcpy`` writes with non-temporal stores, which skip reading each destination line
    first, and reaches the memory's limit where torch's loop, whose stores read each line
    before writing it, moves a third more bytes than it counts (11 against 22 GB/s on one
    thread of a 2-core Xeon VM)."""
    import torch

    nbytes = min(max(HOST_ARRAY_BYTES, 4 * last_level_cache_bytes()), HOST_ARRAY_MAX)
    n = nbytes // 4
    a, b, c = (torch.ones(n, dtype=torch.float32) for _ in range(3))
    host, budget = HOST_BACKEND.name, BANDWIDTH_BUDGET_S
    probe_clock.PAUSES.next_figure("copy")
    copy_s = best_seconds(lambda: b.copy_(a), host, reps, budget)
    threads = torch.get_num_threads()
    with ThreadPoolExecutor(threads) as pool:
        probe_clock.PAUSES.next_figure("memcpy")
        memcpy_s = best_seconds(lambda: _memcpy(pool, threads, b, a), host, reps, budget)
    probe_clock.PAUSES.next_figure("triad")
    triad_s = best_seconds(lambda: torch.add(b, c, alpha=3.0, out=a), host, reps, budget)
    return 2 * n * 4 / min(copy_s, memcpy_s) / 1e9, 3 * n * 4 / triad_s / 1e9, n * 4


def _memcpy(pool: ThreadPoolExecutor, threads: int, dst: Any, src: Any) -> None:
    """``dst = src`` by the C library's memcpy, one slice for each of ``pool``'s ``threads``
    (ctypes lets go of the GIL during the call)."""
    nbytes = src.numel() * src.element_size()
    step = -(-nbytes // threads)
    cuts = [(i, min(step, nbytes - i)) for i in range(0, nbytes, step)]
    d, s = dst.data_ptr(), src.data_ptr()
    list(pool.map(lambda cut: ctypes.memmove(d + cut[0], s + cut[0], cut[1]), cuts))


def device_bandwidth(device: str, reps: int) -> float:
    import torch

    src = torch.empty(DEVICE_COPY_BYTES, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    probe_clock.PAUSES.next_figure("copy")
    seconds = best_seconds(lambda: dst.copy_(src), device, reps)
    accelerator(backend(device)).empty_cache()
    return 2 * DEVICE_COPY_BYTES / seconds / 1e9


def compute_kinds(device: str) -> list[str]:
    """What to measure on this device: fp32 everywhere; bf16 on the host; tf32, fp16, bf16 on
    an accelerator; int8 (``_int_mm``) on the host and from compute capability 8.0; fp8 from 8.9."""
    import torch

    int8 = [INT8] if hasattr(torch, "_int_mm") else []
    b = backend(device)
    if b.torch_module is None:
        return [FP32, "bf16", *int8]
    kinds = [FP32, TF32, "fp16", "bf16"]
    ns = accelerator(b)
    capability = tuple(ns.get_device_capability()) if hasattr(ns, "get_device_capability") else ()
    if capability >= (8, 0):
        kinds += int8
    if capability >= (8, 9):
        kinds.append(FP8)
    return kinds


def measure(device: str, reps: int = REPS) -> Ceilings:
    import torch

    kinds = compute_kinds(device)
    pauses = start_measurement(figures=len(kinds) + (1 if backend(device).torch_module else HOST_FIGURES))
    c = Ceilings(device_name=device_name(device), gbps=None, reps=reps,
                 threads=torch.get_num_threads() if backend(device).torch_module is None else None,
                 measured_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    if backend(device).torch_module is None:
        c.copy_gbps, c.triad_gbps, c.array_bytes = host_bandwidth(reps)
        c.gbps = max(c.copy_gbps, c.triad_gbps)
        pages = "huge pages" if os.environ.get("THP_MEM_ALLOC_ENABLE") == "1" else "4 KiB pages"
        where = (f"STREAM copy (the faster of torch's copy_ and memcpy) and triad over "
                 f"{c.array_bytes / 1024**2:.0f} MiB arrays ({pages}), {c.threads} thread(s)")
    else:
        c.gbps = c.copy_gbps = device_bandwidth(device, reps)
        where = f"a {DEVICE_COPY_BYTES // 1024**2} MiB device-to-device copy"
    for kind in kinds:
        probe_clock.PAUSES.next_figure(kind)
        try:
            rate, n, layout = matmul_tflops(kind, device, reps)
        except Exception as e:  # a type the device or this torch lacks: said, not fatal
            c.errors.append(f"{kind}: {type(e).__name__}: {str(e)[:120]}")
            continue
        key = FP16 if kind in ("bf16", "fp16") else kind
        if rate > c.tflops.get(key, 0.0):
            c.tflops[key], c.matmul_n[key], c.matmul_layout[key] = rate, n, layout
    via = " (aten's mm or oneDNN's linear, int8 its quantized one)" if ONEDNN in routes(device) else ""
    more = ("" if backend(device).torch_module is not None else
            f", more as time allows ({BANDWIDTH_BUDGET_S:g} s a bandwidth figure; the matmul probes at "
            f"n = {PROBE_N} in rounds over the routes for {PROBE_BUDGET_S:g} s)")
    c.how = (f"{where}; square matmuls (2n³ FLOPs) by each type's routes{via}, "
             f"the best rate at any size and route; the best of up to {reps} repetitions each{more}"
             f"{pauses.note()}")
    return widened(c, backend(device).torch_module is None)


MAX_FREQ = Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq")


def machine_key(device: str) -> dict[str, Any]:
    """What the cached ceilings depend on: the device's name, torch, the driver, clocks and
    threads; and the measurement method."""
    import torch

    key: dict[str, Any] = {"device": device_name(device), "torch": torch.__version__, "method": METHOD}
    if backend(device).torch_module is None:
        key["threads"] = torch.get_num_threads()
        key["max_khz"] = file_text(MAX_FREQ).strip() or None
    else:
        key["runtime"] = getattr(torch.version, backend(device).torch_module or "", None)
        key["driver"] = file_text(Path("/proc/driver/nvidia/version")).strip().splitlines()[:1]
        props = accelerator(backend(device)).get_device_properties(0)
        key["clock_khz"] = getattr(props, "clock_rate", None)
    return key


def read_entry(path: Path | None) -> tuple[Ceilings | None, str]:
    """The cache entry at ``path`` and "", or None and why it cannot be taken ("" where there
    is none): a torn write, a hand edit, another tool's file (``[]``, ``"gbps": "fast"``), which
    read as they are would fail the run far away, in the roofline's arithmetic."""
    if path is None or not path.exists():
        return None, ""
    try:
        data = json.loads(path.read_text())
        shape.check(Ceilings, data)
        return Ceilings.from_dict(data), ""
    except OSError as e:
        return None, f"not readable ({e.strerror or e})"
    except (ValueError, RecursionError) as e:
        return None, f"not readable as JSON ({str(e)[:120]})"
    except ResultError as e:
        return None, str(e).replace("the result", "the entry", 1)


def read_cached(path: Path | None) -> Ceilings | None:
    """The cache entry at ``path``; None where there is none or it is damaged (``read_entry``):
    a damaged entry is measured again, and replaced."""
    return read_entry(path)[0]


def usable(cached: Ceilings | None, key: dict[str, Any]) -> Ceilings | None:
    """A cached entry a run takes as it is (marked ``from_cache``): one measured undisturbed,
    under this very key. None otherwise: an entry measured beside other work is measured again,
    each figure kept the higher."""
    if cached is None or cached.load is not None or cached.key != key:
        return None
    cached.from_cache = True
    return cached


def measure_again(device: str, old: Ceilings, want: dict[str, float], reps: int) -> Ceilings:
    """The compute types a run's kernels beat (type -> the fastest kernel's TFLOP/s) measured
    again: each the higher of the old and the new figure; the old one kept in
    ``remeasured_from``, the kernel's rate in ``checked_against``."""
    kinds = [k for k in compute_kinds(device) if (FP16 if k in ("bf16", "fp16") else k) in want]
    start_measurement(figures=len(kinds))
    c = Ceilings.from_dict(old.to_dict())
    c.from_cache, c.remeasured_from = False, {}
    for kind in kinds:
        key = FP16 if kind in ("bf16", "fp16") else kind
        probe_clock.PAUSES.next_figure(kind)
        try:
            rate, n, layout = matmul_tflops(kind, device, reps)
        except Exception as e:  # as in measure(): said, not fatal
            c.errors.append(f"{kind}: {type(e).__name__}: {str(e)[:120]}")
            continue
        c.remeasured_from.setdefault(key, old.tflops.get(key, 0.0))
        if rate > c.tflops.get(key, 0.0):
            c.tflops[key], c.matmul_n[key], c.matmul_layout[key] = rate, n, layout
        c.checked_against[key] = max(want[key], c.checked_against.get(key, 0.0))
    c.measured_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return widened(c, backend(device).torch_module is None)


def _write_cache(cache: Path | None, c: Ceilings) -> str:
    """The entry, atomically; what holds for this run only (``remeasured_from``) left out.
    Where it cannot be written (a full disk, a read-only cache, a directory in its place), why:
    the run keeps the ceilings it measured, only the next run measures them again."""
    if cache is None:
        return ""
    d = c.to_dict()
    d["remeasured_from"], d["from_cache"] = {}, False
    tmp = cache.with_suffix(f".{os.getpid()}.tmp")
    try:
        cache.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp.write_text(json.dumps(d, indent=1))
        tmp.replace(cache)
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        return f"not cached, the next run measures them again ({cache}: {e.strerror or e})"
    return ""


def _disturbance(before: Any) -> str | None:
    """What disturbed the measurement: other processes' load, and pauses of the process that
    its probes could not wait out (``runner/probe_clock.py``); None where nothing did."""
    load = load_since(before)
    said = [load.describe()] if load is not None and load.disturbed else []
    paused = probe_clock.PAUSES.describe()
    return " and ".join(said + [paused] * bool(paused)) or None


def handle(request: dict[str, Any]) -> dict[str, Any]:
    """``{"device", "cache_dir", "refresh", "reps", "threads"}``: the ceilings, cached or
    measured; with ``"measure_again": {type: TFLOP/s}`` and the run's ``"ceilings"``, those
    compute types measured again (``measure_again``) and the cache updated."""
    device = request["device"]
    if request.get("threads") and backend(device).torch_module is None:
        import torch

        torch.set_num_threads(int(request["threads"]))  # as the run's profiling workers did
    key = machine_key(device)
    cache = Path(request["cache_dir"]) / f"{cache_key(key)}.json" if request.get("cache_dir") else None
    reps = int(request.get("reps") or REPS)
    if request.get("measure_again"):
        before = cpu_counters()
        c = measure_again(device, Ceilings.from_dict(request["ceilings"]), request["measure_again"], reps)
        c.load = _disturbance(before) or c.load
        return {"ceilings": c.to_dict(), "not_cached": _write_cache(cache, c)}
    cached = read_cached(cache)
    taken = None if request.get("refresh") else usable(cached, key)
    if taken is not None:
        return {"ceilings": taken.to_dict()}
    before = cpu_counters()
    c = measure(device, reps)
    c.key = key
    c.load = _disturbance(before)
    if c.load is not None or not request.get("refresh"):
        # a cached entry measured beside other work, or asked for again (--refresh-peaks) and
        # measured beside other work now: each figure the higher, as other work only slows one
        c = higher_of(c, cached)
        if cached is not None and cached.load is None and same_figures(c, cached):
            c = cached  # every figure is the undisturbed entry's: said as it was measured, not as low
    return {"ceilings": c.to_dict(), "not_cached": _write_cache(cache, c)}


if __name__ == "__main__":
    worker_main(handle)
