"""A quantity with its decimal prefix (``9.47 MB``, ``134.2 MB``, ``37.7 MFLOP``): for the lines
core writes (a refused kernel file's) and the tables render draws (the roofline's) alike. Pure."""

from __future__ import annotations

PREFIXES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def with_prefix(v: float, unit: str, digits: int = 3) -> str:
    """``v`` in ``unit`` with its prefix, ``digits`` significant digits: ``9.47 MB``."""
    for scale, prefix in PREFIXES:
        if abs(v) >= scale:
            return f"{v / scale:.{digits}g} {prefix}{unit}"
    return f"{v:.{digits}g} {unit}"
