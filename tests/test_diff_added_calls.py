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
