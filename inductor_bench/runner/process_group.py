"""The process group a model ran its compiled collectives in, and the same in a profiling worker.

A graph that calls a collective (``torch.distributed._functional_collectives.all_reduce`` in a
compiled function, a compiled FSDP or tensor-parallel model) names its process group in its
module (``torch.ops._c10d_functional.all_reduce_.default(buf1, 'sum', '0')``): a profiling
worker without that group fails the graph (``Could not resolve the process group registered
under the name 0``). The compile worker therefore notes the default group the model set up
(``watch``: its backend and size, kept after the model destroys it), the settings carry it
(``runner/torch_settings.py``: ``gloo, world size 1``), and a profiling worker joins a group of
its own of that backend, alone (``join``), so the graph runs as it ran. Only a group of one
process can be stood up this way: the collectives of a one-process run are what the model ran,
while a group of several needs its other processes, and a graph calling a collective then fails
with a line saying so (``check``: profile such a run on each rank with torch.profiler and read
the traces with ``inductor-bench analyze DIR``). Groups made after the default one (``new_group``, a device
mesh's) are not stood up.
"""
from __future__ import annotations

import functools
import re
from typing import Any

_seen: list[str] = []  # "<backend>, world size <n>" of each default group the model set up
_TEXT = re.compile(r"(?P<backend>[\w:,]+?), world size (?P<size>\d+)")


def describe(backend: str, size: int) -> str:
    return f"{backend}, world size {size}"


def current(torch: Any) -> str | None:
    """The default group this process set up (the last, where several), or None."""
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return describe(str(dist.get_backend()), int(dist.get_world_size()))
    return _seen[-1] if _seen else None


def watch() -> None:
    """Note each default process group the model sets up, as it is set up."""
    import torch.distributed as dist

    if not dist.is_available() or getattr(dist.init_process_group, "_inductor_bench", False):
        return
    init = dist.init_process_group

    @functools.wraps(init)
    def init_watched(*a: Any, **kw: Any) -> Any:
        out = init(*a, **kw)
        _seen.append(describe(str(dist.get_backend()), int(dist.get_world_size())))
        return out

    init_watched._inductor_bench = True  # type: ignore[attr-defined]
    dist.init_process_group = init_watched


def join(torch: Any, value: Any) -> None:
    """Set up, in this process alone, the default group ``value`` describes; refuses (ValueError)
    a group of several processes, whose others are not here. None (a model that set up none)
    leaves a group this process has as it is."""
    if value is None:
        return
    m = _TEXT.fullmatch(str(value))
    if m is None:
        raise ValueError(f"not a process group: {value!r}")
    if int(m["size"]) != 1:
        raise ValueError(f"a process group of {m['size']} processes cannot be joined alone")
    dist = torch.distributed
    if dist.is_initialized():
        return
    dist.init_process_group(m["backend"], store=dist.HashStore(), rank=0, world_size=1)


_COLLECTIVE = re.compile(r"\btorch\.ops\._c10d_functional\.\w+")


def check(module_text: str, value: Any, not_applied: list[str]) -> None:
    """Raise ``WorkloadError`` where a graph's collectives need a group this worker could not
    set up (the model's had several processes), naming it, rather than torch's own line."""
    from ..core.errors import WorkloadError

    if "process_group" not in not_applied or not _COLLECTIVE.search(module_text):
        return
    raise WorkloadError(
        f"its collectives ran in the model's process group ({value}), whose other processes a "
        "profiling worker does not have: breakdown profiles one process; profile each rank with "
        "torch.profiler and read the traces with `inductor-bench analyze DIR`")
