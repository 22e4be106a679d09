"""A diff's kernel tables: the kernels of each, in the order its rows show them, and the labels
the rows show them by (``distinct_labels.kernel_labels``, at ``NAME_CHARS``). The verdict line
names the kernels responsible for a regression by the same labels (a cuDNN or flash-attention
kernel's whole name runs past 200 characters), and with the same change in ms as their rows;
HTML shows the whole name on hover, the JSON holds it; markdown and text for a file or a pipe
show names whole (``Doc.whole_names``)."""

from __future__ import annotations

from ..core.diff import ADDED, REMOVED, SLOWER, KernelDiff, SectionDiff
from ..core.vocab import Verdict
from .doc import Doc
from .format import ms_between, signed_ms

# Kernel rows shown per table; the rest are counted. Enough for the kernels that matter in
# a PR comment without burying the verdict.
DEFAULT_TOP = 10
NAME_CHARS = 60  # the longest kernel name shown in a table cell before it is cut


def table_order(s: SectionDiff, status: str) -> list[KernelDiff]:
    """The kernels of ``s`` with ``status``, in their table's order: the biggest change first,
    increases for slower and added kernels, decreases for faster and removed ones, either for
    those whose calls changed or that ran another workload."""
    sign = -1 if status in (SLOWER, ADDED) else 1
    either = status in (Verdict.CALLS_CHANGED, Verdict.OTHER_WORKLOAD)
    return sorted(s.kernels_with(status), key=lambda k: -abs(k.delta_ms) if either else sign * k.delta_ms)


def row_labels(ks: list[KernelDiff], doc: Doc) -> list[str]:
    """The labels of a table's rows ``ks`` in ``doc``, told apart where their names differ."""
    return doc.kernel_labels([k.name for k in ks], NAME_CHARS)


def table_label(s: SectionDiff, k: KernelDiff, doc: Doc, top: int = DEFAULT_TOP) -> str:
    """The label ``k``'s row shows in its table of ``s`` (of ``top`` rows); one not shown there,
    its name shortened alone."""
    shown = table_order(s, k.status)[:top]
    return next((label for row, label in zip(shown, row_labels(shown, doc), strict=True) if row is k),
                doc.kernel_label(k.name, NAME_CHARS))


def kernel_change(k: KernelDiff) -> str:
    """Head - base as its row's two figures read (``ms_between``); an added or removed kernel's
    time, which its row shows alone, exact. The verdict line reads it so too, so that the line
    and the row it names agree."""
    return signed_ms(k.delta_ms) if k.status in (ADDED, REMOVED) else ms_between(k.base_ms, k.head_ms)
