"""A CPU-only trace's ops that wrap other ops without a rule that names them.

TorchScript records each scripted function it runs as a ``cpu_op`` named after the function
(``both``, ``forward``) and each ``torch.jit.fork``'s task as ``<forked function>``: the ATen
ops they run are ops inside them. Read as the fallback category, such a record took its whole
duration as "other ATen" and hid the GEMMs inside it, while the GEMMs by shape counted them.
An op of no namespace (no ``::``) that no rule names and that encloses another op on its
thread wraps: its time goes to the ops inside it, as a Dynamo or autograd record's does."""

from __future__ import annotations

from itertools import pairwise

from .classify import FALLBACK
from .column_types import Events

WRAPPING_CATEGORY = "host_framework"


def enclosing_names(op: Events) -> set[int]:
    """The name ids of the ops that enclose another op on their thread: sorted by thread,
    start and longest first, an op encloses another exactly when the next one starts in it."""
    where, ts, dur = op.where, op.ts, op.dur
    order = sorted(range(len(op)), key=lambda j: (where[j], ts[j], -dur[j]))
    return {op.name[a] for a, b in pairwise(order)
            if where[a] == where[b] and ts[b] < ts[a] + dur[a]}


def unnamed_wrappers(kinds: list[tuple[str, str | None]], kind_names: list[str],
                     names: list[str], op: Events) -> list[tuple[str, str | None]]:
    """``kinds`` (category, launcher per kind, ``kind_names`` its op's name) with each
    fallback op of no namespace that encloses another op a wrapper."""
    candidates = [k for k, ((category, _), name) in enumerate(zip(kinds, kind_names, strict=True))
                  if category == FALLBACK and "::" not in name]
    if not candidates:
        return kinds
    enclosing = {names[n] for n in enclosing_names(op)}
    out = list(kinds)
    for k in candidates:
        if kind_names[k] in enclosing:
            out[k] = (WRAPPING_CATEGORY, kinds[k][1])
    return out
