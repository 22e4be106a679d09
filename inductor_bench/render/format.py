"""Numbers as reports print them: units, decimals and significant figures, in one place.

Three time formats, each for a reason: ``ms`` for breakdown tables (fixed decimals so a
column lines up), ``ms_precise`` for diffs and comparisons (enough digits to see a change
of a few percent in a small number), ``duration`` for single kernels (microseconds to
milliseconds, 4 significant figures).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal

from ..core.si_units import sig3
from ..core.stats import Change, bound_text, floor_marks, interval_x_text, past_floors
from ..core.step_totals import ALL_GRAPHS
from ..core.vocab import StepSource, Stop

# Kernel names cut to a table's width (render/kernel_names.py), a column of them told apart
# (render/distinct_labels.py), with the other formats here.
from .distinct_labels import kernel_labels as kernel_labels
from .kernel_names import KERNEL_CHARS as KERNEL_CHARS
from .kernel_names import kernel_label as kernel_label
from .kernel_names import shorten as shorten

DASH = "-"
# How every spread cell is made (core/steady.py spread_sigma), in the footers and legends
SPREAD = ("robust sigma (1.4826 x MAD; where over half the samples are equal, 1.2533 x their mean "
          "absolute deviation from the median)")


def ms(v: float) -> str:
    """Breakdown tables: 3 decimals from 0.01 ms (however long: a sum's parts and its total
    print to the same microsecond, so they visibly add up), 4 below, and 0 as ``0.000`` (a
    negative zero too: the dur of an event that wrote none, ``core/trace.py`` NO_DUR)."""
    if v == 0:
        return "0.000"
    if v >= 0.01:
        return f"{v:.3f}"
    return f"{v:.4f}"


def ms_precise(x: float | None) -> str:
    """Diffs and comparisons: 3 decimals from 1 ms, else 4, or 6 (to the nanosecond) where 4
    would read 0: fixed decimals throughout, so that a column lines up and reads as numbers
    (``-0.0005``, not ``-5.00e-04``)."""
    if x is None:
        return DASH
    if x == 0:
        return "0.000"  # a negative zero too
    if abs(x) >= 1:
        return f"{x:.3f}"
    return f"{x:.4f}" if abs(x) >= 0.00005 else f"{x:.6f}"


def signed_ms(x: float) -> str:
    """A change in ms shown without both its figures beside it: exact, as ``ms_precise``."""
    return ("+" if x > 0 else "") + ms_precise(x)


def ms_between(base: float, head: float, shown: Callable[[float], str] = ms_precise) -> str:
    """``head - base`` in ms where both figures are printed beside it (``shown``: how they are
    printed): the difference of the two figures as printed, which a reader checks, not of the
    exact ones (0.12344 -> 0.12356 prints 0.1234 and 0.1236: ``+0.0002``, not ``+0.0001``).
    It is printed at the finer of the figures' two precisions, exactly: across the step of
    ``ms_precise`` from 4 decimals to 3 at 1 ms, 0.9995 -> 1.0004 prints 0.9995 and 1.000 and
    reads ``+0.0005`` (3 decimals would read ``+0.001``, which the figures do not give, and a
    small change between two figures of 4 decimals would read ``0.000``). Equal figures read
    ``0.000``, as a zero time does. The JSON keeps the exact times."""
    return _difference_shown(shown(base), shown(head))


def _difference_shown(base_text: str, head_text: str) -> str:
    """``head_text - base_text``, two printed figures, in decimal arithmetic (no binary
    rounding): its decimals are the finer figure's."""
    d = Decimal(head_text) - Decimal(base_text)
    return "0.000" if d == 0 else f"{d:+f}"


def duration(v_ms: float) -> str:
    """Kernel times span microseconds to milliseconds: 4 significant digits either way, its
    trailing zeros kept so that every row of a column reads to the same precision (``20.00 µs``
    above ``10.03 µs``, not ``20 µs``); under 1 ms in µs (after rounding: ``1.000 ms``, not
    ``1000 µs``)."""
    v = float(f"{v_ms:.4g}")
    return f"{sig_digits(v * 1e3, 4)} µs" if abs(v) < 1 else f"{sig_digits(v, 4)} ms"


def sig_digits(x: float, sig: int) -> str:
    """``x`` to ``sig`` significant digits, trailing zeros kept; a whole number past them as is
    (``12345``)."""
    if x == 0:
        return "0"
    x = float(f"{x:.{sig}g}")
    return f"{x:.{max(0, sig - 1 - math.floor(math.log10(abs(x))))}f}"


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
    """Calls per iteration, with thousands separators as every integer the tool prints:
    whole numbers as such (``1,000,000``, never ``1e+06``), else two decimals (``2,500.50``)."""
    return f"{int(c):,}" if c == int(c) else f"{c:,.2f}"


def calls(c: float) -> str:
    """``1 call``, ``3 calls``, ``0.50 calls``."""
    return f"{count(c)} call" + ("" if c == 1 else "s")


def number(v: float | None, spec: str) -> str:
    return DASH if v is None else format(v, spec)


def sig3_or_dash(v: float | None) -> str:
    """``v`` to 3 significant digits (``core/si_units.sig3``), a dash where there is none."""
    return DASH if v is None else sig3(v)


def optional(v: int | None) -> str:
    return DASH if v is None else str(v)


def truncate(s: str, width: int, mark: str = "…") -> str:
    """Cut the end off a long cell, marking the cut."""
    return s if len(s) <= width else s[: width - len(mark)] + mark


def points(d: float) -> str:
    """A change of a percentage, in percentage points: ``+2.4 pp``; one that rounds to nothing
    reads ``0.0 pp``, never ``-0.0 pp``."""
    text = f"{d:+.1f}"
    return f"{'0.0' if float(text) == 0.0 else text} pp"


def points_between(base: float, head: float) -> str:
    """The change from ``base`` to ``head`` (percentages) in percentage points, as the
    difference of the two figures printed beside it (``pct``, one decimal), which a reader
    checks: 15.0% -> 15.2% reads ``+0.2 pp``, though the exact figures differ by 0.14."""
    return points(float(f"{head:.1f}") - float(f"{base:.1f}"))


def across_floor(v: float, marks: tuple[float, ...], places: int, sign: str = "") -> str:
    """``v`` at ``places`` decimals, or at more where those would put it on the other side of a
    mark: a change under the verdict's minimum never reads as reaching it (``1.097x`` under a
    1.10x floor, not ``1.10x ... within noise``)."""
    return past_floors(v, f"{v:{sign}.{places}f}", marks, sign)


def speedup_x(ch: Change) -> str:
    """``ch``'s speedup (base / head): ``1.42x``, at more decimals beside the floors of its
    verdict (1 + min_rel and its inverse); "-" without one."""
    return speedup_at(ch.speedup, ch.min_rel)


def speedup_at(v: float | None, min_rel: float | None) -> str:
    """A speedup judged with the minimum relative change ``min_rel``: ``1.42x``, at more
    decimals beside 1 + min_rel and its inverse (``1.097x`` under a 10% floor, not ``1.10x``);
    "-" for none."""
    if v is None:
        return DASH
    return across_floor(v, floor_marks(min_rel), 2) + "x"


def change_pct(ch: Change) -> str:
    """``ch``'s change in % of the base, signed: ``+9.73%`` where ``+9.7%`` would do but
    ``+10.0%`` would not (a 10% floor); "-" without one. Of the exact figures (or the median
    paired ratio), not of the two printed beside it as a change in ms is (``ms_between``): it
    is the figure the verdict's floor judges, which rounded figures could put across it."""
    return rel_change_pct(ch.rel_pct, ch.min_rel)


def rel_change_pct(rel_pct: float | None, min_rel: float | None) -> str:
    """A change in % (``change_pct``'s figure) given as its two numbers."""
    if rel_pct is None:
        return DASH
    return across_floor(rel_pct, _pct_floors(min_rel), 1, "+") + "%"


def _pct_floors(min_rel: float | None) -> tuple[float, ...]:
    """The changes in % a significant one is beyond: ``+10%`` and ``-9.09%`` for 10%."""
    return (100 * min_rel, 100 * (1 / (1 + min_rel) - 1)) if min_rel else ()


def interval_pct(ratio_ci: tuple[float, float] | None, min_rel: float | None = None) -> str:
    """A time-ratio interval as signed percent changes: ``[+8.1%..+15.0%]``, each bound on its
    side of 0% and, given ``min_rel``, of the floors as ``change_pct`` keeps the change (``+9.97%
    [+9.96%..+12.3%]``, not ``[+10.0%..``); "" without one."""
    if ratio_ci is None:
        return ""
    lo, hi = (bound_text(100 * (r - 1), 0.0, _pct_floors(min_rel), 1, "+") for r in ratio_ci)
    return f"[{lo}%..{hi}%]"


def interval_x(speedup_ci: tuple[float, float] | None, min_rel: float | None = None) -> str:
    """A speedup interval: ``[1.41x-1.58x]``; "" without one (``core.stats.interval_x_text``)."""
    return interval_x_text(speedup_ci, min_rel)


def step_figure(source: str) -> str:
    """What a diff's first figure is: a breakdown's all-graphs row (its graphs' own calls, the
    time outside them not included) or compare's step time (the real model call)."""
    return ALL_GRAPHS if source == StepSource.HARNESS else "step time"


def step_source(source: str) -> str:
    """Where a diff's first figure comes from, in words."""
    return "their harness calls" if source == StepSource.HARNESS else source


def step_axis(source: str) -> str:
    """A chart's axis for a diff's first figure: per step only where it is the step."""
    return f"ms per step ({source})" if source == StepSource.MODEL else f"ms ({step_source(source)})"


# Why a column or side stopped before the others (``runner/rounds.py``); a result saved
# without it says only when.
STOPPED_WORDS = {
    Stop.CALL_LIMIT: ", having reached its call limit",
    Stop.TIME_BUDGET: ", having used up its time budget (--step-budget)",
}


def rounds_run(blocks: list[list[float]]) -> int:
    """How many rounds a column or side ran a block in: up to its last non-empty block."""
    return max((i + 1 for i, b in enumerate(blocks) if b), default=0)
