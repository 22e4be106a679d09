"""``scripts/bench_verdicts.py``'s own steps on saved results (synthetic, those of test_diff.py
and test_interleave.py): its patterns must match what ``diff`` and ``compare`` print, and the
step times of its table are the figures the tool reports."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys

import pytest

from inductor_bench.core.diff import diff_results
from inductor_bench.render.compare import render_compare
from inductor_bench.render.diff import render_diff

from .conftest import ROOT
from .test_diff import base_result, bwd_kernels, fwd_kernels, graph, result, slow_diff, write
from .test_interleave import two_models

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


def test_a_round_of_breakdowns_is_judged_with_the_figures_the_diff_reports(tmp_path):
    """The script's own step: `inductor-bench diff` of two saved breakdowns (synthetic: the
    head's gelu kernel 2 ms slower), its verdict read off the first line and its two step times
    off the diff's JSON, the steady means the diff prints."""
    head = result([graph("0-forward", fwd_kernels(gelu_ms=3.0)), graph("0-backward", bwd_kernels())])
    base_json, head_json = write(tmp_path / "base.json", base_result()), write(tmp_path / "head.json", head)
    opts = argparse.Namespace(mode="default")
    row = bench_verdicts.judge(opts, 1, bench_verdicts.SLOWER, base_json, head_json, dict(os.environ))
    assert (row.base_ms, row.head_ms) == (pytest.approx(8.4), pytest.approx(10.4))
    assert (row.change, row.verdict, row.met) == ("+23.8%", "significant", True)


def test_a_round_of_compare_is_judged_with_the_step_times_the_compare_reports(tmp_path):
    """The script's compare step on a saved compare (synthetic, test_interleave.py's: mlp, mlp
    again and a slower model in 12 interleaved rounds): its two verdicts off the printed lines,
    each column's step time as the compare's table shows it."""
    r = two_models()
    (tmp_path / "compare.json").write_text(json.dumps(r.to_dict()))
    opts = argparse.Namespace(mode="default")
    printed = render_compare(r)
    same, slower = bench_verdicts.compare_rows(opts, 1, tmp_path, printed)
    row = next(ln for ln in printed.splitlines() if ln.startswith("step time, ms (steady mean"))
    shown = [float(c) for c in row.split(")", 1)[1].split() if not c.startswith("±")]  # mlp, mlp-2, slow
    assert [f"{x:.3f}" for x in (same.base_ms, same.head_ms, slower.head_ms)] == [f"{x:.3f}" for x in shown]
    assert slower.head_ms / same.base_ms == pytest.approx(1.25)
    assert (same.change, same.verdict, same.met) == ("1.00x", "within noise", True)
    assert (slower.change, slower.verdict, slower.met) == ("0.80x", "significant", True)
