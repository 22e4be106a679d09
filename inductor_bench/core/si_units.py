"""A quantity with its decimal prefix (``9.47 MB``, ``134.2 MB``, ``37.7 MFLOP``): for the lines
core writes (a refused kernel file's) and the tables render draws (the roofline's) alike. Pure."""

from __future__ import annotations

PREFIXES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def sig3(v: float) -> str:
    """``v`` to 3 significant digits, never in exponent form where it is 1000 or more: a
    GPU's ceilings and kernels read ``4238 GB/s``, ``1979 TFLOP/s``, not ``4.24e+03``."""
    return f"{v:.0f}" if abs(v) >= 999.5 else f"{v:.3g}"


def with_prefix(v: float, unit: str, digits: int = 3) -> str:
    """``v`` in ``unit`` with its prefix, ``digits`` significant digits: ``9.47 MB``."""
    for scale, prefix in PREFIXES:
        if abs(v) >= scale:
            return f"{v / scale:.{digits}g} {prefix}{unit}"
    return f"{v:.{digits}g} {unit}"
