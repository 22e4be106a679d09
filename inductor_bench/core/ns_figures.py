"""Analyze's JSON figures to the nanosecond. A trace times its events in microseconds with at
most three decimals, so a figure in ms holds six at most; sums and differences of float64
timestamps add binary noise past them (a step's wall cut at the recording's end read
``5.286999999999985``; a rank's idle ``0.6222568359374998``). Every float a JSON of `analyze`
writes is rounded to six decimals, what the trace recorded and nothing more."""

from __future__ import annotations

import json
from typing import Any

NS_DECIMALS = 6  # ms to the nanosecond


def to_ns(value: Any) -> Any:
    """``value`` with every float in it (in dicts and lists, at any depth) rounded to the ns."""
    if isinstance(value, float):
        return round(value, NS_DECIMALS)
    if isinstance(value, dict):
        return {k: to_ns(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_ns(v) for v in value]
    return value


def ns_json(d: dict[str, Any]) -> str:
    """The JSON text of an analysis, its figures to the nanosecond."""
    return json.dumps(to_ns(d), indent=1)
