"""Which constants of a compiled module are MKL-packed weights, and what they were packed from
(pure text; no torch import).

With freezing on a CPU, Inductor packs a linear layer's weight once, at compile time, into
MKL's own layout (``torch.ops.mkl._mkl_reorder_linear_weight(weight, batch_size)``), keeps
both the packed buffer and the weight as constants of the module, and calls
``torch.ops.mkl._mkl_linear.default(x, packed, weight, bias, batch_size)``. A packed buffer
cannot be copied to another address (it holds pointers into itself: torch says so where it
packs, ``fx_passes/mkldnn_fusion.py``), so it is never recorded: it is packed again, from
its weight, in the process that runs the module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MKL_LINEAR = re.compile(
    r"torch\.ops\.mkl\._mkl_linear(?:\.default)?\(\s*\w+,\s*(?P<packed>\w+),\s*(?P<weight>\w+),"
    r"\s*[\w.]+,\s*(?P<batch>\d+)\s*\)"
)


@dataclass(frozen=True)
class Packed:
    """A constant packed from another: ``weight``, at ``batch_size``."""

    weight: str
    batch_size: int


def mkl_packed(text: str) -> dict[str, Packed]:
    """The module's MKL-packed constants, by name, with the constant each was packed from."""
    return {m["packed"]: Packed(m["weight"], int(m["batch"])) for m in _MKL_LINEAR.finditer(text)}
