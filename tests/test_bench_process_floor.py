"""``scripts/bench_process_floor.py``: its windows and estimators on synthetic series (the
figures are worked out here by hand), and a missing module is one line and exit 2. The
timing of real processes is the benchmark's own business (``docs/statistics.md``)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def floor():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        yield importlib.import_module("bench_process_floor")
    finally:
        sys.path.remove(str(ROOT / "scripts"))


def test_windows_are_spread_through_the_series(floor):
    series = list(range(100))
    ws = floor.windows(series, 5, 10)
    assert [w[0] for w in ws] == [0, 22, 44, 66, 88]  # step (100 - 10) // 4
    assert all(len(w) == 10 for w in ws)
    assert floor.windows(series[:4], 5, 10) == [series[:4]]  # shorter than one window: all of it


def test_the_estimators_on_a_process_that_turns_fast_late(floor):
    """A synthetic process slow (2.0 ms) for its first 80 calls, fast (1.0 ms) for the last 20,
    with one call at 0.9 ms: the tool's five windows of 20 calls find the fast last window."""
    series = [2.0] * 80 + [1.0] * 19 + [0.9]
    est = floor.estimators(20)
    assert est["tool (fastest of 5 windows, steady mean)"](series) == pytest.approx((19 * 1.0 + 0.9) / 20)
    assert est["fastest 10% of a window"](series) == pytest.approx((1.0 + 0.9) / 2)
    assert est["min (one call)"](series) == 0.9


def test_the_table_gives_each_estimators_spread_over_the_processes(floor):
    fast, slow = [1.0] * 200, [1.25] * 200
    text = floor.table([fast, slow], 20)
    assert "| tool (fastest of 5 windows, steady mean) | 1.000, 1.250 | 25.0% |" in text
    assert "| median of all calls | 1.000, 1.250 | 25.0% |" in text


def test_a_missing_module_is_one_line_and_exit_2(floor, tmp_path, capsys):
    assert floor.main([str(tmp_path / "nope.py"), "--processes", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no such file" in err[0]
