"""The charts a report draws, as data: horizontal bars of segments, each segment in a series
that picks its colour; the HTML document draws them (``render/html_svg.py``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


class Series:
    """Colour keys of chart segments that are not kernel categories (a category's key is its
    own colour key, the same on every chart and page; so are compile modes and kernel changes,
    by their ``core.vocab`` words)."""

    BUSY = "busy"
    IDLE = "idle"
    OTHER_WORK = "other steps' work"
    WAITING = "waiting on CPU"
    QUEUED = "queued"
    NOTHING = "nothing launched"
    FASTEST = "fastest"
    PICKED = "autotuner's pick"
    CONFIG = "config"
    BASE = "base"
    HEAD = "head"


@dataclass
class Segment:
    """One part of a bar: its value in the chart's unit, and the series it belongs to (a
    category key, a compile mode, a ``Series`` word), which picks its colour and legend entry."""

    value: float
    series: str
    label: str = ""  # the series' name in the legend (the key itself when empty)
    # the value as the report's table prints it (a speedup's ``0.90x``), shown on hover in place
    # of the value in the chart's unit (``0.9000 x``); empty: the value and the unit
    text: str = ""


@dataclass
class Bar:
    label: str
    segments: list[Segment]
    note: str = ""  # written at the end of the row ("max gain 12.3%")
    spread: tuple[float, float] | None = None  # a whisker from low to high, in the chart's unit
    tip: str = ""  # more on hover
    faint: bool = False  # drawn pale: within noise
    full: str = ""  # the whole name where ``label`` shortens it (a kernel's): shown on hover


@dataclass
class Chart:
    """Horizontal bars, one row each: stacked where a bar has several segments, diverging from
    zero where values are negative, with a whisker where a spread is known."""

    title: str
    unit: str  # the value axis: "ms per step", "% of kernel time"
    bars: list[Bar]
    note: str = ""  # how to read it, under the chart
    max_value: float | None = None  # a fixed end of the axis (100 for a percentage)
    whisker: str = ""  # what the whisker is, for the legend ("± robust sigma")
    legend: dict[str, str] = field(default_factory=dict)  # series -> label; from segments if empty
    # how a value reads in a tooltip: the formatter of the table the chart draws (``format.py``),
    # so that a number reads the same in both; None: by the unit (``html_svg.value_text``)
    value_format: Callable[[float], str] | None = None
