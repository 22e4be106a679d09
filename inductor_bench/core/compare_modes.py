"""The compile modes a comparison runs: ``--modes`` read and checked, and why a mode cannot run
on a device."""

from __future__ import annotations

from .devices import backend
from .errors import UsageError
from .modes import check_name as check_mode_name
from .vocab import CompileMode

DEFAULT_MODES = (CompileMode.DEFAULT, CompileMode.MAX_AUTOTUNE)


def skip_reason(mode: str, device: str | None) -> str | None:
    """Why a mode cannot run on ``device`` (None: it can, or the device is not known yet).
    A CUDA-graph-only mode elsewhere would measure "default" again under another name."""
    if mode in CompileMode.CUDA_GRAPHS_ONLY and device is not None and not backend(device).cuda_graphs:
        return f"CUDA graphs need a CUDA device (this run is on {device}); it would repeat default"
    return None


def parse_modes(text: str, *, eager: bool = True) -> list[str]:
    """``"default,max-autotune"`` -> ``["eager", "default", "max-autotune"]`` (validated)."""
    modes: list[str] = [CompileMode.EAGER] if eager else []
    for m in (x.strip() for x in text.split(",")):
        if not m:
            continue
        check_mode_name(m, "--modes")  # each compile worker checks it against its torch
        if m == CompileMode.EAGER and not eager:
            raise UsageError("--modes lists eager but --no-eager leaves it out")
        if m not in modes:
            modes.append(m)
    if not [m for m in modes if m != CompileMode.EAGER]:
        raise UsageError("--modes: give at least one torch.compile mode (e.g. default)")
    return modes
