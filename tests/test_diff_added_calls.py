"""`diff`'s verdict line says when an extern op reads slower because the head calls it more
often: `models/mlp.py` against the same model with one more 512x512 Linear after `fc2`, whose
step calls `aten::addmm` once more in the forward and `aten::mm` twice more in the backward. The
line had read `aten::mm +0.4649 ms (slower)`, as if the GEMMs it had got slower; most of that is
the two new calls. A kernel called as often keeps its status alone (the golden diff of
`mlp_slow.py`: `aten::mm +3.544 ms (slower)`).

Recorded: `inductor-bench breakdown models/mlp.py --train --device cpu` and the same with the
extra Linear, back to back on a 2-core AMD EPYC shared machine, torch 2.13.0+cpu, 2026-12-07
(tests/fixtures/results/README.md)."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from inductor_bench import cli
from inductor_bench.core.diff import diff_results
from inductor_bench.core.rundir import load_any
from inductor_bench.render.diff import verdict_line
from inductor_bench.render.doc import TextDoc

from .conftest import FIXTURES

BASE = FIXTURES / "results" / "cpu_mlp_train_20261207"
HEAD = FIXTURES / "results" / "cpu_mlp_extra_linear_train"


def test_an_op_called_more_often_is_named_with_its_new_calls():
    d = diff_results(load_any(BASE), load_any(HEAD))
    line = verdict_line(d, TextDoc())
    assert "aten::mm +0.4649 ms (slower: #2, #3 in head only)" in line
    assert "aten::addmm +0.3002 ms (slower: #2 in head only)" in line
    (mm,) = [k for k in d.sections[0].kernels if k.name == "aten::mm"]
    assert mm.calls_one_side == "#2, #3 in head only"  # 5 calls a step in base, 7 in head
    assert [k.status for k in d.sections[0].kernels if k.name.startswith("aten::")] == ["slower", "slower"]


def _graph_shapes(run) -> dict[str, list[tuple[int, ...]]]:
    data = json.loads((run / "breakdown.json").read_text())
    return {g["id"]: [tuple(s) for s in g["input_shapes"]] for g in data["graphs"]}


def test_the_verdict_says_the_graphs_gained_the_new_layers_inputs_not_that_shapes_changed(capsys):
    """The extra Linear gives each graph two more inputs, every other input as it was: the
    forward its weight (512x512) and bias (512), the backward its weight and one more saved
    activation (64x512). The line had read 'shapes changed, not the same work: 0-forward's
    inputs', as if something had been resized."""
    base, head = _graph_shapes(BASE), _graph_shapes(HEAD)
    for g, more in (("0-forward", [(512, 512), (512,)]), ("0-backward", [(512, 512), (64, 512)])):
        assert Counter(head[g]) - Counter(base[g]) == Counter(more) and not Counter(base[g]) - Counter(head[g])
    work = ("not the same work: 0-forward: 2 inputs more in head (512x512, 512), "
            "0-backward: 2 inputs more in head (512x512, 64x512)")
    line = verdict_line(diff_results(load_any(BASE), load_any(HEAD)), TextDoc())
    assert line.endswith(f"(slower); {work}") and "shapes changed" not in line
    with pytest.raises(SystemExit) as e:
        cli.main(["diff", str(BASE), str(HEAD), "--fail-on-regression", "10"])
    assert e.value.code == 1
    assert capsys.readouterr().err.strip().endswith(f"{OF_THE_GRAPHS} ({work})")


OF_THE_GRAPHS = "of the graphs' own calls, not of the whole step (its time outside the graphs is not in it)"


def test_the_gates_line_says_its_percentage_is_of_the_all_graphs_row_with_the_rows_figures(capsys):
    """The gate judges the all-graphs row (the graphs' harness calls), and its line had read
    `default all graphs +71.9%`, as if the step had got 72% slower: timed on its own, the whole
    step of these two models went +44.7% (docs/compare-and-diff.md). It now gives the row's
    figures, as the table shows them, and says what its % is of."""
    code = _cli(["diff", str(BASE), str(HEAD), "--format", "json"])
    step = json.loads(capsys.readouterr().out)["sections"][0]["step"]
    base_ms, head_ms = step["base"]["ms"], step["head"]["ms"]
    assert code == 0 and round(base_ms, 3) == 1.162 and round(head_ms, 3) == 1.999
    change = f"{100 * (head_ms - base_ms) / base_ms:+.1f}%"
    assert change == "+71.9%"
    assert _cli(["diff", str(BASE), str(HEAD), "--fail-on-regression", "10"]) == 1
    captured = capsys.readouterr()
    row = next(ln for ln in captured.out.splitlines() if ln.startswith("all graphs, ms (their harness calls)"))
    _, base_cell, head_cell, change_cell, _ = re.split(r"\s{2,}", row.strip())
    assert (base_cell.split()[0], head_cell.split()[0], change_cell.split()[0]) == ("1.162", "1.999", change)
    assert captured.err.startswith(f"inductor-bench: error: significant regression above 10%: default: all graphs "
                                   f"1.162 -> 1.999 ms: {change} {OF_THE_GRAPHS} (not the same work: ")
    assert captured.out.startswith("REGRESSION above the 10% gate on the graphs' own calls, not the whole step: "
                                   f"default: all graphs 1.162 -> 1.999 ms ({change} [")


def _cli(args: list[str]) -> int:
    try:
        cli.main(args)
    except SystemExit as e:
        return int(e.code or 0)
    return 0
