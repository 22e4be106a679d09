"""A category's figure in `diff` counts the samples it is the mean of: those of the graphs that
have a kernel of that category, not every graph's.

``tests/fixtures/runs/cpu_mlp_train_stalled`` (``breakdown models/mlp.py --train --device cpu``
beside the stall disturber): its one C++ pointwise kernel is in 0-forward (23 of 39 iterations
steady, 16 left out); 0-backward (19 of 47 steady, 28 left out) has none. The diff's JSON said
the pointwise figure stood on 19 samples with 44 left out, the backward's count and both
graphs' left-out iterations added.
"""

from __future__ import annotations

import json

import pytest

from inductor_bench.cli import main

from .conftest import FIXTURES

RUN = FIXTURES / "runs" / "cpu_mlp_train_stalled"


def steady_and_left_out(graph: dict) -> tuple[int, int]:
    left = len(graph["left_out"])
    return len(graph["wall_samples_ms"]) - left, left


@pytest.fixture(scope="module")
def saved() -> dict:
    return json.loads((RUN / "breakdown.json").read_text())


def test_each_category_counts_the_samples_of_the_graphs_that_have_it(saved, capsys):
    main(["diff", str(RUN), str(RUN), "--format", "json"])
    categories = json.loads(capsys.readouterr().out)["sections"][0]["categories"]
    for c in categories:
        having = [g for g in saved["graphs"] if any(k["category"] == c["category"] for k in g["kernels"])]
        counts = [steady_and_left_out(g) for g in having]
        for side in ("base", "head"):
            assert c[side]["n"] == min(n for n, _ in counts), c["category"]
            assert c[side]["left_out"] == sum(left for _, left in counts), c["category"]
            assert c[side]["ms"] == pytest.approx(sum(k["ms"] for g in having for k in g["kernels"]
                                                      if k["category"] == c["category"]))
    pointwise = next(c for c in categories if c["category"] == "cpp_pointwise")
    assert (pointwise["base"]["n"], pointwise["base"]["left_out"]) == (23, 16)
    gemm = next(c for c in categories if c["category"] == "extern_gemm")
    assert (gemm["base"]["n"], gemm["base"]["left_out"]) == (19, 16 + 28)
