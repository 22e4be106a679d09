"""GPU load readings through NVML (inductor_bench/runner/nvml.py), with a stand-in for the pynvml
module passed in: the device's compute processes, the SM clocks and the clock-event reasons,
what a container lets us see, and the fallbacks when NVML cannot answer. Synthetic: no GPU."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from inductor_bench.core.load import GpuReading
from inductor_bench.runner import machine, nvml

UUID = "GPU-5f2e3c1a-0000-1111-2222-333344445555"


class NVMLError(Exception):
    pass


def fake_nvml(pids, sm=1755, sm_max=1980, reasons=0x4, *, event_call=True, clocks_supported=True):
    """A stand-in for pynvml with the calls runner/nvml.py makes; it records them."""
    calls = []
    handle = object()

    def by_uuid(uuid):
        calls.append(("handle", uuid))
        if uuid != UUID.encode():
            raise NVMLError("NVML_ERROR_NOT_FOUND")
        return handle

    def clock(kind):
        def get(h, which):
            assert h is handle and which == 1
            calls.append((kind, which))
            if not clocks_supported:
                raise NVMLError("NVML_ERROR_NOT_SUPPORTED")
            return sm if kind == "clock" else sm_max
        return get

    def processes(h):
        assert h is handle
        return [SimpleNamespace(pid=p, usedGpuMemory=1 << 20) for p in pids]

    lib = SimpleNamespace(
        NVMLError=NVMLError, NVML_CLOCK_SM=1, calls=calls,
        nvmlDeviceGetHandleByUUID=by_uuid,
        nvmlDeviceGetComputeRunningProcesses=processes,
        nvmlDeviceGetClockInfo=clock("clock"),
        nvmlDeviceGetMaxClockInfo=clock("max"),
    )
    reasons_call = "nvmlDeviceGetCurrentClocksEventReasons" if event_call else \
        "nvmlDeviceGetCurrentClocksThrottleReasons"
    setattr(lib, reasons_call, lambda h: reasons)
    return lib


def test_a_reading_counts_the_other_processes_and_names_the_slowdown():
    lib = fake_nvml([4242, 7777, 8888])
    r = nvml.reading(lib, UUID, own_pid=4242)
    assert r == GpuReading(others=2, sm_mhz=1755.0, sm_max_mhz=1980.0, reasons=0x4)
    assert r.slowdown() == "software power cap: SM clock 1,755 of 1,980 MHz"
    assert nvml.reading(lib, UUID, own_pid=4242, ours=(7777,)).others == 1  # the run's own worker
    assert ("handle", UUID.encode()) in lib.calls


def test_the_older_throttle_reasons_call_and_unsupported_clocks():
    lib = fake_nvml([4242], reasons=0x40, event_call=False, clocks_supported=False)
    r = nvml.reading(lib, UUID, own_pid=4242)
    assert r == GpuReading(others=0, sm_mhz=None, sm_max_mhz=None, reasons=0x40)
    assert r.slowdown() == "hardware thermal slowdown"  # no clock to quote
    bare = fake_nvml([4242])
    del bare.nvmlDeviceGetCurrentClocksEventReasons  # a library with neither call
    assert nvml.reading(bare, UUID, own_pid=4242).reasons == 0


@pytest.mark.parametrize("pids, own_listed, others", [
    ([4242, 7777], True, 1),  # our pid namespace: ours is listed, one other
    ([901, 902], False, 1),  # the host's pids: one of them is ours
    ([], False, 0),  # a container that shows no process at all: nothing to count
])
def test_what_a_container_shows_is_reported_as_seen(pids, own_listed, others):
    lib = fake_nvml(pids)
    assert nvml.processes_seen(lib, UUID, 4242) == {"pids": sorted(pids), "own_listed": own_listed}
    assert nvml.reading(lib, UUID, own_pid=4242).others == others


def test_the_machine_reads_the_gpu_through_the_nvml_it_is_given():
    lib = fake_nvml([os.getpid(), 31337], sm=1500, reasons=0x8)
    r = machine.device_reading("cuda", UUID, nvml=lib)
    assert r == GpuReading(others=1, sm_mhz=1500.0, sm_max_mhz=1980.0, reasons=0x8)
    assert machine.device_reading("cuda", UUID, ours=(31337,), nvml=lib).others == 0
    assert machine.device_reading("cpu", None, nvml=lib) is None  # the host is never read
    assert machine.device_reading("cuda", None, nvml=lib) is None  # a device that gave no UUID
    # a device NVML does not know: no reading, and no fall back to nvidia-smi text
    assert machine.device_reading("cuda", "GPU-0000", nvml=lib) is None
