"""Numbers as reports print them: units, decimals and significant figures, in one place.

Three time formats, each for a reason: ``ms`` for breakdown tables (fixed decimals so a
column lines up), ``ms_precise`` for diffs and comparisons (enough digits to see a change
of a few percent in a small number), ``duration`` for single kernels (microseconds to
milliseconds, 4 significant figures).
"""

from __future__ import annotations

DASH = "-"


def ms(v: float) -> str:
    """Breakdown tables: 1 decimal from 100 ms, 3 from 0.01 ms, else 4."""
    if v >= 100:
        return f"{v:.1f}"
    if v >= 0.01:
        return f"{v:.3f}"
    return f"{v:.4f}"


def ms_precise(x: float | None) -> str:
    """Diffs and comparisons: 3 decimals from 1 ms, 4 from 1 µs, else scientific."""
    if x is None:
        return DASH
    if abs(x) >= 1 or x == 0:
        return f"{x:.3f}"
    if abs(x) >= 0.001:
        return f"{x:.4f}"
    return f"{x:.2e}"


def signed_ms(x: float) -> str:
    return ("+" if x > 0 else "") + ms_precise(x)


def duration(v_ms: float) -> str:
    """Kernel times span microseconds to milliseconds: 4 significant digits either way."""
    return f"{v_ms * 1e3:.4g} µs" if v_ms < 1 else f"{v_ms:.4g} ms"


def pct(x: float | None, signed: bool = False) -> str:
    if x is None:
        return DASH
    return f"{x:+.1f}%" if signed else f"{x:.1f}%"


def share(part: float, whole: float) -> float:
    """``part`` in percent of ``whole`` (0 when the whole is 0)."""
    return 100.0 * part / whole if whole > 0 else 0.0


def spread(spread_pct: float | None) -> str:
    """A robust sigma in % of the time, or nothing when there is none."""
    return f"±{spread_pct:.1f}%" if spread_pct is not None else ""


def mib(n: int | None) -> str:
    return DASH if n is None else f"{n / 2**20:.1f} MiB"


def seconds(s: float | None) -> str:
    return DASH if s is None else f"{s:.2f} s"


def count(c: float) -> str:
    """Calls per iteration: whole numbers as such, else two decimals."""
    return f"{c:g}" if c == int(c) else f"{c:.2f}"


def number(v: float | None, spec: str) -> str:
    return DASH if v is None else format(v, spec)


def optional(v: int | None) -> str:
    return DASH if v is None else str(v)


def truncate(s: str, width: int, mark: str = "…") -> str:
    """Cut the end off a long cell, marking the cut."""
    return s if len(s) <= width else s[: width - len(mark)] + mark


def shorten(name: str, width: int) -> str:
    """Cut the middle out of a long name, keeping both ends: ``cpp_fused_a_b_..._sum_2``."""
    if len(name) <= width:
        return name
    keep = width - 3
    return name[: keep - keep // 3] + "..." + name[len(name) - keep // 3 :]


def interval_pct(ratio_ci: tuple[float, float] | None) -> str:
    """A time-ratio interval as signed percent changes: ``[+8.1%..+15.0%]``; "" without one."""
    if ratio_ci is None:
        return ""
    lo, hi = ratio_ci
    return f"[{100 * (lo - 1):+.1f}%..{100 * (hi - 1):+.1f}%]"


def interval_x(speedup_ci: tuple[float, float] | None) -> str:
    """A speedup interval: ``[1.41x-1.58x]``; "" without one."""
    if speedup_ci is None:
        return ""
    return f"[{speedup_ci[0]:.2f}x-{speedup_ci[1]:.2f}x]"
