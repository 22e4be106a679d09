"""The one table of what differs per device backend; plain data, no torch import.

Every other module asks this table (``backend(name)``) instead of comparing device strings:
the analysis (which timeline holds the kernels, the significance floor), the reports (what
busy % means), and the torch side (``runner/device.py`` turns a row into profiler
activities, synchronisation, peak memory and the device's name). Adding a backend is one
row here, plus classification rules for its library kernels in ``classify.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Where a backend's kernels are measured in a trace.
HOST = "host"  # top-level CPU ops inside each iteration marker (C++ kernels, extern ops)
DEVICE = "device"  # device events (kernels, memcpy, memset) that start inside a marker


@dataclass(frozen=True)
class Driver:
    """The driver library torch needs for a backend, and two of its C calls that tell whether
    it sees a device: ``init(0)`` returns 0 on success, ``count(&n)`` stores how many."""

    library: str  # as the dynamic loader finds it
    init: str
    count: str
    platform: str = "linux"  # sys.platform prefix the library name holds for


@dataclass(frozen=True)
class Backend:
    name: str  # the torch device type, as results and options spell it
    label: str  # how a report names the hardware ("GPU", "CPU")
    timeline: str  # HOST or DEVICE
    # Smallest relative change a diff may call significant (see core/stats.py for why).
    min_rel_change: float
    busy_note: str  # what busy % means on this backend, printed under the graph table
    hardware: str = ""  # what a user needs for it, in a sentence ("an NVIDIA GPU")
    # torch side (read by runner/device.py): the torch namespace with synchronize(),
    # is_available(), get_device_name() and the allocator's peak counters; None for the host.
    torch_module: str | None = None
    profiler_activity: str | None = None  # torch.profiler.ProfilerActivity member, besides CPU
    peak_memory_kind: str = "process peak RSS"
    cuda_graphs: bool = False  # torch.compile's CUDA-graph modes can run here
    # the command that reports the device's compute processes and clock (runner/machine.py)
    monitor: str | None = None
    times_triton_kernels: bool = False  # `inductor-bench kernel` can time its Triton files
    # The step and each graph's own call are timed in turns in the compile worker, and the
    # time outside the graphs comes from them (core/step.py). Off where a graph's time as the
    # step sees it is its pipelined run (an accelerator): that needs the profiling worker.
    split_in_turns: bool = False
    # Text that marks an Inductor compiled module as generated for this backend: anywhere in
    # the module, or in its call() (every module imports both allocators at the top).
    module_markers: tuple[str, ...] = ()
    call_markers: tuple[str, ...] = ()
    # Telling, before any worker imports torch, that torch cannot have this backend here
    # (runner/device.py): the ``torch.version`` attributes a torch build with it sets (all
    # None: built without it), each with the driver it needs (None: left to torch).
    torch_builds: tuple[tuple[str, Driver | None], ...] = ()
    # c10's DeviceType number, as a profile_memory trace's [memory] events give it
    c10_type: int | None = None


_DEVICE_BUSY = (
    "busy = union of GPU kernel intervals ÷ wall time of the same profiled iterations "
    "(never above 100%); kernel ms sums every kernel, so concurrent streams can exceed busy."
)
_HOST_BUSY = (
    "busy = time inside C++ kernels and extern ops ÷ wall time of the same profiled "
    "iterations; the rest is the wrapper, Python or C++ (allocation, launch, bookkeeping). The host "
    "runs each op as it is called, so there is no separate pipelined figure."
)

# In order of preference for --device auto: the first available one wins; the host last.
BACKENDS: tuple[Backend, ...] = (
    Backend(
        name="cuda",
        label="GPU",
        timeline=DEVICE,
        min_rel_change=0.05,  # core/stats.py: clocks, heat and scheduling between runs
        busy_note=_DEVICE_BUSY,
        hardware="an NVIDIA GPU",
        torch_module="cuda",
        profiler_activity="CUDA",
        peak_memory_kind="cuda max allocated",
        cuda_graphs=True,
        monitor="nvidia-smi",
        times_triton_kernels=True,
        # the Python wrapper's, and the C++ wrapper's (core/cppwrapper.py)
        module_markers=("device_str='cuda'", "cached_torch_device_type_cuda"),
        call_markers=("empty_strided_cuda(",),
        # ROCm builds run "cuda" through HIP, whose driver is not checked here
        torch_builds=(("cuda", Driver("libcuda.so.1", "cuInit", "cuDeviceGetCount")), ("hip", None)),
        c10_type=1,
    ),
    Backend(
        name="cpu",
        label="CPU",
        timeline=HOST,
        split_in_turns=True,
        # CPU runs move more between processes (thread placement, neighbours on a shared
        # host, the memory the allocator hands out). The largest such move measured on a
        # 2-core VM (one thread), +17.5% between two runs of identical code, was the
        # profiler's own doing: in about one profiler session in three a 1 MB buffer landed
        # on fresh pages every call (aten::mm +40%). Since each graph is profiled in several
        # sessions and the fastest kept (runner/profile.py), six breakdowns of
        # models/mlp.py --train gave step medians within 1.1% of each other (2.607 to
        # 2.636 ms). The floor leaves room for neighbours that no run can see; --min-change
        # sets another on a quiet, dedicated machine.
        min_rel_change=0.10,
        busy_note=_HOST_BUSY,
        hardware="a CPU",
        module_markers=("empty_strided_cpu(", "cpp_pybinding", "cached_torch_device_type_cpu"),
        c10_type=0,
    ),
)

# The torch modules whose is_available() Inductor's Triton heuristics ask while building configs
# (runner/kernel_load.py answers them as on the machine a kernel file is for).
HEURISTICS_ASK = ("cuda", "xpu")

AUTO = "auto"
BY_NAME = {b.name: b for b in BACKENDS}
HOST_BACKEND = next(b for b in BACKENDS if b.torch_module is None)
DEVICE_CHOICES = (AUTO, *(b.name for b in BACKENDS))


def backend(name: str | None) -> Backend:
    """The row for a device name; an unknown accelerator (a result from a newer version, a
    device with no row yet) is read as a generic accelerator rather than refused."""
    if name in BY_NAME:
        return BY_NAME[name]
    generic = BY_NAME[BACKENDS[0].name]
    return Backend(
        name=str(name),
        label=str(name).upper(),
        timeline=DEVICE,
        min_rel_change=generic.min_rel_change,
        busy_note=generic.busy_note.replace(generic.label, str(name).upper()),
    )


def accelerators() -> tuple[Backend, ...]:
    return tuple(b for b in BACKENDS if b.torch_module is not None)


def kernel_timing_backends() -> tuple[str, ...]:
    return tuple(b.name for b in BACKENDS if b.times_triton_kernels)


def device_of_module(text: str, call_section: str) -> str | None:
    """The backend a compiled module was generated for, from its text (``call_section``: the
    text from ``def call`` on); None when it says nothing."""
    for b in BACKENDS:
        if any(m in text for m in b.module_markers) or any(m in call_section for m in b.call_markers):
            return b.name
    return None


def device_help() -> str:
    """``auto (CUDA when available), cuda or cpu.``"""
    names = [b.name for b in BACKENDS]
    first = accelerators()[0].name.upper()
    return f"{AUTO} ({first} when available), {', '.join(names[:-1])} or {names[-1]}."


def _how_many(n: int, noun: str) -> str:
    """``1 thread``, ``2 threads``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def host_name(model: str, cores: int, threads: int, limited: str = "") -> str:
    """How a run names its host, as its device name: ``AMD EPYC (2 cores, 1 thread)``;
    ``limited``: the cgroup's limit (``, limited to 0.6 cores``)."""
    return f"{model} ({_how_many(cores, 'core')}, {_how_many(threads, 'thread')}{limited})"


_THREADS = re.compile(r", \d+ threads?(?=[,)])")


def without_threads(name: str) -> str:
    """A host's device name without its thread count (``AMD EPYC (2 cores)``): the same machine
    run with another number of threads reads the same; other names are as they are."""
    return _THREADS.sub("", name)


# Records written before the singular was used say "1 threads", "limited to 1 cores".
_ONE_PLURAL = re.compile(r"(?<![\d.])1 (core|thread)s\b")


def canonical_name(name: str) -> str:
    """A saved device name as this version writes it, so that a run recorded before compares
    with one recorded now (``1 threads`` -> ``1 thread``)."""
    return _ONE_PLURAL.sub(r"1 \1", name)
