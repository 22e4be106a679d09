"""torch.compile modes as the installed torch defines them (pure; no torch import).

torch lists what each mode does in ``torch._inductor.list_mode_options()``: a dict of
``torch._inductor.config`` options per mode name. The table changes between versions
(read from the source of each release):

- 2.5: ``max-autotune`` = ``max_autotune`` + ``triton.cudagraphs``; no coordinate descent.
- from 2.6: ``max-autotune`` = ``max_autotune`` + ``triton.cudagraphs`` +
  ``coordinate_descent_tuning``; from 2.10 a ``lite`` mode exists. None sets
  ``max_autotune_pointwise``.

A worker (which has torch) reads the table; this module turns what it read into what the
project needs: the ``inductor_meta`` patch that re-tunes one Triton kernel file the way a mode
would (``kernel_patch``), whether a mode's graphs run under CUDA graphs
(``uses_cuda_graphs``), the check of a ``--mode`` name in the parent, which imports no
torch (``check_name``), and the worker's one-line error for a mode the installed torch lacks
(``unknown_mode``).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from .errors import UsageError
from .vocab import CompileMode

# The modes most torch versions have; --help lists them. Others the installed torch lists
# (``lite`` from 2.10) are accepted too, checked in the compile worker.
COMMON = tuple(m for m in CompileMode.ALL if m != CompileMode.EAGER)
# What a mode name looks like (it also names the run directory).
NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
CUDAGRAPHS_OPTION = "triton.cudagraphs"

# torch._inductor.config option -> the inductor_meta key a Triton kernel's heuristics read
# for it (triton_heuristics.py, coordinate_descent_tuner.py; written into the file by
# codegen/triton.py). A mode's other options (CUDA graphs, graph passes, buffer reuse) act
# when a model compiles, not on a kernel file.
KERNEL_META_OPTIONS: dict[str, str] = {
    "max_autotune": "max_autotune",
    "max_autotune_pointwise": "max_autotune_pointwise",
    "coordinate_descent_tuning": "coordinate_descent_tuning",
    "coordinate_descent_search_radius": "coordinate_descent_search_radius",
    "coordinate_descent_check_all_directions": "coordinate_descent_check_all_directions",
    "triton.autotune_pointwise": "autotune_pointwise",
}
# Written beside coordinate_descent_tuning when it is on, from the config's values
# (codegen/triton.py); the heuristics' defaults when the worker gives none.
COORDESC_SETTINGS: dict[str, Any] = {
    "coordinate_descent_search_radius": 1,
    "coordinate_descent_check_all_directions": False,
}


def short_version(version: str) -> str:
    """``2.13.0+cpu`` -> ``2.13``."""
    m = re.match(r"(\d+)\.(\d+)", version)
    return f"{m.group(1)}.{m.group(2)}" if m else version


@dataclass
class KernelPatch:
    """What a compile mode changes in one Triton kernel file's inductor_meta."""

    mode: str
    torch_version: str
    meta: dict[str, Any]  # the inductor_meta entries to set (autotune caches not included)
    applied: list[str]  # the mode's options that reach a kernel file
    ignored: list[str] = field(default_factory=list)  # the mode's options that act on a model compile

    def describe(self) -> str:
        """``max-autotune as torch 2.13 defines it: max_autotune, coordinate_descent_tuning``."""
        what = ", ".join(self.applied) if self.applied else "nothing a kernel file reads"
        return f"{self.mode} as torch {short_version(self.torch_version)} defines it: {what}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> KernelPatch:
        return cls(mode=str(d["mode"]), torch_version=str(d["torch_version"]),
                   meta=dict(d.get("meta") or {}), applied=list(d.get("applied") or []),
                   ignored=list(d.get("ignored") or []))


def kernel_patch(mode: str, options: dict[str, Any], *, torch_version: str,
                 config: dict[str, Any] | None = None) -> KernelPatch:
    """The inductor_meta patch of ``mode`` from its options as torch lists them.

    ``config``: the installed torch's values of ``COORDESC_SETTINGS`` (Inductor writes them
    into a file compiled with coordinate descent on).
    """
    meta: dict[str, Any] = {}
    applied, ignored = [], []
    for option, value in options.items():
        key = KERNEL_META_OPTIONS.get(option)
        if key is None:
            ignored.append(option)
            continue
        meta[key] = value
        applied.append(option)
    if meta.get("coordinate_descent_tuning"):
        for key, default in COORDESC_SETTINGS.items():
            meta.setdefault(key, (config or {}).get(key, default))
    return KernelPatch(mode=mode, torch_version=torch_version, meta=meta, applied=applied,
                       ignored=ignored)


def uses_cuda_graphs(options: dict[str, Any]) -> bool:
    """The mode wraps compiled graphs in CUDA graphs (``triton.cudagraphs`` on)."""
    return bool(options.get(CUDAGRAPHS_OPTION))


def check_name(mode: str, flag: str = "--mode") -> None:
    """A mode name the parent can pass on: ``eager``, a common mode, or any well-formed name
    (the compile worker checks it against the installed torch)."""
    if mode == CompileMode.EAGER or mode in COMMON or NAME.fullmatch(mode):
        return
    raise UsageError(f"{flag}: {mode!r} is not a torch.compile mode name (common modes: "
                     f"{', '.join(COMMON)})")


def unknown_mode(mode: str, torch_version: str, modes: list[str]) -> UsageError:
    """The one line for a mode the installed torch does not list."""
    return UsageError(f"torch.compile mode {mode!r}: torch {torch_version} has no such mode "
                      f"(its modes: {', '.join(modes)})")


def of_script(asked: dict[str, Any] | None, requested: str) -> str:
    """The mode a script's graphs compiled in: the mode of each of its ``torch.compile`` calls
    that compiled with Inductor (its own, or ``requested`` where it named none;
    ``runner/script_compiles.py``), in the order first met, joined by `` + ``; ``requested``
    where no such call was seen."""
    named = list(dict.fromkeys((asked or {}).get("modes") or []))
    return " + ".join(named) if named else requested
