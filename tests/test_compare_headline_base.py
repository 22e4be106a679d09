"""With several model files, the headline's column is judged against the first model's column of
its mode too, where one only of them is the faster by a hair: ``compare mlp.py mlp.py slow.py
--names base,same,slow --modes default --no-eager`` beside busy cores headed its report
``Fastest steady state: same:default 13.409 ms`` (13.476 ms for base, the same code, 1.05x
within noise) with no word of base (hand-built results, synthetic rounds)."""

from __future__ import annotations

import json
from pathlib import Path

from inductor_bench.core.compare import CompareResult
from inductor_bench.render.compare import render_compare

RECORDED = Path(__file__).resolve().parent / "fixtures" / "results" / "cpu_mlp_compare" / "compare.json"


def _two(base_blocks, head_blocks) -> CompareResult:
    cmp = json.loads(RECORDED.read_text())
    default = next(m for m in cmp["modes"] if m["mode"] == "default")
    modes = [dict(default, model="base", paired_ms=base_blocks), dict(default, model="head", paired_ms=head_blocks)]
    cmp.update(models=["base", "head"], model="base vs head", modes=json.loads(json.dumps(modes)))
    return CompareResult.from_dict(cmp)


def _headline(r: CompareResult) -> str:
    return render_compare(r).splitlines()[0]


def test_the_headline_says_how_the_fastest_stands_against_the_base():
    # 10 rounds: head 1% faster in each (within noise), then 20% faster (significant)
    r = _two([[2.0] * 6] * 10, [[1.98] * 6] * 10)
    assert _headline(r) == ("No mode is faster than base:default beyond noise: fastest steady state "
                            "head:default 1.980 ms (1.01x [1.01x-1.01x] over base (within noise))")
    r = _two([[2.0] * 6] * 10, [[1.6] * 6] * 10)
    assert _headline(r) == "Fastest steady state: head:default 1.600 ms (1.25x [1.25x-1.25x] over base (significant))"


def test_a_fastest_base_names_nothing_against_itself():
    r = _two([[1.6] * 6] * 10, [[2.0] * 6] * 10)
    assert _headline(r) == "Fastest steady state: base:default 1.600 ms"
