"""``scripts/bench_verdicts.py`` reads the verdict of a breakdown diff off the diff's first line:
its pattern must match what ``diff`` prints there (synthetic results, those of test_diff.py)."""

from __future__ import annotations

import importlib.util
import re
import sys

from inductor_bench.core.diff import diff_results
from inductor_bench.render.diff import render_diff

from .conftest import ROOT
from .test_diff import base_result, slow_diff

_spec = importlib.util.spec_from_file_location("bench_verdicts", ROOT / "scripts" / "bench_verdicts.py")
bench_verdicts = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench_verdicts  # its dataclasses look their module up there
_spec.loader.exec_module(bench_verdicts)


def _phrase(first_line: str) -> re.Match | None:
    return re.search(bench_verdicts.STEP_PHRASE.format(mode="default"), first_line)


def test_the_pattern_reads_a_regression_off_the_diffs_first_line():
    m = _phrase(render_diff(slow_diff()).splitlines()[0])
    assert m is not None
    assert (m[1], m[2], m[3], m[5]) == ("8.400", "10.400", "+23.8%", "significant")
    assert m[4].startswith("[") and m[4].endswith("]")


def test_the_pattern_reads_a_change_within_noise():
    first = render_diff(diff_results(base_result(), base_result())).splitlines()[0]
    assert first.startswith("NO SIGNIFICANT CHANGE")
    m = _phrase(first)
    assert m is not None and (m[1], m[2], m[3], m[5]) == ("8.400", "8.400", "+0.0%", "within noise")
