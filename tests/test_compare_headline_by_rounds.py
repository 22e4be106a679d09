"""The headline names the fastest column by the rounds' ratios its speedups are the medians of,
not by the step times: beside busy cores a compare headed its report ``Fastest steady state:
max-autotune 25.845 ms (0.57x [0.18x-2.30x] over eager ...)`` beside eager's 25.995 ms, crowning
a column its own speedup read slower; and where no column is faster than eager beyond noise the
headline says so first (hand-built results, synthetic rounds)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from inductor_bench.core.compare import CompareResult
from inductor_bench.render.compare import render_compare

RECORDED = Path(__file__).resolve().parent / "fixtures" / "results" / "cpu_mlp_compare" / "compare.json"


def _result(eager_blocks, other_blocks, other="max-autotune") -> CompareResult:
    cmp = json.loads(RECORDED.read_text())
    eager, col = (next(m for m in cmp["modes"] if m["mode"] == x) for x in ("eager", "default"))
    eager["paired_ms"], col["paired_ms"], col["mode"] = eager_blocks, other_blocks, other
    cmp["modes"] = [eager, col]
    cmp["interleaved"] = dict(cmp.get("interleaved") or {}, rounds=len(eager_blocks), stopped={})
    return CompareResult.from_dict(cmp)


# eager 2.0 ms every round; max-autotune 2% slower in 6 rounds, 4% faster in 4: its mean of all
# calls is the lower, its median round the slower
EAGER = [[2.0] * 6] * 10
AUTOTUNE = [[2.04] * 6] * 6 + [[1.92] * 6] * 4


def test_the_fastest_is_named_by_the_rounds_ratios_and_noise_is_said_first():
    autotune_ms = statistics.mean(x for b in AUTOTUNE for x in b)
    assert round(autotune_ms, 3) == 1.992 < 2.0  # lower step time
    ratios = sorted(statistics.mean(e) / statistics.mean(a) for e, a in zip(EAGER, AUTOTUNE, strict=True))
    median = (ratios[4] * ratios[5]) ** 0.5  # of 10 rounds: the middle two's geometric mean
    # the distribution-free 95% interval of the median of 10: the 2nd and the 9th of them
    assert [f"{x:.2f}" for x in (median, ratios[1], ratios[8])] == ["0.98", "0.98", "1.04"]
    r = _result(EAGER, AUTOTUNE)
    lines = render_compare(r).splitlines()
    assert "1.992 ±" in next(ln for ln in lines if ln.startswith("step time, ms"))
    assert lines[0] == ("No mode is faster than eager beyond noise: fastest steady state eager 2.000 ms; "
                        "max-autotune read 1.992 ms but 0.98x [0.98x-1.04x] over eager round by round "
                        "(within noise)")
    summary = json.loads(r.to_json())["summary"]
    assert (summary["fastest"], summary["reference"], summary["faster_beyond_noise"]) == ("eager", "eager", [])


def test_markdown_and_html_lead_with_the_same_words():
    r = _result(EAGER, AUTOTUNE)
    assert render_compare(r, "markdown").startswith(
        "**No mode is faster than eager beyond noise**: fastest steady state eager 2.000 ms")
    assert "No mode is faster than eager beyond noise" in render_compare(r, "html")


def test_a_column_faster_beyond_noise_heads_the_report_as_before():
    fast = [[1.6] * 6] * 10  # 1.25x in every round
    r = _result(EAGER, fast)
    assert render_compare(r).splitlines()[0].startswith(
        "Fastest steady state: max-autotune 1.600 ms (1.25x [1.25x-1.25x] over eager (significant)")
    summary = json.loads(r.to_json())["summary"]
    assert (summary["fastest"], summary["faster_beyond_noise"]) == ("max-autotune", ["max-autotune"])


def test_eager_ahead_of_every_column_beyond_noise_is_crowned_plainly():
    r = _result(EAGER, [[2.5] * 6] * 10)  # max-autotune 0.80x in every round
    assert render_compare(r).splitlines()[0] == "Fastest steady state: eager 2.000 ms"
    assert json.loads(r.to_json())["summary"]["faster_beyond_noise"] == []

