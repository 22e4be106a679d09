"""Two model files compared (``compare base.py head.py``, the merge gate) where a graph of the
head's breakdown was not measured (its profiling cut short): the gate says NOT COMPARABLE, and
so does every other place that judges that pair, the table's ``speedup vs base`` cell, the
headline and the JSON's ``summary.speedups``; they had given it a speedup with a verdict
(``1.00x [0.97x-1.03x] (within noise)``, or significant) that the gate refused. The pairs
within one model file keep theirs: the step times are whole. On the recorded compare of
``models/mlp.py`` (tests/fixtures/results/cpu_mlp_compare) with its columns under two names."""

from __future__ import annotations

import json

from inductor_bench.core.compare import summary
from inductor_bench.core.vocab import Outcome
from inductor_bench.render.compare import render_compare

from .test_compare import lost_backward, recorded_default, two_files

GAP = "graph 0-backward not measured in head (missing from the interrupted run)"


def cut_short(step_ms: float | None = None):
    head = {"breakdown": lost_backward(recorded_default()["breakdown"], "interrupted")}
    if step_ms is not None:  # head's default the fastest column: the headline's
        head["step_samples_ms"] = [step_ms * (1 + 0.001 * (i % 7)) for i in range(20)]
    return two_files(head)


def row(out: str, name: str) -> list[str]:
    line = next(ln for ln in out.splitlines() if ln.startswith(f"| {name}"))
    return [c.strip() for c in line.strip("|").split(" | ")]


def test_the_speedup_over_the_first_model_is_not_comparable_in_the_table() -> None:
    r = cut_short()
    out = render_compare(r, "markdown")
    labels = row(out, "")  # the header: the columns
    cells = dict(zip(labels, row(out, "speedup vs base"), strict=True))
    assert cells["head:default"] == f"not comparable: {GAP}"
    assert cells["head:eager"].endswith("(within noise)")  # eager has no breakdown: judged
    # within head's file, its default is judged against its eager: the step is whole
    assert dict(zip(labels, row(out, "speedup vs eager"), strict=True))["head:default"].endswith(")")
    assert "not comparable" not in " ".join(row(out, "speedup vs eager"))


def test_the_json_gives_the_pair_no_speedup_and_says_why() -> None:
    r = cut_short()
    pairs = {(s["column"], s["over"]): s for s in json.loads(json.dumps(summary(r)))["speedups"]}
    gap = pairs[("head:default", "base:default")]
    assert (gap["speedup"], gap["interval"], gap["verdict"]) == (None, None, Outcome.NOT_COMPARABLE)
    assert gap["not_comparable"] == GAP
    assert gap["change"]["head"]["n"] > 0  # the raw figures stay
    assert pairs[("head:default", "head:eager")]["speedup"] is not None


def test_the_headline_names_the_pair_not_comparable() -> None:
    r = cut_short(step_ms=1.0)
    headline = render_compare(r, "text").splitlines()[0]
    assert headline.startswith("Fastest steady state: head:default 1.003 ms (")
    assert f"not comparable with base: {GAP}" in headline
    assert "over base (" not in headline  # base:eager, the reference, is another mode: judged
