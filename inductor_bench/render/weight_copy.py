"""What generated kernels spend copying weights into the layout extern convolutions and GEMMs
read (core/weight_copies.py): the report-wide share, and each fused copy kernel's own on its row."""

from __future__ import annotations

from ..core.comparable import trains
from ..core.results import BreakdownResult, KernelStat
from ..core.weight_copies import COPIES
from . import format as fmt

WEIGHT_COPY_NOTABLE = 5.0  # % of kernel time copying weights that the report names
FREEZING_FIX = "with --freezing the weights are constants and the copy is made once, at compile"


def weight_copy_note(r: BreakdownResult) -> str:
    """Without freezing: the share of kernel time generated kernels spend copying weights into the
    layout extern convolutions and GEMMs read, every call (core/weight_copies.py), and what avoids it."""
    if r.freezing:
        return ""
    t = r.totals()
    ms = sum((g.weight_copy_ms or 0.0) * t.weights.get(g.id, 1.0) for g in r.measured())
    pct = fmt.share(ms, t.kernel_ms)
    if pct < WEIGHT_COPY_NOTABLE:
        return ""
    fix = ("a model in channels_last (model.to(memory_format=torch.channels_last)) has none to copy"
           if trains(r) else FREEZING_FIX)
    return (f"{fmt.pct(pct)} of kernel time ({fmt.ms(ms)} ms) is generated kernels copying weights into "
            f"the layout the convolutions and GEMMs read, on every call (by the bytes they write): {fix}")


COPY_MARK = "copies weights"  # a row's mark: "[38% copies weights]"


def copy_mark(k: KernelStat) -> str:
    """`` [38% copies weights]``: the share of a kernel's time copying weights where it does other
    work too (a kernel named for the copies says so in its row already); "" for none."""
    if not k.copy_ms or k.ms <= 0 or (k.origin is not None and k.origin.missing in COPIES):
        return ""
    return f" [{fmt.pct(fmt.share(k.copy_ms, k.ms))} {COPY_MARK}]"


def copy_marks_note(kernels: list[KernelStat]) -> str:
    """The note under a table some of whose ``kernels`` are marked by ``copy_mark``; "" for none."""
    if not any(copy_mark(k) for k in kernels):
        return ""
    return (f"[n% {COPY_MARK}]: of the kernel's time, the share copying weights into the layout the "
            "convolutions and GEMMs read (by the bytes it writes), fused with its other work, on every call")
