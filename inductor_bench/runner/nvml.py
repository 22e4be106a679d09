"""Readings of an NVIDIA GPU through NVML (the ``nvidia-ml-py`` package, imported as
``pynvml``): the compute processes on the device, its SM clock and the clock-event
("throttle") reasons, as numbers from the driver's library rather than text from
``nvidia-smi``.

nvidia-ml-py is on the GPU images we run on; elsewhere it is optional
(``pip install inductor-bench[nvml]``): without it, or where NVML does not start (no
driver), ``runner/machine.py`` falls back to ``nvidia-smi``.

Whether NVML lists a process depends on where it looks from: in a container with its own
pid namespace the list may hold the host's pids, or nothing at all. ``GpuReading.of`` takes
our own pid to be one of the listed ones when it is not among them; ``processes_seen`` says
what this process sees, for the validation to report.

Every function takes the NVML module as an argument (pynvml, or a stand-in with the same
names), so that it can be tested without a GPU.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

from ..core.load import GpuReading

# The clock-event bitmask's call: its newer name first (drivers from 535), then the older.
_REASON_CALLS = ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons")
_loaded: dict[str, Any] = {}


def library() -> Any | None:
    """pynvml, initialised once in this process; None where nvidia-ml-py is not installed or
    NVML does not start."""
    if "nvml" not in _loaded:
        _loaded["nvml"] = None
        with contextlib.suppress(Exception):  # ImportError, NVMLError (no driver), OSError
            import pynvml

            pynvml.nvmlInit()
            _loaded["nvml"] = pynvml
    return _loaded["nvml"]


def reading(nvml: Any, device_id: str, own_pid: int, ours: Iterable[int] = ()) -> GpuReading:
    """One reading of the device whose UUID is ``device_id`` (``GPU-...``). Raises
    ``nvml.NVMLError`` when the device cannot be read; a clock the device does not report is
    None, a bitmask it does not report is 0."""
    handle = nvml.nvmlDeviceGetHandleByUUID(device_id.encode())  # bytes: every nvidia-ml-py takes them
    pids = [p.pid for p in nvml.nvmlDeviceGetComputeRunningProcesses(handle)]
    sm = _optional(nvml, nvml.nvmlDeviceGetClockInfo, handle, nvml.NVML_CLOCK_SM)
    sm_max = _optional(nvml, nvml.nvmlDeviceGetMaxClockInfo, handle, nvml.NVML_CLOCK_SM)
    return GpuReading.of(pids, own_pid, ours, None if sm is None else float(sm),
                         None if sm_max is None else float(sm_max), _reasons(nvml, handle))


def processes_seen(nvml: Any, device_id: str, own_pid: int) -> dict[str, Any]:
    """What this process sees of the device's compute processes: their pids, and whether its
    own pid (a process holding a CUDA context) is among them. In a container that shows the
    host's pids it is not; in one that shows none the list is empty."""
    handle = nvml.nvmlDeviceGetHandleByUUID(device_id.encode())  # bytes: every nvidia-ml-py takes them
    pids = sorted(p.pid for p in nvml.nvmlDeviceGetComputeRunningProcesses(handle))
    return {"pids": pids, "own_listed": own_pid in pids}


def _reasons(nvml: Any, handle: Any) -> int:
    for name in _REASON_CALLS:
        call = getattr(nvml, name, None)
        if call is not None:
            value = _optional(nvml, call, handle)
            return int(value) if value is not None else 0
    return 0


def _optional(nvml: Any, call: Any, *args: Any) -> Any:
    try:
        return call(*args)
    except nvml.NVMLError:  # NotSupported on some devices, in some virtual machines
        return None
