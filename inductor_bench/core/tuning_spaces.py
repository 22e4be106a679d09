"""What a kernel file refused on this machine would be tuned over: the candidate configs its
heuristic builds under the baseline and under max-autotune as the installed torch defines it
(listed by the worker without a GPU, ``runner/kernelbench.config_space``), in the words the
refusal ends with.

Pure Python; no torch.
"""

from __future__ import annotations

from typing import Any

from .autotune import BASELINE, MAX_AUTOTUNE, config_label
from .kernelfile import KernelFile
from .modes import KernelPatch


def _configs(space: list[dict[str, Any]]) -> str:
    n = len(space)
    return f"{n} config{'s' if n != 1 else ''} ({'; '.join(config_label(c) for c in space)})"


def _descent(meta: dict[str, Any]) -> str:
    """``, then coordinate descent from the best (radius 1)`` where the meta turns it on."""
    if not meta.get("coordinate_descent_tuning"):
        return ""
    radius = meta.get("coordinate_descent_search_radius")
    return f", then coordinate descent from the best{f' (radius {radius})' if radius else ''}"


def would_tune(kf: KernelFile, spaces: dict[str, list[dict[str, Any]]], patch: KernelPatch | None) -> str:
    """``it would tune over: 1 config (...) as the file stands; with --max-autotune
    (max-autotune as torch 2.13 defines it: ...) 5 configs (...), then coordinate descent ...``.
    ``spaces``: each mode's candidate configs; a template's one config was fixed when the model
    compiled, which the file's own words already say (``kernelfile.file_says``)."""
    if kf.is_template or BASELINE not in spaces:
        return ""
    out = f"it would tune over: {_configs(spaces[BASELINE])} as the file stands{_descent(kf.inductor_meta)}"
    if MAX_AUTOTUNE in spaces and patch is not None:
        out += (f"; with --max-autotune ({patch.describe()}) {_configs(spaces[MAX_AUTOTUNE])}"
                f"{_descent({**kf.inductor_meta, **patch.meta})}")
    return out
