"""How large a Triton kernel's max-autotune config space should be under the installed torch:
the expectation the GPU tests hold ``kernel --max-autotune`` to.

Two things decide it, and both change between torch versions: which ``inductor_meta``
switches the mode sets (its table, ``torch._inductor.list_mode_options``; turned into a kernel
patch by ``core/modes.py``), and which switches make the kernel's heuristic widen its space. A
3-D pointwise kernel widens under ``max_autotune`` at torch 2.13 but only under
``max_autotune_pointwise`` at 2.11, which no mode sets (docs/kernel.md). So the heuristic is
asked, one switch at a time (``switch_sizes``, needs torch, no GPU), and the mode's table says
which of those switches the mode turns on (``expected_space_size``, pure).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# The inductor_meta switches that can widen a kernel's candidate configs
# (triton_heuristics.py: pointwise, reduction, ...).
WIDENING_SWITCHES = ("max_autotune", "max_autotune_pointwise")


def expected_space_size(base: int, by_switch: dict[str, int], mode_meta: dict[str, Any]) -> int:
    """The size of the max-autotune space: the widest space of the switches the mode sets
    (``by_switch``: the space under each switch alone), the baseline's when it sets none."""
    return max((n for switch, n in by_switch.items() if mode_meta.get(switch)), default=base)


def switch_sizes(kernel_path: Path, work_dir: Path) -> tuple[int, dict[str, int]]:
    """(baseline space size, the space size under each widening switch alone) of a kernel file,
    from the installed torch's heuristic."""
    from inductor_bench.core.autotune import BASELINE, meta_patch
    from inductor_bench.core.kernelfile import read_kernel_file
    from inductor_bench.runner.kernelbench import load_kernel

    kf = read_kernel_file(kernel_path)
    base = meta_patch(BASELINE)

    def size(patch: dict[str, Any], tag: str) -> int:
        return len(load_kernel(kf, patch, work_dir, tag, listing_only=True)[1].configs)

    return size(base, "base"), {s: size({**base, s: True}, s) for s in WIDENING_SWITCHES}
