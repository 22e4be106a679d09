"""A tied embedding's weight-gradient GEMM names the modules of both its lines, on a recorded
training graph (tests/fixtures/attribution/README.md: Hugging Face GPT-2, ``lm_head`` tied to
``wte``). Without torch."""

from __future__ import annotations

import re

from inductor_bench.core.attribution import call_origins

from .conftest import FIXTURES
from .recorded_graph import recorded_graph

GPT2 = FIXTURES / "attribution" / "gpt2-tied-train-torch-2.13" / "0-backward"
HF = "transformers/models/gpt2/modeling_gpt2.py"


def test_the_tied_weights_gradient_addmm_names_the_modules_of_both_its_lines():
    """Recorded (torch 2.13.0, CPU, 2026-12-07): the backward's ``extern_kernels.addmm(buf82,
    tangents_1.T, view_40, out=buf84)`` adds lm_head's weight-gradient GEMM to the embedding's
    gradient (``buf82``), one node a pass made (``addmm_default``, Inductor's comment:
    ``aten.view, aten.t, aten.add``) with the embedding's line and no module. Its lines are
    ``wte``'s (569) and ``lm_head``'s (698); its modules read only ``m.lm_head``, so the view by
    module and the view by line told two stories of one call. Now each line's module is named."""
    text, record, _, calls = recorded_graph(GPT2)
    (i,) = [i for i, c in enumerate(calls) if c.extern and c.written == ["buf84"]]
    assert re.search(r"Original ATen: \[aten\.view, aten\.t, aten\.add\]\n\s+extern_kernels\.addmm\(buf82,", text)
    o = call_origins(calls, record)[0][i]
    assert [(ln.file.endswith(HF), ln.line) for ln in o.lines] == [(True, 569), (True, 698)]
    assert o.modules == ["m.lm_head", "m.transformer.wte"] and o.missing is None
    # independently: every other node of the record on each of its lines ran in one module
    on_line: dict[int, set[str]] = {}
    for rec in record["nodes"].values():
        if rec.get("module") and rec.get("frame") and rec["frame"][0].endswith(HF):
            on_line.setdefault(rec["frame"][1], set()).add(rec["module"][0].removeprefix("L['self']."))
    assert (on_line[569], on_line[698]) == ({"m.transformer.wte"}, {"m.lm_head"})
