"""The torch side of the device table: what each backend row of ``core/devices.py`` means
to torch (profiler activities, synchronisation, peak memory, the device's name, CUDA graphs,
measured bandwidth). No device is named here; every answer comes from the table.

Imports torch only inside functions, so the parent process can import this module.
"""

from __future__ import annotations

import os
import platform
import statistics
from pathlib import Path
from typing import Any

from ..core.devices import AUTO, BACKENDS, HOST_BACKEND, Backend, backend, host_name
from ..core.errors import DeviceError
from ..core.vocab import CompileMode

# The measured bandwidth fallback copies COPY_BYTES from one buffer to another: 512 MiB is
# far beyond any L2 cache (126 MB on a B200), so the copy streams through DRAM, and two such
# buffers fit on a 16 GB card next to a kernel's own arguments. A copy reads and writes every
# byte, so bandwidth = 2 x COPY_BYTES / time. Expect 80-90 % of the datasheet figure.
COPY_BYTES = 512 * 1024**2
COPY_REPS = 20
COPY_WARMUP = 3


def accelerator(b: Backend) -> Any:
    """The torch namespace of an accelerator backend (``torch.<torch_module>``)."""
    import torch

    return getattr(torch, b.torch_module or "", None)


def available(b: Backend) -> bool:
    if b.torch_module is None:
        return True
    ns = accelerator(b)
    return bool(ns is not None and ns.is_available())


def resolve(requested: str) -> str:
    """--device auto|<backend> -> the backend this run uses; DeviceError when it is absent."""
    import torch

    if requested == AUTO:
        return next(b.name for b in BACKENDS if available(b))
    b = backend(requested)
    if not available(b):
        raise DeviceError(
            f"--device {b.name}: {b.name.upper()} is not available here (torch {torch.__version__}); "
            f"use --device {HOST_BACKEND.name} or run on a {b.name.upper()} machine"
        )
    return b.name


def synchronize(name: str) -> None:
    b = backend(name)
    if b.torch_module is not None:
        accelerator(b).synchronize()


def profiler_activities(name: str) -> list[Any]:
    from torch.profiler import ProfilerActivity

    b = backend(name)
    extra = [getattr(ProfilerActivity, b.profiler_activity)] if b.profiler_activity else []
    return [ProfilerActivity.CPU, *extra]


def uses_cuda_graphs(name: str, mode: str) -> bool:
    """torch.compile wraps this mode's graphs in CUDA graphs on this device."""
    return backend(name).cuda_graphs and mode in CompileMode.WITH_CUDA_GRAPHS


# On the host, what the peak counts when the kernel could not reset it after the first call.
HOST_PEAK_SINCE_START = "process peak RSS, compilation included"
HOST_PEAK_STEADY = "peak RSS after the first call"


def reset_peak_memory(name: str) -> bool:
    """Start the peak over: the allocator's on an accelerator; on the host the process's
    high-water mark (Linux 4.0+: ``clear_refs`` 5 sets ``VmHWM`` to the resident set now), so
    that the compiler's transient memory does not count. False where it could not."""
    b = backend(name)
    if b.torch_module is not None:
        accelerator(b).reset_peak_memory_stats()
        return True
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return _vm_hwm() is not None


def peak_memory(name: str, reset: bool = True) -> tuple[int, str]:
    """(bytes, what was counted): the allocator's peak on an accelerator, else the host's peak
    resident set since ``reset_peak_memory`` (``reset``: it succeeded), or since the start."""
    import resource

    b = backend(name)
    if b.torch_module is not None:
        return int(accelerator(b).max_memory_allocated()), b.peak_memory_kind
    hwm = _vm_hwm() if reset else None
    if hwm is not None:
        return hwm, HOST_PEAK_STEADY
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024, HOST_PEAK_SINCE_START


def _vm_hwm() -> int | None:
    """The process's resident high-water mark in bytes (``/proc/self/status``), None without."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def device_name(name: str) -> str:
    b = backend(name)
    if b.torch_module is not None:
        return accelerator(b).get_device_name()
    return _host_name()


def monitor_id(name: str) -> str | None:
    """How the backend's monitor command (``nvidia-smi -i``) names the current device: its
    UUID, which survives ``CUDA_VISIBLE_DEVICES`` renumbering; None on the host or when the
    device does not say."""
    b = backend(name)
    if b.monitor is None:
        return None
    ns = accelerator(b)
    uuid = getattr(ns.get_device_properties(ns.current_device()), "uuid", None)
    return f"GPU-{uuid}" if uuid is not None else None


def _host_name() -> str:
    import torch

    name = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return host_name(name, os.cpu_count() or 1, torch.get_num_threads(), _limited())


def _limited() -> str:
    """``, limited to 0.6 cores`` where a cgroup's CPU quota allows fewer cores than the machine
    has (a container's CPU limit, ``core/cgroup.py``): the host's capacity for this process,
    and so part of the name its ceilings are cached under."""
    from ..core.cgroup import cores_text
    from .machine import cpu_limit

    limit = cpu_limit()
    cores = os.cpu_count() or 0
    return f", limited to {cores_text(limit.cores)}" if limit is not None and limit.cores < cores else ""


def timing_events(name: str, count: int) -> list[tuple[Any, Any]]:
    """``count`` (start, end) timing-event pairs of an accelerator."""
    ns = accelerator(backend(name))
    return [(ns.Event(enable_timing=True), ns.Event(enable_timing=True)) for _ in range(count)]


def measure_copy_gbps(name: str, nbytes: int = COPY_BYTES, reps: int = COPY_REPS) -> float:
    """Device-to-device copy bandwidth of the current device, GB/s (median of reps)."""
    import torch

    ns = accelerator(backend(name))
    src = torch.empty(nbytes, dtype=torch.uint8, device=name)
    dst = torch.empty_like(src)
    for _ in range(COPY_WARMUP):
        dst.copy_(src)
    pairs = timing_events(name, reps)
    for start, end in pairs:
        start.record()
        dst.copy_(src)
        end.record()
    ns.synchronize()
    ms = statistics.median(s.elapsed_time(e) for s, e in pairs)
    del src, dst
    ns.empty_cache()
    return 2 * nbytes / (ms / 1e3) / 1e9


def current_device(name: str) -> dict[str, Any]:
    """Name, index and compute capability of the current accelerator device."""
    ns = accelerator(backend(name))
    idx = ns.current_device()
    return {"name": ns.get_device_name(idx), "index": idx, "capability": list(ns.get_device_capability(idx))}


def graph_namespace(name: str) -> Any:
    """The torch namespace that captures and replays device graphs on this backend
    (``Stream``, ``CUDAGraph``, ``graph``, ...); None where the backend has none."""
    b = backend(name)
    return accelerator(b) if b.cuda_graphs else None
